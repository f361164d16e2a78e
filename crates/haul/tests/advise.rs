//! `haul advise` as a user runs it: JSON with a given RTT, an RTT timed against a listening
//! port, and a clear error without either.

use std::net::TcpListener;
use std::process::Command;

const HAUL: &str = env!("CARGO_BIN_EXE_haul");

fn advise(args: &[&str]) -> std::process::Output {
    Command::new(HAUL)
        .arg("advise")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn advice_for_a_long_lossy_path_is_haul_with_the_numbers_behind_it() {
    let out = advise(&["--rate", "1G", "--rtt", "100ms", "--loss", "1%", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let a: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(a["bdp_bytes"], 12_500_000);
    assert_eq!(a["buffer_needed_bytes"], 25_000_000);
    let cubic = a["cubic_expected_bps"].as_f64().unwrap();
    let haul = a["haul_expected_bps"].as_f64().unwrap();
    assert!(cubic < 5e6 && haul > 8e8, "{a}");
    assert!(
        a["verdict"].as_str().unwrap().starts_with("use haul"),
        "{a}"
    );

    let text = advise(&["--rate", "1G", "--rtt", "100ms", "--loss", "1%"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("bandwidth-delay product: 11.9 MiB"), "{text}");
    assert!(text.contains("verdict: use haul"), "{text}");
}

#[test]
fn the_rtt_is_timed_against_a_listening_port() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let out = advise(&["127.0.0.1", "--port", &port, "--rate", "10G", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let a: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(a["rtt_measured_to"], format!("127.0.0.1:{port}"));
    let rtt = a["path"]["rtt_ms"].as_f64().unwrap();
    assert!(rtt > 0.0 && rtt < 1000.0, "{rtt}");
}

#[test]
fn without_an_rtt_or_a_host_it_says_what_to_give() {
    let out = advise(&["--rate", "1G"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--rtt 100ms"), "{stderr}");
    // Paths no model can describe are refused, not answered with infinities.
    for (flag, args) in [
        ("--rtt", ["--rtt", "0ms", "--loss", "1%"]),
        ("--loss", ["--rtt", "10ms", "--loss", "100%"]),
    ] {
        let out = advise(&[&["--rate", "1G"][..], &args].concat());
        assert_eq!(out.status.code(), Some(1), "{flag}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(flag));
    }
}
