//! Arbitrary datagrams into a listener and into an established connection, in both dialects,
//! borrowed or owned (`Bytes`, kept without a copy) and read by copy or by chunk: nothing may
//! panic.
#![no_main]

use bytes::Bytes;
use haul_proto::secure::PresharedKey;
use haul_proto::{Connection, ConnectionConfig, DatagramEvent, Dialect, Endpoint, EndpointConfig};
use libfuzzer_sys::fuzz_target;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// A listener and the server side of a connection a client completed with it.
fn established(config: ConnectionConfig, now: Instant, client: SocketAddr) -> (Endpoint, Connection) {
    let server: SocketAddr = "127.0.0.1:9000".parse().unwrap();
    let endpoint = |listen, seed| {
        Endpoint::new(
            EndpointConfig {
                connection: config.clone(),
                listen,
                seed,
                accept_keys: Vec::new(),
                wall_clock: Some(Duration::from_secs(1_800_000_000)),
            },
            now,
        )
    };
    let mut listener = endpoint(true, 1);
    let (_, mut conn) = endpoint(false, 2).connect(now, server);
    let (mut buf, mut reply) = (Vec::new(), Vec::new());
    loop {
        buf.clear();
        conn.poll_transmit(now, &mut buf).expect("a handshake to send");
        match listener.handle(now, client, &buf, &mut reply) {
            Some(DatagramEvent::Response(t)) => conn.handle_datagram(now, server, &reply[..t.size]),
            Some(DatagramEvent::NewConnection(_, accepted)) => return (listener, *accepted),
            other => panic!("handshake went wrong: {other:?}"),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let now = Instant::now();
    let peer = "127.0.0.1:4000".parse().unwrap();
    // Small buffers: the fuzzer runs thousands of inputs a second instead of dozens.
    let dialect = match data.first() {
        Some(b) if b & 1 == 1 => Dialect::Haul(PresharedKey::from_bytes([9; 32])),
        _ => Dialect::Udt4,
    };
    let small = ConnectionConfig {
        dialect,
        recv_buffer_packets: 256,
        send_buffer_bytes: 1 << 20,
        ..ConnectionConfig::default()
    };
    let owned = data.first().is_some_and(|b| b & 2 == 2);
    let (mut endpoint, mut conn) = established(small, now, peer);
    let _ = conn.write(&[0x55; 100_000]);
    let mut buf = Vec::new();
    // Datagrams are separated by 0xFF; each also advances the clock a little.
    for (i, datagram) in data.split(|b| *b == 0xFF).enumerate() {
        let t = now + Duration::from_millis(i as u64 * 7);
        let _ = endpoint.handle(t, peer, datagram, &mut buf);
        if owned {
            conn.handle_datagram_bytes(t, peer, &Bytes::copy_from_slice(datagram));
        } else {
            conn.handle_datagram(t, peer, datagram);
        }
        conn.handle_timeout(t);
        while conn.poll_transmit(t, &mut buf).is_some() {
            buf.clear();
        }
        if i % 2 == 0 {
            let _ = conn.read_chunk(4096);
        } else {
            let mut out = [0u8; 4096];
            let _ = conn.read(&mut out);
        }
    }
});
