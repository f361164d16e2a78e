//! Real UDP on loopback: byte-exact streams with and without GSO/GRO, many connections on one
//! port, and a clean error when nobody listens.

use haul_net::{CloseReason, Endpoint, NetConfig, NetError, Offloads};
use std::io::{Read, Write};
use std::thread;
use std::time::Duration;

/// Deterministic test data: a cheap generator, different per stream.
fn fill(buf: &mut [u8], stream: u64, offset: u64) {
    for (i, b) in buf.iter_mut().enumerate() {
        let x = (offset + i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ stream;
        *b = (x >> 29) as u8;
    }
}

/// Sends `total` bytes over a fresh connection and returns (sent hash, received hash).
fn round_trip(
    server: &Endpoint,
    client: &Endpoint,
    total: u64,
    stream: u64,
) -> (blake3::Hash, blake3::Hash) {
    let addr = server.local_addr();
    let sender = {
        let mut out = client.connect(addr).expect("connect");
        thread::spawn(move || {
            let mut hasher = blake3::Hasher::new();
            let mut chunk = vec![0u8; 256 << 10];
            let mut sent = 0u64;
            while sent < total {
                let n = chunk.len().min((total - sent) as usize);
                fill(&mut chunk[..n], stream, sent);
                hasher.update(&chunk[..n]);
                out.write_all(&chunk[..n]).unwrap();
                sent += n as u64;
            }
            out.finish().unwrap();
            hasher.finalize()
        })
    };
    let mut incoming = server.accept().unwrap();
    incoming.set_read_timeout(Some(Duration::from_secs(30)));
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut got = 0u64;
    loop {
        let n = incoming.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        got += n as u64;
    }
    assert_eq!(got, total);
    (sender.join().unwrap(), hasher.finalize())
}

fn pair(offloads: Offloads) -> (Endpoint, Endpoint) {
    let server = Endpoint::bind(
        "127.0.0.1:0".parse().unwrap(),
        NetConfig {
            offloads,
            ..NetConfig::listener()
        },
    )
    .unwrap();
    let client = Endpoint::bind(
        "127.0.0.1:0".parse().unwrap(),
        NetConfig {
            offloads,
            ..NetConfig::default()
        },
    )
    .unwrap();
    (server, client)
}

#[test]
fn stream_is_byte_exact_with_gso_and_gro() {
    let (server, client) = pair(Offloads {
        gso: true,
        gro: true,
    });
    let (sent, received) = round_trip(&server, &client, 64 << 20, 1);
    assert_eq!(sent, received);
}

#[test]
fn stream_is_byte_exact_with_offloads_forced_off() {
    let (server, client) = pair(Offloads {
        gso: false,
        gro: false,
    });
    assert_eq!(
        client.offloads(),
        Offloads {
            gso: false,
            gro: false
        }
    );
    let (sent, received) = round_trip(&server, &client, 16 << 20, 2);
    assert_eq!(sent, received);
}

#[test]
fn several_connections_share_one_port() {
    let (server, client) = pair(Offloads {
        gso: true,
        gro: true,
    });
    for stream in 0..4 {
        let (sent, received) = round_trip(&server, &client, 1 << 20, 10 + stream);
        assert_eq!(sent, received);
    }
}

#[test]
fn connecting_to_nobody_fails_with_a_clear_error() {
    let client = Endpoint::bind("127.0.0.1:0".parse().unwrap(), NetConfig::default()).unwrap();
    // A bound port with no haul endpoint behind it.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    match client.connect(silent.local_addr().unwrap()) {
        Err(NetError::Connect { reason, .. }) => assert_eq!(reason, CloseReason::ConnectTimeout),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("connected to nobody"),
    }
}
