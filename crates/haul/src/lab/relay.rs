//! A user-space UDP relay that emulates a link: per-direction delay, random loss, rate.

use crate::units;
use anyhow::{Context, Result};
use clap::Args;
use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct RelayArgs {
    /// Address clients send to.
    #[arg(long, value_name = "ADDR:PORT")]
    listen: SocketAddr,
    /// Address the datagrams are relayed to.
    #[arg(long, value_name = "ADDR:PORT")]
    to: SocketAddr,
    /// Round-trip time added (half each way), e.g. 50ms.
    #[arg(long, default_value = "0ms", value_parser = units::parse_duration)]
    rtt: Duration,
    /// Random loss per direction, e.g. 1% or 0.01.
    #[arg(long, default_value = "0", value_parser = units::parse_fraction)]
    loss: f64,
    /// Rate per direction in bits per second (e.g. 500M); unlimited if absent.
    #[arg(long, value_parser = units::parse_rate)]
    rate: Option<u64>,
    /// Queue per direction in bytes (drop-tail, with --rate); default one BDP, at least 64 KiB.
    #[arg(long, value_parser = units::parse_size)]
    queue: Option<u64>,
    /// Seed for the loss process.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stop after this long (default: run until killed).
    #[arg(long, value_parser = units::parse_duration)]
    duration: Option<Duration>,
}

/// One direction: a delay line behind a paced, drop-tail bottleneck.
struct Direction {
    queue: VecDeque<(Instant, Vec<u8>)>,
    busy_until: Instant,
    rate: Option<u64>,
    queue_limit: u64,
    delay: Duration,
    loss: f64,
    passed: u64,
    lost: u64,
    overflow: u64,
    bytes: u64,
}

impl Direction {
    fn offer(&mut self, now: Instant, data: &[u8], rng: &mut XorShift) {
        if rng.chance(self.loss) {
            self.lost += 1;
            return;
        }
        let mut depart = now;
        if let Some(rate) = self.rate {
            let backlog = self.busy_until.saturating_duration_since(now);
            if (backlog.as_secs_f64() * rate as f64 / 8.0) as u64 + data.len() as u64
                > self.queue_limit
            {
                self.overflow += 1;
                return;
            }
            let wire = Duration::from_secs_f64((data.len() + 28) as f64 * 8.0 / rate as f64);
            self.busy_until = self.busy_until.max(now) + wire;
            depart = self.busy_until;
        }
        self.queue.push_back((depart + self.delay, data.to_vec()));
    }

    fn next_due(&self) -> Option<Instant> {
        self.queue.front().map(|(t, _)| *t)
    }
}

/// A small, fast, seedable generator for the loss process.
struct XorShift(u64);

impl XorShift {
    fn chance(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

pub fn run(a: RelayArgs) -> Result<ExitCode> {
    let front = UdpSocket::bind(a.listen).with_context(|| format!("cannot bind {}", a.listen))?;
    let back_addr: SocketAddr = if a.to.is_ipv6() {
        "[::]:0"
    } else {
        "0.0.0.0:0"
    }
    .parse()?;
    let back = UdpSocket::bind(back_addr).context("cannot bind the relay's outgoing socket")?;
    for s in [&front, &back] {
        s.set_nonblocking(true)?;
    }
    let now = Instant::now();
    let bdp = a
        .rate
        .map_or(0, |r| (r as f64 / 8.0 * a.rtt.as_secs_f64()) as u64);
    let new_dir = || Direction {
        queue: VecDeque::new(),
        busy_until: now,
        rate: a.rate,
        queue_limit: a.queue.unwrap_or(bdp.max(64 << 10)),
        delay: a.rtt / 2,
        loss: a.loss,
        passed: 0,
        lost: 0,
        overflow: 0,
        bytes: 0,
    };
    let (mut up, mut down) = (new_dir(), new_dir());
    let mut rng = XorShift(a.seed.max(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut client: Option<SocketAddr> = None;
    let mut buf = vec![0u8; 65_536];
    let stop = a.duration.map(|d| now + d);
    eprintln!(
        "haul lab relay: {} → {} rtt {:?} loss {:.2}% rate {}",
        a.listen,
        a.to,
        a.rtt,
        a.loss * 100.0,
        a.rate.map_or("unlimited".into(), |r| units::rate(r as f64))
    );
    loop {
        let now = Instant::now();
        if stop.is_some_and(|s| now >= s) {
            break;
        }
        let mut idle = true;
        for _ in 0..256 {
            match front.recv_from(&mut buf) {
                Ok((n, from)) => {
                    client = Some(from);
                    up.offer(now, &buf[..n], &mut rng);
                    idle = false;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => break,
            }
        }
        for _ in 0..256 {
            match back.recv_from(&mut buf) {
                Ok((n, from)) if from == a.to => {
                    down.offer(now, &buf[..n], &mut rng);
                    idle = false;
                }
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => break,
            }
        }
        let now = Instant::now();
        while up.next_due().is_some_and(|t| t <= now) {
            let (_, d) = up.queue.pop_front().expect("due packet");
            up.passed += 1;
            up.bytes += d.len() as u64;
            let _ = back.send_to(&d, a.to);
        }
        if let Some(c) = client {
            while down.next_due().is_some_and(|t| t <= now) {
                let (_, d) = down.queue.pop_front().expect("due packet");
                down.passed += 1;
                down.bytes += d.len() as u64;
                let _ = front.send_to(&d, c);
            }
        }
        if idle {
            let next = [up.next_due(), down.next_due()].into_iter().flatten().min();
            let wait = next.map_or(Duration::from_micros(200), |t| {
                t.saturating_duration_since(now)
            });
            std::thread::sleep(wait.min(Duration::from_micros(200)));
        }
    }
    for (name, d) in [("forward", &up), ("return", &down)] {
        eprintln!(
            "haul lab relay: {name}: {} packets ({}) passed, {} lost at random, {} dropped by the queue",
            d.passed,
            units::bytes(d.bytes),
            d.lost,
            d.overflow
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_process_matches_its_setting() {
        let mut rng = XorShift(12345);
        let lost = (0..100_000).filter(|_| rng.chance(0.01)).count();
        assert!((800..1200).contains(&lost), "{lost}");
    }
}
