//! Message (datagram) mode: boundaries kept, in-order delivery, unordered delivery, TTL drops.

mod common;

use common::{addr, Host};
use haul_proto::wire::SocketType;
use haul_proto::{ConnectionConfig, StreamError};
use haul_sim::{LinkConfig, Simulation};
use std::time::Duration;

const CLIENT: &str = "10.0.0.1:4000";
const SERVER: &str = "10.0.0.2:9000";

/// Message `i`: its index, then a pattern, 1 to ~9 packets long.
fn message(i: u32) -> Vec<u8> {
    let len = 4 + (i as usize * 7919) % 13_000;
    let mut m = vec![(i % 251) as u8; len];
    m[..4].copy_from_slice(&i.to_be_bytes());
    m
}

struct Run {
    received: Vec<Vec<u8>>,
    dropped: u64,
}

fn run(seed: u64, count: u32, link: LinkConfig, ttl: Option<Duration>, in_order: bool) -> Run {
    let config = ConnectionConfig {
        socket_type: SocketType::Datagram,
        ..ConnectionConfig::default()
    };
    let mut sim: Simulation<Host> = Simulation::new(seed);
    let now = sim.now();
    let mut client = Host::new(config.clone(), false, 1, now);
    let mut server = Host::new(config, true, 2, now);
    client.auto_app = false;
    server.auto_app = false;
    let c = sim.add_node(addr(CLIENT), client);
    let s = sim.add_node(addr(SERVER), server);
    sim.set_path(addr(CLIENT), addr(SERVER), link);
    sim.node_mut(c).connect(now, addr(SERVER));
    let mut next = 0u32;
    let mut received = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let finished = sim.run_until(Duration::from_secs(600), |sim| {
        let now = sim.now();
        let conn = sim.node_mut(c).conn();
        if conn.is_connected() {
            while next < count {
                match conn.send_msg(now, &message(next), ttl, in_order) {
                    Ok(()) => next += 1,
                    Err(StreamError::Blocked) => break,
                    Err(e) => panic!("send_msg: {e}"),
                }
            }
            if next == count && conn.is_flushed() {
                return true;
            }
        }
        if let Some(conn) = sim.node_mut(s).conns.values_mut().next() {
            while let Ok(n) = conn.recv_msg(&mut buf) {
                received.push(buf[..n].to_vec());
            }
        }
        false
    });
    assert!(finished, "not all messages were acknowledged or dropped");
    // Collect what is still buffered at the receiver.
    sim.run_until(Duration::from_secs(2), |_| false);
    let conn = sim.node_mut(s).conn();
    while let Ok(n) = conn.recv_msg(&mut buf) {
        received.push(buf[..n].to_vec());
    }
    let dropped = sim.node_mut(c).conn().stats().messages_dropped;
    Run { received, dropped }
}

#[test]
fn in_order_messages_arrive_whole_and_in_sequence() {
    let link = LinkConfig {
        loss: 0.03,
        ..LinkConfig::wan(50_000_000, Duration::from_millis(30))
    };
    let out = run(1, 400, link, None, true);
    assert_eq!(out.received.len(), 400);
    for (i, m) in out.received.iter().enumerate() {
        assert!(
            *m == message(i as u32),
            "message {i} differs ({} bytes)",
            m.len()
        );
    }
}

#[test]
fn unordered_messages_all_arrive_whole() {
    let link = LinkConfig {
        loss: 0.05,
        ..LinkConfig::wan(50_000_000, Duration::from_millis(60))
    };
    let out = run(2, 300, link, None, false);
    let mut got = out.received.clone();
    got.sort_by_key(|m| u32::from_be_bytes(m[..4].try_into().unwrap()));
    assert_eq!(got.len(), 300);
    for (i, m) in got.iter().enumerate() {
        assert!(*m == message(i as u32), "message {i} differs");
    }
    assert!(
        got != out.received,
        "some message overtook an incomplete one"
    );
}

#[test]
fn expired_messages_are_dropped_not_retransmitted() {
    let link = LinkConfig {
        loss: 0.05,
        ..LinkConfig::wan(50_000_000, Duration::from_millis(200))
    };
    // A TTL shorter than the RTT: any message needing a retransmission expires.
    let out = run(3, 300, link, Some(Duration::from_millis(100)), true);
    assert!(out.dropped > 0, "some messages expired");
    assert!(out.received.len() < 300);
    assert!(out.received.len() as u64 + out.dropped >= 300);
    let mut last = None;
    for m in &out.received {
        let i = u32::from_be_bytes(m[..4].try_into().unwrap());
        assert!(*m == message(i), "delivered message {i} is intact");
        assert!(last < Some(i), "and in order");
        last = Some(i);
    }
}

#[test]
fn stream_calls_are_refused_in_message_mode() {
    let config = ConnectionConfig {
        socket_type: SocketType::Datagram,
        ..ConnectionConfig::default()
    };
    let mut host = Host::new(config, false, 1, std::time::Instant::now());
    let now = std::time::Instant::now();
    host.connect(now, addr(SERVER));
    assert_eq!(host.conn().write(b"x"), Err(StreamError::WrongMode));
    let mut buf = [0u8; 4];
    assert_eq!(host.conn().read(&mut buf), Err(StreamError::WrongMode));
}
