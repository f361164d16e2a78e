//! Arbitrary datagrams into a listener and into an established connection: nothing may panic.
#![no_main]

use haul_proto::seq::SeqNo;
use haul_proto::wire::{Handshake, PeerIp, RequestType, SocketType};
use haul_proto::{Connection, ConnectionConfig, Endpoint, EndpointConfig};
use libfuzzer_sys::fuzz_target;
use std::time::{Duration, Instant};

fuzz_target!(|data: &[u8]| {
    let now = Instant::now();
    let peer = "127.0.0.1:9000".parse().unwrap();
    // Small buffers: the fuzzer runs thousands of inputs a second instead of dozens.
    let small = ConnectionConfig {
        recv_buffer_packets: 256,
        send_buffer_bytes: 1 << 20,
        ..ConnectionConfig::default()
    };
    let config = EndpointConfig { connection: small.clone(), listen: true, seed: 1 };
    let mut endpoint = Endpoint::new(config, now);
    // An accepted connection is established at once: the fuzzer reaches data and control paths.
    let request = Handshake {
        version: 4,
        socket_type: SocketType::Stream.to_wire(),
        isn: SeqNo::new(1000).unwrap(),
        mss: 1500,
        flow_window: 64,
        req_type: RequestType::Response,
        socket_id: 7,
        cookie: 0,
        peer_ip: PeerIp::default(),
    };
    let mut conn = Connection::accept(now, 5, peer, &request, small);
    let _ = conn.write(&[0x55; 100_000]);
    let mut buf = Vec::new();
    // Datagrams are separated by 0xFF; each also advances the clock a little.
    for (i, datagram) in data.split(|b| *b == 0xFF).enumerate() {
        let t = now + Duration::from_millis(i as u64 * 7);
        let _ = endpoint.handle(t, peer, datagram, &mut buf);
        conn.handle_datagram(t, peer, datagram);
        conn.handle_timeout(t);
        while conn.poll_transmit(t, &mut buf).is_some() {
            buf.clear();
        }
        let mut out = [0u8; 4096];
        let _ = conn.read(&mut out);
    }
});
