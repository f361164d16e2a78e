//! Human units: parsing sizes, rates, durations and fractions; printing rates.

use std::time::Duration;

/// Parses `50ms`, `1.5s`, `200us`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, unit) = t.split_at(t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len()));
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (try 50ms)"))?;
    let secs = match unit {
        "s" | "" => v,
        "ms" => v / 1e3,
        "us" | "µs" => v / 1e6,
        other => return Err(format!("unknown duration unit `{other}` (use s, ms, us)")),
    };
    if !(0.0..=3600.0).contains(&secs) {
        return Err(format!("duration `{s}` out of range"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses `1%` or `0.01`.
pub fn parse_fraction(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("`{s}` is not a loss rate (try 1% or 0.01)"))?;
    if !(0.0..=1.0).contains(&v) {
        return Err(format!("loss `{s}` must be between 0 and 100%"));
    }
    Ok(v)
}

/// Parses a byte count like `100M`, `2GiB`, `512k`, `1000` (K/M/G/T are powers of 1024).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{s}` is not a size (try 100M or 2G)"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => {
            return Err(format!(
                "unknown size unit `{other}` in `{s}` (use K, M, G or T)"
            ))
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("`{s}` is too large"))
}

/// Parses a rate in bits per second like `500M`, `2.5G`, `100k`, `1000000` (powers of 1000;
/// a trailing `bit`, `bps` or `bit/s` is allowed).
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let lower = s.trim().to_ascii_lowercase();
    let t = lower
        .trim_end_matches("bit/s")
        .trim_end_matches("bps")
        .trim_end_matches("bit");
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a rate (try 500M or 2G, in bits per second)"))?;
    let mult = match unit.trim() {
        "" => 1e0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        "t" => 1e12,
        other => {
            return Err(format!(
                "unknown rate unit `{other}` in `{s}` (use k, M, G)"
            ))
        }
    };
    let bps = n * mult;
    if !(1.0..=1e15).contains(&bps) {
        return Err(format!("rate `{s}` is out of range"));
    }
    Ok(bps as u64)
}

/// Formats bits per second as `123.4 Mbit/s`.
pub fn rate(bits_per_second: f64) -> String {
    let (v, unit) = if bits_per_second >= 1e9 {
        (bits_per_second / 1e9, "Gbit/s")
    } else if bits_per_second >= 1e6 {
        (bits_per_second / 1e6, "Mbit/s")
    } else {
        (bits_per_second / 1e3, "kbit/s")
    };
    format!("{v:.1} {unit}")
}

/// Formats a byte count as `1.5 GiB`.
pub fn bytes(n: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", units[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_fractions() {
        assert_eq!(parse_duration("50ms"), Ok(Duration::from_millis(50)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("fast").is_err());
        assert_eq!(parse_fraction("1%"), Ok(0.01));
        assert_eq!(parse_fraction("0.05"), Ok(0.05));
        assert!(parse_fraction("150%").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("100M"), Ok(100 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("512"), Ok(512));
        assert!(parse_size("12X").is_err());
        assert!(parse_size("M").is_err());
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("500M"), Ok(500_000_000));
        assert_eq!(parse_rate("2.5G"), Ok(2_500_000_000));
        assert_eq!(parse_rate("1gbit"), Ok(1_000_000_000));
        assert_eq!(parse_rate("100kbps"), Ok(100_000));
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("0").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(rate(1.5e9), "1.5 Gbit/s");
        assert_eq!(bytes(1536), "1.5 KiB");
    }
}
