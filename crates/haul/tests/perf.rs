//! `haul perf` on loopback: `--interval` sets the interval lines, `--omit` leaves the first
//! seconds out of the summary, a test too short for it fails with a clear error, and test
//! lengths no side can run are refused on both sides.

use std::net::UdpSocket;
use std::process::{Child, Command, Output, Stdio};
use std::thread::sleep;
use std::time::Duration;

const HAUL: &str = env!("CARGO_BIN_EXE_haul");

/// A port free for both UDP and TCP right now.
fn free_port() -> u16 {
    loop {
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = udp.local_addr().unwrap().port();
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// A one-off server on a free port, given time to listen, and its port. A port free when
/// picked may be taken before the server binds it (another test's client binds an ephemeral
/// UDP port meanwhile): a server that exits before it listens is started again on another.
fn server() -> (u16, Child) {
    for _ in 0..10 {
        let port = free_port();
        let mut child = Command::new(HAUL)
            .args([
                "perf",
                "--server",
                "--one-off",
                "--json",
                "--bind",
                "127.0.0.1",
            ])
            .args(["--port", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Until it listens (a fixed wait of 300 ms was too short on a loaded machine). Read
        // from /proc: a probing connection would be the one-off server's one client.
        for _ in 0..500 {
            if listening(port) {
                return (port, child);
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            sleep(Duration::from_millis(10));
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().ok();
            child.wait().ok();
            panic!("haul perf --server did not listen on port {port} within 5 s");
        }
    }
    panic!("haul perf --server exited before listening on ten free ports in a row");
}

/// Whether a TCP socket listens on 127.0.0.1:`port` (from /proc/net/tcp).
fn listening(port: u16) -> bool {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let local = format!("0100007F:{port:04X}");
    table.lines().skip(1).any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        fields.get(1) == Some(&local.as_str()) && fields.get(3) == Some(&"0A")
    })
}

fn client(port: u16, args: &[&str]) -> Output {
    Command::new(HAUL)
        .args(["perf", "--client", &format!("127.0.0.1:{port}")])
        .args(args)
        .output()
        .unwrap()
}

/// A whole test against a one-off server with `--json` and `args`, which must succeed: the
/// client's summary.
fn json_test(args: &[&str]) -> serde_json::Value {
    let (port, mut one_off) = server();
    let out = client(port, &[&["--json"], args].concat());
    one_off.wait().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn intervals_are_as_long_as_asked_and_omitted_ones_stay_out_of_the_summary() {
    let v = json_test(&[
        "--time",
        "1",
        "--omit",
        "1",
        "--interval",
        "0.5",
        "--rate",
        "200M",
    ]);
    assert_eq!(v["omit_seconds"], 1);
    let intervals = v["intervals"].as_array().unwrap();
    // Half-second intervals: the first two are the omitted second.
    let length = |i: &serde_json::Value| i["end"].as_f64().unwrap() - i["start"].as_f64().unwrap();
    assert!((0.45..0.6).contains(&length(&intervals[0])), "{v}");
    assert_eq!(intervals[0]["omitted"], true, "{v}");
    assert_eq!(intervals[1]["omitted"], true, "{v}");
    assert!(intervals[2..].iter().all(|i| i["omitted"] == false), "{v}");
    // The client sent: its summary is exactly the bytes of the intervals not omitted.
    let counted: u64 = intervals[2..]
        .iter()
        .map(|i| i["bytes"].as_u64().unwrap())
        .sum();
    let omitted = intervals[0]["bytes"].as_u64().unwrap() + intervals[1]["bytes"].as_u64().unwrap();
    assert!(omitted > 0, "{v}");
    assert_eq!(v["sender"]["bytes"].as_u64().unwrap(), counted, "{v}");
    // The test ran for the omitted second and the measured one; the summary spans the second.
    let seconds = v["sender"]["seconds"].as_f64().unwrap();
    assert!((0.9..1.9).contains(&seconds), "{seconds}");
    assert!(
        intervals.last().unwrap()["end"].as_f64().unwrap() > 1.9,
        "{v}"
    );
}

#[test]
fn a_timed_test_s_receiver_measures_the_test_s_seconds_after_the_omitted_ones() {
    let v = json_test(&[
        "--time",
        "2",
        "--omit",
        "1",
        "--interval",
        "0.1",
        "--rate",
        "100M",
    ]);
    // Not up to the last byte: from the first interval boundary after the omitted second to the
    // first after the two measured ones (the test's interval ticks, a tenth of a second apart).
    let seconds = v["receiver"]["seconds"].as_f64().unwrap();
    assert!((1.95..2.15).contains(&seconds), "{v}");
    let rate = v["bits_per_second"].as_f64().unwrap();
    assert!(rate > 50e6 && rate <= 100e6, "{v}");
    // The client times its data connection's handshake (a loopback round trip or two).
    let connect = v["connect_seconds"].as_f64().unwrap();
    assert!(connect > 0.0 && connect < 1.0, "{v}");
}

#[test]
fn a_test_that_ends_within_the_omitted_seconds_says_so() {
    let (port, mut server) = server();
    let out = client(port, &["--bytes", "1M", "--omit", "5"]);
    server.wait().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--omit"), "{stderr}");
}

#[test]
fn an_interval_below_a_tenth_of_a_second_is_refused() {
    let out = client(9, &["--interval", "0.01"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("0.1"), "{stderr}");
}

#[test]
fn a_test_length_no_side_runs_is_refused_before_connecting() {
    for time in ["0", "-3", "NaN", "1e30"] {
        // Nothing listens on port 9: the check comes first.
        let out = client(9, &[&format!("--time={time}")]);
        assert_eq!(out.status.code(), Some(1), "--time {time}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--time"), "--time {time}: {stderr}");
        assert!(!stderr.contains("panicked"), "--time {time}: {stderr}");
    }
}

#[test]
fn a_server_refuses_a_test_it_cannot_run_and_says_why() {
    use std::io::{BufRead, BufReader, Write};
    let (port, mut server) = server();
    // What a client that skipped its own check (or a forged one) would send.
    let mut control = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let params = r#"{"version":1,"transport":"haul","reverse":true,"parallel":1,"bytes":null,"seconds":1e300,"rate":null,"tcp_cc":null,"window":null,"mss":1500,"omit":0}"#;
    writeln!(control, "{params}").unwrap();
    let mut answer = String::new();
    BufReader::new(&control).read_line(&mut answer).unwrap();
    assert!(answer.contains("at most 86400"), "{answer}");
    // It logs the refusal and goes on to the next client (a one-off server ends), unharmed.
    assert_eq!(server.wait().unwrap().code(), Some(0));
}

/// The bytes each connection delivered, from a summary's receiver report.
fn receiver_streams(summary: &serde_json::Value) -> Vec<u64> {
    summary["receiver"]["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap())
        .collect()
}

#[test]
fn parallel_connections_are_reported_each_with_their_fairness() {
    // A fixed rate per connection, so that each connection's share is known: equal.
    let v = json_test(&["--time", "1", "--parallel", "3", "--rate", "100M"]);
    let receiver = &v["receiver"];
    let streams = receiver_streams(&v);
    assert_eq!(streams.len(), 3, "{v}");
    assert_eq!(
        streams.iter().sum::<u64>(),
        receiver["bytes"].as_u64().unwrap(),
        "{v}"
    );
    let jain = v["jain_index"].as_f64().unwrap();
    assert!((0.95..=1.0).contains(&jain), "{v}");
    // The sender's view too, and a single connection has no index.
    assert_eq!(v["sender"]["streams"].as_array().unwrap().len(), 3, "{v}");
    let single = json_test(&["--time", "0.5"]);
    assert!(single["jain_index"].is_null(), "{single}");
}

#[test]
fn staggered_connections_start_one_after_another_and_stop_together() {
    // Fixed rates, so that what each connection moved tells how long it sent: 1.5, 1 and 0.5 s.
    let v = json_test(&[
        "--time",
        "1.5",
        "--parallel",
        "3",
        "--stagger",
        "0.5",
        "--rate",
        "100M",
    ]);
    let streams = receiver_streams(&v);
    assert_eq!(streams.len(), 3, "{v}");
    let [first, second, third] = [0, 1, 2].map(|i| streams[i] as f64);
    assert!(first > second && second > third && third > 0.0, "{v}");
    // Ideally 2/3 and 1/3. Each connection writes 1 MiB at a time into a send buffer that
    // drains after its deadline, and on two cores busy with the other tests the first one
    // fell behind: 18, 14 and 9 MiB, the third half the first. Starting together would read
    // near 1, and starting a quarter of a second apart 0.83 and 0.67.
    assert!((0.5..0.85).contains(&(second / first)), "{v}");
    assert!((0.15..0.6).contains(&(third / first)), "{v}");
}

#[test]
fn a_stagger_that_starts_a_connection_after_the_test_is_refused() {
    // Nothing listens on port 9: the check comes first.
    let out = client(9, &["--time", "1", "--parallel", "3", "--stagger", "0.5s"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--stagger"), "{stderr}");
}
