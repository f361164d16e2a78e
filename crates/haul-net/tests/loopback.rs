//! Real UDP on loopback: byte-exact streams with and without GSO/GRO, many connections on one
//! port, rendezvous, IPv6, a peer that dies, floods, and a clean error when nobody listens.

use haul_net::{
    CloseReason, ConnectionConfig, Dialect, Endpoint, NetConfig, NetError, Offloads, PresharedKey,
    Stream,
};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

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
    let out = client.connect(server.local_addr()).expect("connect");
    let incoming = server.accept().unwrap();
    transfer(out, incoming, total, stream)
}

/// Streams `total` bytes from `out` to `incoming`; returns (sent hash, received hash).
fn transfer(
    out: Stream,
    mut incoming: Stream,
    total: u64,
    stream: u64,
) -> (blake3::Hash, blake3::Hash) {
    let sender = {
        let mut out = out;
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
fn one_gigabyte_stream_is_byte_exact() {
    let (server, client) = pair(Offloads {
        gso: true,
        gro: true,
    });
    let (sent, received) = round_trip(&server, &client, 1 << 30, 1);
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
    let (sent, received) = round_trip(&server, &client, 64 << 20, 2);
    assert_eq!(sent, received);
}

/// A reader that read (and so took the socket's turns itself) and then stops reading leaves
/// the socket to the I/O thread: what the peer sends is still acknowledged, and this side's
/// own writes are too.
#[test]
fn a_reader_that_stops_reading_leaves_the_socket_to_the_io_thread() {
    let (server, client) = pair(Offloads {
        gso: true,
        gro: true,
    });
    let mut out = client.connect(server.local_addr()).unwrap();
    let mut incoming = server.accept().unwrap();
    incoming.set_read_timeout(Some(Duration::from_secs(10)));
    out.write_all(b"ping").unwrap();
    let mut ping = [0u8; 4];
    incoming.read_exact(&mut ping).unwrap();
    assert_eq!(&ping, b"ping");
    // Nobody reads `incoming` from here on.
    let (done, finished) = std::sync::mpsc::channel();
    let writer = thread::spawn(move || {
        out.write_all(&vec![5u8; 1 << 20]).unwrap();
        out.wait_flushed().unwrap();
        done.send(()).unwrap();
        out
    });
    finished
        .recv_timeout(Duration::from_secs(10))
        .expect("the peer acknowledged 1 MiB it has not read yet");
    let mut out = writer.join().unwrap();
    incoming.write_all(b"pong").unwrap();
    incoming.wait_flushed().unwrap();
    let mut pong = [0u8; 4];
    out.read_exact(&mut pong).unwrap();
    assert_eq!(&pong, b"pong");
    let mut rest = vec![0u8; 1 << 20];
    incoming.read_exact(&mut rest).unwrap();
    assert!(rest.iter().all(|&b| b == 5));
}

/// The zero-copy calls: owned writes of every size (short ones are copied, long ones kept)
/// mixed with copying writes, and chunk reads mixed with copying reads.
#[test]
fn owned_writes_and_chunk_reads_are_byte_exact() {
    let (server, client) = pair(Offloads {
        gso: true,
        gro: true,
    });
    let total: u64 = 256 << 20;
    let mut out = client.connect(server.local_addr()).expect("connect");
    let mut incoming = server.accept().unwrap();
    let sender = thread::spawn(move || {
        let mut hasher = blake3::Hasher::new();
        let mut sent = 0u64;
        for i in 0usize.. {
            if sent >= total {
                break;
            }
            let size = [100, 70_000, 1 << 20, 1_500, 300_000][i % 5];
            let mut chunk = vec![0u8; size.min((total - sent) as usize)];
            fill(&mut chunk, 9, sent);
            hasher.update(&chunk);
            sent += chunk.len() as u64;
            if i % 3 == 2 {
                out.write_all(&chunk).unwrap();
            } else {
                out.write_bytes(haul_net::Bytes::from(chunk)).unwrap();
            }
        }
        out.finish().unwrap();
        hasher.finalize()
    });
    incoming.set_read_timeout(Some(Duration::from_secs(30)));
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; 100_000];
    let mut got = 0u64;
    for i in 0u64.. {
        let n = if i % 2 == 0 {
            let chunk = incoming.read_chunk(1 << 20).unwrap();
            hasher.update(&chunk);
            chunk.len()
        } else {
            let n = incoming.read(&mut buf).unwrap();
            hasher.update(&buf[..n]);
            n
        };
        if n == 0 {
            break;
        }
        got += n as u64;
    }
    assert_eq!(got, total);
    assert_eq!(sender.join().unwrap(), hasher.finalize());
}

#[test]
fn sixty_four_concurrent_connections_on_one_port() {
    let (server, client) = pair(Offloads {
        gso: true,
        gro: true,
    });
    let outs: Vec<Stream> = (0..64)
        .map(|_| client.connect(server.local_addr()).unwrap())
        .collect();
    let ins: Vec<Stream> = (0..64).map(|_| server.accept().unwrap()).collect();
    assert_eq!(server.connection_count(), 64);
    // Connections are accepted in the order they were opened: pair them up and run all at once.
    let handles: Vec<_> = outs
        .into_iter()
        .zip(ins)
        .enumerate()
        .map(|(i, (out, incoming))| {
            thread::spawn(move || transfer(out, incoming, 512 << 10, 100 + i as u64))
        })
        .collect();
    for h in handles {
        let (sent, received) = h.join().unwrap();
        assert_eq!(sent, received);
    }
}

#[test]
fn rendezvous_over_udp() {
    let a = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let b = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let side_b = thread::spawn(move || Stream::rendezvous(b, a).unwrap());
    let out = Stream::rendezvous(a, b).unwrap();
    let incoming = side_b.join().unwrap();
    let (sent, received) = transfer(out, incoming, 4 << 20, 7);
    assert_eq!(sent, received);
}

#[test]
fn ipv6_loopback() {
    let server = match Endpoint::bind("[::1]:0".parse().unwrap(), NetConfig::listener()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("skipping: no IPv6 loopback here ({e})");
            return;
        }
    };
    let out = Stream::connect(server.local_addr()).unwrap();
    let (sent, received) = transfer(out, server.accept().unwrap(), 4 << 20, 8);
    assert_eq!(sent, received);
}

/// Forwards datagrams between a client and `server` until `cut` is set; then drops everything,
/// as if the server had died.
fn relay(server: SocketAddr, cut: Arc<AtomicBool>) -> SocketAddr {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let addr = sock.local_addr().unwrap();
    thread::spawn(move || {
        let mut client: Option<SocketAddr> = None;
        let mut buf = vec![0u8; 65_536];
        let until = Instant::now() + Duration::from_secs(60);
        while Instant::now() < until {
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            if cut.load(Ordering::Relaxed) {
                continue;
            }
            if from == server {
                if let Some(c) = client {
                    let _ = sock.send_to(&buf[..n], c);
                }
            } else {
                client = Some(from);
                let _ = sock.send_to(&buf[..n], server);
            }
        }
    });
    addr
}

#[test]
fn a_peer_that_dies_mid_stream_is_an_error_within_the_timeout() {
    let server = Endpoint::bind("127.0.0.1:0".parse().unwrap(), NetConfig::listener()).unwrap();
    let cut = Arc::new(AtomicBool::new(false));
    let via = relay(server.local_addr(), Arc::clone(&cut));
    let config = NetConfig {
        connection: ConnectionConfig {
            idle_timeout: Duration::from_secs(2),
            ..ConnectionConfig::default()
        },
        ..NetConfig::default()
    };
    let client = Endpoint::bind("127.0.0.1:0".parse().unwrap(), config).unwrap();
    let mut out = client.connect(via).unwrap();
    let _incoming = server.accept().unwrap();
    out.write_all(&[7u8; 1 << 20]).unwrap();
    cut.store(true, Ordering::Relaxed);
    let died = Instant::now();
    let chunk = vec![0u8; 1 << 20];
    let err = loop {
        if let Err(e) = out.write_all(&chunk) {
            break e;
        }
        assert!(
            died.elapsed() < Duration::from_secs(10),
            "no error after 10 s"
        );
    };
    assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");
    let took = died.elapsed();
    assert!(took < Duration::from_millis(2600), "took {took:?}");
}

#[test]
fn listener_survives_floods_and_keeps_serving() {
    use haul_proto::seq::SeqNo;
    use haul_proto::wire::{Control, ControlPacket, Handshake, Packet, PeerIp, RequestType};
    let (server, client) = pair(Offloads {
        gso: true,
        gro: true,
    });
    let target = server.local_addr();
    let flood = thread::spawn(move || {
        let socks: Vec<UdpSocket> = (0..8)
            .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
            .collect();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for i in 0..10_000u32 {
            let len = (next() % 1500) as usize;
            let garbage: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let _ = socks[i as usize % 8].send_to(&garbage, target);
            let request = Handshake {
                version: 4,
                socket_type: 1,
                isn: SeqNo::masked(next() as u32),
                mss: 1500,
                flow_window: 8192,
                req_type: RequestType::Request,
                socket_id: next() as u32,
                cookie: 0,
                peer_ip: PeerIp::default(),
            };
            let bytes =
                Packet::Control(ControlPacket::new(0, Control::Handshake(request))).to_vec();
            let _ = socks[i as usize % 8].send_to(&bytes, target);
            if i % 500 == 0 {
                thread::sleep(Duration::from_millis(1));
            }
        }
    });
    let (sent, received) = round_trip(&server, &client, 8 << 20, 9);
    flood.join().unwrap();
    assert_eq!(sent, received);
    // 10 000 connection requests answered with cookies, none kept.
    assert!(
        server.connection_count() <= 1,
        "{} connections",
        server.connection_count()
    );
}

#[test]
fn connecting_to_nobody_fails_with_a_clear_error() {
    let client = Endpoint::bind("127.0.0.1:0".parse().unwrap(), NetConfig::default()).unwrap();
    // A bound port with no haul endpoint behind it.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    match client.connect(silent.local_addr().unwrap()) {
        Err(NetError::Connect { reason, .. }) => assert_eq!(reason, CloseReason::ConnectTimeout),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("connected to nobody"),
    }
}

fn haul_dialect(key: u8, listen: bool) -> Endpoint {
    let connection = ConnectionConfig {
        dialect: Dialect::Haul(PresharedKey::from_bytes([key; 32])),
        ..ConnectionConfig::default()
    };
    let config = NetConfig {
        connection,
        listen,
        ..NetConfig::default()
    };
    Endpoint::bind("127.0.0.1:0".parse().unwrap(), config).unwrap()
}

#[test]
fn encrypted_stream_is_byte_exact_and_a_wrong_key_is_refused() {
    let server = haul_dialect(1, true);
    let (sent, received) = round_trip(&server, &haul_dialect(1, false), 256 << 20, 9);
    assert_eq!(sent, received);
    match haul_dialect(2, false).connect(server.local_addr()) {
        Err(NetError::Connect { reason, .. }) => assert_eq!(reason, CloseReason::AuthFailed),
        other => panic!("a wrong key connected: {:?}", other.map(|s| s.peer_addr())),
    }
}

#[test]
fn a_listener_with_several_keys_tells_which_one_a_client_proved() {
    let key = |k: u8| PresharedKey::from_bytes([k; 32]);
    let server = Endpoint::bind(
        "127.0.0.1:0".parse().unwrap(),
        NetConfig {
            connection: ConnectionConfig {
                dialect: Dialect::Haul(key(1)),
                ..ConnectionConfig::default()
            },
            listen: true,
            accept_keys: vec![key(3)],
            ..NetConfig::default()
        },
    )
    .unwrap();
    let addr = server.local_addr();
    let accepting = std::thread::spawn(move || {
        // Accept, answer and close at once: the client still reads the answer.
        let mut stream = server.accept().unwrap();
        let proved = stream.peer_key().cloned();
        stream.write_all(b"bye").unwrap();
        stream.finish().unwrap();
        proved
    });
    let mut client = haul_dialect(3, false).connect(addr).unwrap();
    let mut answer = Vec::new();
    client.read_to_end(&mut answer).unwrap();
    assert_eq!(answer, b"bye");
    assert_eq!(accepting.join().unwrap(), Some(key(3)));
    assert_eq!(client.peer_key(), Some(&key(3)));
}
