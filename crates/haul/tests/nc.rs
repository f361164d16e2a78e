//! `haul nc` with a pre-shared key: the bytes arrive, and a peer with another key or none is
//! refused with a clear error.

use std::io::{Read, Write};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const HAUL: &str = env!("CARGO_BIN_EXE_haul");

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("haul-nc-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn keygen(path: &Path) {
    let status = Command::new(HAUL).arg("keygen").arg(path).status().unwrap();
    assert!(status.success());
}

/// A listener on a free loopback port, its stdout captured.
fn listen(key: &Path) -> (Child, String) {
    let port = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(HAUL)
        .args(["nc", "-l", &format!("127.0.0.1:{port}"), "--key-file"])
        .arg(key)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Let it bind before anyone connects.
    std::thread::sleep(Duration::from_millis(300));
    (child, format!("127.0.0.1:{port}"))
}

/// `haul nc ADDR [--key-file KEY]` with `data` on stdin.
fn send(addr: &str, key: Option<&Path>, data: &[u8]) -> Output {
    let mut cmd = Command::new(HAUL);
    cmd.args(["nc", addr]);
    if let Some(key) = key {
        cmd.arg("--key-file").arg(key);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Ignore a broken pipe: a refused client may exit before reading it all.
    let _ = stdin.write_all(data);
    drop(stdin);
    child.wait_with_output().unwrap()
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn an_encrypted_transfer_arrives_whole_and_other_keys_are_refused() {
    let dir = scratch("keys");
    let (key, other) = (dir.join("key"), dir.join("other"));
    keygen(&key);
    keygen(&other);
    let data: Vec<u8> = (0..5_000_000u32).map(|i| (i * 31 / 7) as u8).collect();

    let (mut listener, addr) = listen(&key);
    let out = send(&addr, Some(&key), &data);
    assert!(out.status.success(), "{out:?}");
    let mut received = Vec::new();
    listener
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut received)
        .unwrap();
    assert!(listener.wait().unwrap().success());
    assert!(
        received == data,
        "{} of {} bytes",
        received.len(),
        data.len()
    );

    let (listener, addr) = listen(&key);
    let started = Instant::now();
    let out = send(&addr, Some(&other), b"secret");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("different key"), "{stderr}");
    assert!(stderr.contains("same --key-file"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(15));
    // Without a key the client speaks udt4, which an encrypted listener does not answer in kind.
    let out = send(&addr, None, b"secret");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--key-file"), "{stderr}");
    stop(listener);
    std::fs::remove_dir_all(dir).unwrap();
}
