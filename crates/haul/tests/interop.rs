//! Interoperability with the UDT4 reference library (Debian's libudt 4.11), both ways.
//!
//! The peer (`interop/udt_peer.cpp`) is built here with g++ against `<udt/udt.h>`. Without
//! libudt-dev and g++ these tests print why and pass, unless HAUL_REQUIRE_INTEROP=1 (CI sets it,
//! and installs both), which turns the skip into a failure.

use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

const HAUL: &str = env!("CARGO_BIN_EXE_haul");

/// The compiled reference peer, or `None` (with the reason printed) when it cannot be built.
fn peer() -> Option<&'static Path> {
    static PEER: OnceLock<Option<PathBuf>> = OnceLock::new();
    let built = PEER.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop/udt_peer.cpp");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("udt_peer");
        let status = Command::new("g++")
            .args(["-O2", "-std=c++17", "-o"])
            .arg(&out)
            .arg(&src)
            .args(["-ludt", "-lpthread"])
            .status();
        match status {
            Ok(s) if s.success() => Some(out),
            other => {
                let why =
                    format!("cannot build the UDT4 peer ({other:?}): install g++ and libudt-dev");
                assert!(std::env::var("HAUL_REQUIRE_INTEROP").is_err(), "{why}");
                eprintln!("skipping interop tests: {why}");
                None
            }
        }
    });
    built.as_deref()
}

fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn sha256(path: &Path) -> String {
    let mut f = std::fs::File::open(path).unwrap();
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    format!("{:x}", h.finalize())
}

/// A file of `len` deterministic pseudo-random bytes.
fn data_file(dir: &Path, name: &str, len: usize, seed: u64) -> PathBuf {
    let path = dir.join(name);
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut bytes = vec![0u8; len];
    for chunk in bytes.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
    std::fs::write(&path, bytes).unwrap();
    path
}

fn tempdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("interop-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Starts a reference server and waits for its "ready" line.
fn start_peer(args: &[String]) -> Child {
    let mut child = Command::new(peer().unwrap())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready", "reference peer did not start");
    child
}

/// Waits for `child` to succeed; kills it and fails after three minutes (every transfer here takes
/// seconds: a hang is a failure, not a CI timeout).
fn wait_ok(mut child: Child, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} still running after 180 s: killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{what} failed: {status}");
}

/// A `haul lab relay` with 50 ms RTT and 1 % loss in front of `to_port`; returns its port.
fn lossy_relay(to_port: u16, seed: u32) -> (Child, u16) {
    let port = free_port();
    let relay = Command::new(HAUL)
        .args([
            "lab",
            "relay",
            "--rtt",
            "50ms",
            "--loss",
            "1%",
            "--duration",
            "120s",
        ])
        .args(["--seed", &seed.to_string()])
        .arg("--listen")
        .arg(format!("127.0.0.1:{port}"))
        .arg("--to")
        .arg(format!("127.0.0.1:{to_port}"))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    (relay, port)
}

/// The reference serves `len` bytes with sendfile2; `haul nc` receives them through `via`.
fn reference_to_haul(name: &str, len: usize, relay: bool) {
    if peer().is_none() {
        return;
    }
    let dir = tempdir(name);
    let src = data_file(&dir, "src", len, 1);
    let port = free_port();
    let server = start_peer(&[
        "serve-file".into(),
        port.to_string(),
        src.display().to_string(),
    ]);
    let (relay_proc, target) = if relay {
        let (r, p) = lossy_relay(port, 3);
        (Some(r), p)
    } else {
        (None, port)
    };
    let out = dir.join("out");
    let status = Command::new(HAUL)
        .args(["nc", "--mode", "recv", &format!("127.0.0.1:{target}")])
        .stdout(std::fs::File::create(&out).unwrap())
        .status()
        .unwrap();
    wait_ok(server, "reference sendfile2 server");
    if let Some(mut r) = relay_proc {
        let _ = r.kill();
    }
    // Through a lossy link the reference's single shutdown packet may be lost; then haul nc
    // reports the silent peer after its idle timeout, with every byte already written.
    assert!(status.success() || relay, "haul nc failed: {status}");
    assert_eq!(sha256(&out), sha256(&src), "received file differs");
    let _ = std::fs::remove_dir_all(dir);
}

/// `haul nc` serves `len` bytes; the reference fetches them with recvfile2.
fn haul_to_reference(name: &str, len: usize, relay: bool) {
    if peer().is_none() {
        return;
    }
    let dir = tempdir(name);
    let src = data_file(&dir, "src", len, 2);
    let port = free_port();
    let server = Command::new(HAUL)
        .args([
            "nc",
            "--listen",
            "--mode",
            "send",
            &format!("127.0.0.1:{port}"),
        ])
        .stdin(std::fs::File::open(&src).unwrap())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let (relay_proc, target) = if relay {
        let (r, p) = lossy_relay(port, 4);
        (Some(r), p)
    } else {
        (None, port)
    };
    let out = dir.join("out");
    let fetch = Command::new(peer().unwrap())
        .args(["fetch-file", "127.0.0.1", &target.to_string()])
        .arg(&out)
        .arg(len.to_string())
        .status()
        .unwrap();
    assert!(fetch.success(), "reference recvfile2 failed: {fetch}");
    assert_eq!(sha256(&out), sha256(&src), "fetched file differs");
    let server = server.wait_with_output().unwrap();
    if let Some(mut r) = relay_proc {
        let _ = r.kill();
    }
    // The reference sends the ACK of the last bytes once, and sometimes just after its
    // shutdown (haul waits for it a moment). Through a lossy link that ACK may be lost, and
    // then haul nc cannot confirm the delivery and says so (seen in about one run of fifteen).
    // Any other failure is one.
    let stderr = String::from_utf8_lossy(&server.stderr);
    let unconfirmed = stderr.contains("closed by the peer before it acknowledged");
    assert!(
        server.status.success() || (relay && unconfirmed),
        "haul nc failed: {}: {stderr}",
        server.status
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn reference_sendfile_to_haul_200_mb() {
    reference_to_haul("sendfile", 200 << 20, false);
}

#[test]
fn haul_to_reference_recvfile_200_mb() {
    haul_to_reference("recvfile", 200 << 20, false);
}

#[test]
fn reference_to_haul_through_50ms_1pct_loss() {
    reference_to_haul("sendfile-lossy", 4 << 20, true);
}

#[test]
fn haul_to_reference_through_50ms_1pct_loss() {
    haul_to_reference("recvfile-lossy", 4 << 20, true);
}

/// Runs `haul nc --mode duplex` against a reference peer streaming both ways at once.
fn duplex(
    name: &str,
    reference_args: impl FnOnce(&Path, &Path, usize) -> (Vec<String>, Vec<String>),
) {
    if peer().is_none() {
        return;
    }
    let dir = tempdir(name);
    let len = 20 << 20;
    let ref_src = data_file(&dir, "ref-src", len, 5);
    let haul_src = data_file(&dir, "haul-src", len, 6);
    let ref_out = dir.join("ref-out");
    let haul_out = dir.join("haul-out");
    let (peer_args, haul_args) = reference_args(&ref_src, &ref_out, len);
    let reference = start_peer(&peer_args);
    let status = Command::new(HAUL)
        .args(["nc", "--mode", "duplex"])
        .args(&haul_args)
        .stdin(std::fs::File::open(&haul_src).unwrap())
        .stdout(std::fs::File::create(&haul_out).unwrap())
        .status()
        .unwrap();
    wait_ok(reference, "reference stream peer");
    assert!(status.success(), "haul nc failed: {status}");
    assert_eq!(
        sha256(&ref_out),
        sha256(&haul_src),
        "reference received different bytes"
    );
    assert_eq!(
        sha256(&haul_out),
        sha256(&ref_src),
        "haul received different bytes"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn stream_both_ways_at_once() {
    duplex("duplex", |src, out, len| {
        let port = free_port();
        let peer = vec![
            "serve-stream".into(),
            port.to_string(),
            src.display().to_string(),
            out.display().to_string(),
            len.to_string(),
        ];
        (peer, vec![format!("127.0.0.1:{port}")])
    });
}

#[test]
fn rendezvous_with_the_reference() {
    duplex("rendezvous", |src, out, len| {
        let (theirs, ours) = (free_port(), free_port());
        let peer = vec![
            "rendezvous".into(),
            theirs.to_string(),
            "127.0.0.1".into(),
            ours.to_string(),
            src.display().to_string(),
            out.display().to_string(),
            len.to_string(),
        ];
        let haul = vec![
            "--rendezvous".into(),
            "--local-port".into(),
            ours.to_string(),
            format!("127.0.0.1:{theirs}"),
        ];
        (peer, haul)
    });
}

#[test]
fn message_mode_echo() {
    use haul_net::{ConnectionConfig, Endpoint, NetConfig, SocketType};
    if peer().is_none() {
        return;
    }
    let port = free_port();
    let reference = start_peer(&["serve-echo-msg".into(), port.to_string()]);
    let config = NetConfig {
        connection: ConnectionConfig {
            socket_type: SocketType::Datagram,
            ..ConnectionConfig::default()
        },
        ..NetConfig::default()
    };
    let endpoint = Endpoint::bind("127.0.0.1:0".parse().unwrap(), config).unwrap();
    let mut stream = endpoint
        .connect(format!("127.0.0.1:{port}").parse().unwrap())
        .unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20)));
    let message = |i: usize| -> Vec<u8> {
        let len = 1 + (i * 7919) % 20_000;
        (0..len).map(|j| (i + j) as u8).collect()
    };
    let mut buf = vec![0u8; 1 << 16];
    for i in 0..300 {
        stream.send_msg(&message(i), None, true).unwrap();
        let n = stream.recv_msg(&mut buf).unwrap();
        assert!(
            buf[..n] == message(i)[..],
            "echo of message {i} differs ({n} bytes)"
        );
    }
    stream.finish().unwrap();
    wait_ok(reference, "reference echo peer");
}

#[test]
fn haul_nc_pipes_to_itself() {
    // Not interop: the two ends of `haul nc` together, as a user would pipe tar through them.
    let dir = tempdir("self");
    let src = data_file(&dir, "src", 8 << 20, 7);
    let out = dir.join("out");
    let port = free_port();
    let receiver = Command::new(HAUL)
        .args(["nc", "--listen", &port.to_string()])
        .stdout(std::fs::File::create(&out).unwrap())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let mut sender = Command::new(HAUL)
        .args(["nc", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    sender
        .stdin
        .take()
        .unwrap()
        .write_all(&std::fs::read(&src).unwrap())
        .unwrap();
    wait_ok(sender, "haul nc sender");
    wait_ok(receiver, "haul nc receiver");
    assert_eq!(sha256(&out), sha256(&src));
    let _ = std::fs::remove_dir_all(dir);
}
