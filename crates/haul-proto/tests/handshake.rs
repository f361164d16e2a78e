//! Handshakes: stateless SYN cookies, rejects, rendezvous, and detecting a vanished peer.

mod common;

use common::{addr, Host, Source};
use haul_proto::seq::SeqNo;
use haul_proto::wire::{
    Control, ControlPacket, Handshake, Packet, PeerIp, RequestType, SocketType,
};
use haul_proto::{CloseReason, ConnectionConfig, DatagramEvent, Endpoint, EndpointConfig, Event};
use haul_sim::{LinkConfig, Simulation};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const CLIENT: &str = "10.0.0.1:4000";
const SERVER: &str = "10.0.0.2:9000";

fn listener(now: Instant) -> Endpoint {
    Endpoint::new(
        EndpointConfig {
            connection: ConnectionConfig::default(),
            listen: true,
            seed: 42,
            accept_keys: Vec::new(),
            wall_clock: None,
        },
        now,
    )
}

fn request(req_type: RequestType, cookie: u32, socket_id: u32) -> Handshake {
    Handshake {
        version: 4,
        socket_type: SocketType::Stream.to_wire(),
        isn: SeqNo::new(12345).unwrap(),
        mss: 1500,
        flow_window: 8192,
        req_type,
        socket_id,
        cookie,
        peer_ip: PeerIp::from_ip(addr(SERVER).ip()),
    }
}

fn bytes(h: Handshake) -> Vec<u8> {
    Packet::Control(ControlPacket::new(0, Control::Handshake(h))).to_vec()
}

/// Sends a type-1 request and returns the cookie the listener answered with.
fn cookie_for(ep: &mut Endpoint, now: Instant, from: SocketAddr) -> u32 {
    let mut buf = Vec::new();
    match ep.handle(
        now,
        from,
        &bytes(request(RequestType::Request, 0, 77)),
        &mut buf,
    ) {
        Some(DatagramEvent::Response(t)) => {
            assert_eq!(t.destination, from);
            let Ok(Packet::Control(c)) = Packet::parse(&buf[..t.size]) else {
                panic!("control reply expected")
            };
            assert_eq!(c.dest, 77, "the reply goes to the client's socket id");
            let Control::Handshake(h) = c.body else {
                panic!("handshake reply expected")
            };
            assert_eq!(h.req_type, RequestType::Request);
            h.cookie
        }
        other => panic!("cookie reply expected, got {other:?}"),
    }
}

#[test]
fn requests_leave_no_state_until_the_cookie_returns() {
    let now = Instant::now();
    let mut ep = listener(now);
    for i in 0..10_000u32 {
        let from = SocketAddr::from(([10, 1, (i >> 8) as u8, i as u8], 1000 + (i % 50) as u16));
        cookie_for(&mut ep, now, from);
    }
    assert_eq!(ep.connection_count(), 0);
    assert_eq!(ep.stats().cookies_sent, 10_000);
    let from = addr(CLIENT);
    let cookie = cookie_for(&mut ep, now, from);
    let mut buf = Vec::new();
    let event = ep.handle(
        now,
        from,
        &bytes(request(RequestType::Response, cookie, 77)),
        &mut buf,
    );
    assert!(matches!(event, Some(DatagramEvent::NewConnection(..))));
    assert_eq!(ep.connection_count(), 1);
}

#[test]
fn forged_and_stale_cookies_are_rejected_without_state() {
    let now = Instant::now();
    let mut ep = listener(now);
    let from = addr(CLIENT);
    let mut buf = Vec::new();
    let cookie = cookie_for(&mut ep, now, from);
    // Forged: a cookie never issued.
    let forged = request(RequestType::Response, cookie.wrapping_add(1), 77);
    assert!(ep.handle(now, from, &bytes(forged), &mut buf).is_none());
    // Valid cookie from another address (spoofed source).
    let elsewhere = addr("10.9.9.9:4000");
    let stolen = request(RequestType::Response, cookie, 77);
    assert!(ep
        .handle(now, elsewhere, &bytes(stolen), &mut buf)
        .is_none());
    // Stale: two minutes later (the previous minute is still accepted, older is not).
    let later = now + Duration::from_secs(125);
    let stale = request(RequestType::Response, cookie, 77);
    assert!(ep.handle(later, from, &bytes(stale), &mut buf).is_none());
    assert_eq!(ep.stats().cookies_rejected, 3);
    assert_eq!(ep.connection_count(), 0);
    // Still fresh one minute later.
    let fresh = request(RequestType::Response, cookie, 77);
    let event = ep.handle(now + Duration::from_secs(61), from, &bytes(fresh), &mut buf);
    assert!(matches!(event, Some(DatagramEvent::NewConnection(..))));
}

#[test]
fn version_mismatch_gets_the_reject_response() {
    let now = Instant::now();
    let mut ep = listener(now);
    let from = addr(CLIENT);
    let cookie = cookie_for(&mut ep, now, from);
    let mut buf = Vec::new();
    let wrong = Handshake {
        version: 5,
        ..request(RequestType::Response, cookie, 77)
    };
    match ep.handle(now, from, &bytes(wrong), &mut buf) {
        Some(DatagramEvent::Response(t)) => {
            let Ok(Packet::Control(c)) = Packet::parse(&buf[..t.size]) else {
                panic!()
            };
            let Control::Handshake(h) = c.body else {
                panic!()
            };
            assert_eq!(h.req_type, RequestType::Rejected);
        }
        other => panic!("reject expected, got {other:?}"),
    }
    assert_eq!(ep.connection_count(), 0);
}

fn pair(
    seed: u64,
    client_cfg: ConnectionConfig,
    server_cfg: ConnectionConfig,
) -> (Simulation<Host>, usize, usize) {
    let mut sim: Simulation<Host> = Simulation::new(seed);
    let now = sim.now();
    let c = sim.add_node(addr(CLIENT), Host::new(client_cfg, false, seed, now));
    let s = sim.add_node(addr(SERVER), Host::new(server_cfg, true, seed + 1, now));
    sim.set_path(
        addr(CLIENT),
        addr(SERVER),
        LinkConfig::wan(100_000_000, Duration::from_millis(20)),
    );
    (sim, c, s)
}

#[test]
fn socket_type_mismatch_is_rejected_end_to_end() {
    let dgram = ConnectionConfig {
        socket_type: SocketType::Datagram,
        ..ConnectionConfig::default()
    };
    let (mut sim, c, s) = pair(5, dgram, ConnectionConfig::default());
    let now = sim.now();
    sim.node_mut(c).connect(now, addr(SERVER));
    assert!(sim.run_until(Duration::from_secs(5), |sim| sim.node(c).closed()));
    assert_eq!(
        sim.node_mut(c).conn().close_reason(),
        Some(CloseReason::Rejected)
    );
    assert!(sim.node(s).conns.is_empty());
}

#[test]
fn lost_acceptance_is_answered_again_by_the_same_connection() {
    let (mut sim, c, s) = pair(6, ConnectionConfig::default(), ConnectionConfig::default());
    // The server → client direction loses everything for the first 300 ms.
    sim.set_link(
        addr(SERVER),
        addr(CLIENT),
        LinkConfig {
            loss: 1.0,
            ..LinkConfig::default()
        },
    );
    let now = sim.now();
    sim.node_mut(c).connect(now, addr(SERVER));
    sim.run_until(Duration::from_millis(300), |_| false);
    sim.set_link(
        addr(SERVER),
        addr(CLIENT),
        LinkConfig::wan(100_000_000, Duration::from_millis(20)),
    );
    assert!(sim.run_until(Duration::from_secs(3), |sim| sim
        .node_mut(c)
        .conn()
        .is_connected()));
    assert_eq!(
        sim.node(s).accepted.len(),
        1,
        "repeated requests reuse the first connection"
    );
}

#[test]
fn connect_without_a_listener_times_out() {
    let (mut sim, c, _s) = pair(7, ConnectionConfig::default(), ConnectionConfig::default());
    sim.node_mut(1).endpoint.set_listening(false);
    let now = sim.now();
    sim.node_mut(c).connect(now, addr(SERVER));
    assert!(sim.run_until(Duration::from_secs(10), |sim| sim.node(c).closed()));
    assert_eq!(
        sim.node_mut(c).conn().close_reason(),
        Some(CloseReason::ConnectTimeout)
    );
    assert!(sim.elapsed() >= Duration::from_secs(3) && sim.elapsed() < Duration::from_millis(3300));
}

#[test]
fn rendezvous_connects_and_carries_data_both_ways() {
    let mut sim: Simulation<Host> = Simulation::new(8);
    let now = sim.now();
    let (a, b) = (addr("10.0.0.1:7001"), addr("10.0.0.2:7002"));
    let mut ha = Host::new(ConnectionConfig::default(), false, 1, now);
    let mut hb = Host::new(ConnectionConfig::default(), false, 2, now);
    ha.source = Some(Source::new(11, 300_000));
    hb.source = Some(Source::new(12, 200_000));
    for h in [&mut ha, &mut hb] {
        h.source.as_mut().unwrap().close_when_done = false;
    }
    let ia = sim.add_node(a, ha);
    let ib = sim.add_node(b, hb);
    sim.set_path(
        a,
        b,
        LinkConfig {
            loss: 0.02,
            ..LinkConfig::wan(50_000_000, Duration::from_millis(40))
        },
    );
    sim.node_mut(ia).rendezvous(now, b);
    // The second side starts 400 ms later: the first one's requests go unanswered meanwhile.
    sim.run_until(Duration::from_millis(400), |_| false);
    let later = sim.now();
    sim.node_mut(ib).rendezvous(later, a);
    let done = sim.run_until(Duration::from_secs(120), |sim| {
        sim.node(ia).sink.bytes == 200_000 && sim.node(ib).sink.bytes == 300_000
    });
    assert!(
        done,
        "rendezvous transfer incomplete: {} / {}",
        sim.node(ia).sink.bytes,
        sim.node(ib).sink.bytes
    );
    let ha_src = sim.node(ia).source.as_ref().unwrap().hasher.finalize();
    let hb_src = sim.node(ib).source.as_ref().unwrap().hasher.finalize();
    assert_eq!(sim.node(ib).sink.hasher.finalize(), ha_src);
    assert_eq!(sim.node(ia).sink.hasher.finalize(), hb_src);
    for i in [ia, ib] {
        assert!(sim
            .node(i)
            .events
            .iter()
            .any(|(_, e)| *e == Event::Connected));
    }
}

#[test]
fn rendezvous_refuses_a_client_request() {
    let now = Instant::now();
    let mut ep = Endpoint::new(
        EndpointConfig {
            connection: ConnectionConfig::default(),
            listen: false,
            seed: 1,
            accept_keys: Vec::new(),
            wall_clock: None,
        },
        now,
    );
    let peer = addr(CLIENT);
    let (id, mut conn) = ep.rendezvous(now, peer);
    let mut buf = Vec::new();
    let data = bytes(request(RequestType::Request, 0, 99));
    assert!(
        matches!(ep.handle(now, peer, &data, &mut buf), Some(DatagramEvent::Connection(h)) if h == id)
    );
    conn.handle_datagram(now, peer, &data);
    let t = conn.poll_transmit(now, &mut buf).unwrap();
    let Ok(Packet::Control(c)) = Packet::parse(&buf[..t.size]) else {
        panic!()
    };
    let Control::Handshake(h) = c.body else {
        panic!()
    };
    assert_eq!(h.req_type, RequestType::Rejected);
    assert!(!conn.is_connected());
}

#[test]
fn vanished_peer_is_reported_within_the_idle_timeout() {
    let config = ConnectionConfig {
        idle_timeout: Duration::from_secs(2),
        ..ConnectionConfig::default()
    };
    let (mut sim, c, s) = pair(9, config.clone(), config);
    sim.node_mut(c).source = Some(Source::new(3, 50 << 20));
    let now = sim.now();
    sim.node_mut(c).connect(now, addr(SERVER));
    assert!(
        sim.run_until(Duration::from_secs(30), |sim| sim.node(s).sink.bytes
            > 1 << 20)
    );
    // The server disappears: nothing it would send arrives any more.
    sim.set_link(
        addr(SERVER),
        addr(CLIENT),
        LinkConfig {
            loss: 1.0,
            ..LinkConfig::default()
        },
    );
    let gone = sim.now();
    assert!(sim.run_until(Duration::from_secs(60), |sim| sim.node(c).closed()));
    let noticed = sim.now() - gone;
    assert_eq!(
        sim.node_mut(c).conn().close_reason(),
        Some(CloseReason::TimedOut)
    );
    assert!(noticed <= Duration::from_millis(2100), "took {noticed:?}");
    let _ = s;
}

#[test]
fn idle_but_alive_connection_stays_up() {
    let config = ConnectionConfig {
        idle_timeout: Duration::from_secs(2),
        ..ConnectionConfig::default()
    };
    let (mut sim, c, s) = pair(10, config.clone(), config);
    let now = sim.now();
    sim.node_mut(c).connect(now, addr(SERVER));
    sim.run_until(Duration::from_secs(20), |_| false);
    assert!(sim.node_mut(c).conn().is_connected());
    assert!(sim.node_mut(s).conn().is_connected());
}
