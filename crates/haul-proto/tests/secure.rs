//! The `haul` dialect in the simulator: every byte arrives exactly and nothing unauthenticated
//! gets in — not corrupted packets, replays, forgeries, a wrong key, or a `udt4` peer.

mod common;

use common::{addr, Host, Source, Tap};
use haul_proto::secure::PresharedKey;
use haul_proto::wire::{Control, ControlPacket, Packet, RequestType};
use haul_proto::{
    CloseReason, ConnectionConfig, DatagramEvent, Dialect, Endpoint, EndpointConfig, Event, Stats,
};
use haul_sim::{Injector, LinkConfig, Simulation};
use rand::Rng;
use std::time::{Duration, Instant};

const CLIENT: &str = "10.0.0.1:4000";
const SERVER: &str = "10.0.0.2:9000";

fn haul(key: u8) -> ConnectionConfig {
    ConnectionConfig {
        dialect: Dialect::Haul(PresharedKey::from_bytes([key; 32])),
        ..ConnectionConfig::default()
    }
}

fn link(loss: f64, corrupt: f64) -> LinkConfig {
    LinkConfig {
        loss,
        corrupt,
        ..LinkConfig::wan(100_000_000, Duration::from_millis(20))
    }
}

struct Run {
    sim: Simulation<Host>,
    client: usize,
    server: usize,
}

impl Run {
    fn new(seed: u64, bytes: u64, client: ConnectionConfig, server: ConnectionConfig) -> Self {
        let mut sim: Simulation<Host> = Simulation::new(seed);
        let now = sim.now();
        let mut c = Host::new(client, false, seed ^ 1, now);
        c.source = Some(Source::new(seed, bytes));
        let client = sim.add_node(addr(CLIENT), c);
        let server = sim.add_node(addr(SERVER), Host::new(server, true, seed ^ 2, now));
        Self {
            sim,
            client,
            server,
        }
    }

    fn start(&mut self, path: LinkConfig) {
        self.sim.set_path(addr(CLIENT), addr(SERVER), path);
        let now = self.sim.now();
        self.sim.node_mut(self.client).connect(now, addr(SERVER));
    }

    /// Runs until the server read everything or the client closed; whether the bytes match.
    fn finish(&mut self) -> bool {
        let (c, s) = (self.client, self.server);
        let done = self.sim.run_until(Duration::from_secs(600), |sim| {
            sim.node(s).sink.eof || sim.node(c).closed()
        });
        assert!(done, "stalled");
        self.sim.node(s).sink.hasher.finalize()
            == self.sim.node(c).source.as_ref().unwrap().hasher.finalize()
    }

    /// Runs until the client is connected; how long that took.
    fn connect_time(&mut self) -> Duration {
        let (start, c) = (self.sim.now(), self.client);
        let connected = self.sim.run_until(Duration::from_secs(10), |sim| {
            let events = &sim.node(c).events;
            events.iter().any(|(_, e)| *e == Event::Connected)
        });
        assert!(connected, "the client never connected");
        self.sim.now() - start
    }

    /// Gives the server an endpoint of its own settings.
    fn set_server_endpoint(&mut self, config: EndpointConfig) {
        let now = self.sim.now();
        self.sim.node_mut(self.server).endpoint = Endpoint::new(config, now);
    }

    fn server_stats(&mut self) -> Stats {
        self.sim.node_mut(self.server).conn().stats()
    }
}

#[test]
fn a_lossy_encrypted_transfer_is_exact() {
    let mut run = Run::new(1, 8 << 20, haul(5), haul(5));
    run.start(link(0.02, 0.0));
    assert!(run.finish());
    assert_eq!(run.sim.node(run.server).sink.bytes, 8 << 20);
    let stats = run.server_stats();
    assert_eq!((stats.packets_forged, stats.packets_replayed), (0, 0));
    // Protection costs 24 bytes of each packet: 1500 − 28 − 16 − 24.
    assert_eq!(run.sim.node_mut(run.client).conn().payload_size(), 1432);
}

#[test]
fn corrupted_packets_are_rejected_not_delivered() {
    // The same corruption the udt4 dialect lets through (see transfer.rs) is caught here.
    let mut run = Run::new(2, 2 << 20, haul(5), haul(5));
    run.start(link(0.01, 0.2));
    assert!(run.finish(), "corrupted bytes reached the application");
    assert!(run.server_stats().packets_forged > 50);
}

#[test]
fn replayed_and_forged_packets_never_reach_the_reader() {
    let mut run = Run::new(3, 8 << 20, haul(5), haul(5));
    let tap: Tap = Default::default();
    run.sim.node_mut(run.server).tap = Some(tap.clone());
    for (forge, count) in [(false, 4_000), (true, 4_000)] {
        let tap = tap.clone();
        run.sim.inject(Injector {
            // Spoofing the client's address: the endpoint routes them to the connection.
            from: addr(CLIENT),
            to: addr(SERVER),
            interval: Duration::from_micros(200),
            count,
            generator: Box::new(move |rng| {
                let seen = tap.borrow();
                if seen.is_empty() {
                    return vec![0x80, 0, 0, 1];
                }
                let mut packet = seen[rng.gen_range(0..seen.len())].clone();
                if forge && packet.len() > 40 {
                    // Keep the header (it routes), give it a fresh packet number (or it is
                    // refused as a replay before decryption) and change one more bit anywhere.
                    let pn_at = packet.len() - 24;
                    let pn: u64 = rng.gen_range(1 << 20..1 << 40);
                    packet[pn_at..pn_at + 8].copy_from_slice(&pn.to_be_bytes());
                    let i = rng.gen_range(16..packet.len());
                    packet[i] ^= 1 << rng.gen_range(0..8);
                }
                packet
            }),
        });
    }
    run.start(link(0.01, 0.0));
    assert!(
        run.finish(),
        "a replayed or forged packet changed the stream"
    );
    let stats = run.server_stats();
    assert!(stats.packets_replayed > 500, "{stats:?}");
    assert!(stats.packets_forged > 500, "{stats:?}");
}

#[test]
fn a_wrong_key_fails_the_handshake_and_leaves_no_state() {
    let mut run = Run::new(4, 1 << 20, haul(5), haul(6));
    run.start(link(0.0, 0.0));
    run.finish();
    let client = run.sim.node_mut(run.client).conn();
    assert_eq!(client.close_reason(), Some(CloseReason::AuthFailed));
    let server = run.sim.node(run.server);
    assert!(server.accepted.is_empty());
    assert!(server.endpoint.stats().auth_failed >= 1);
}

#[test]
fn dialects_do_not_mix() {
    // A haul listener rejects a udt4 client by version; a udt4 listener (like the reference)
    // silently drops a handshake longer than 48 bytes, which the haul client then names.
    for (client, server, reason) in [
        (ConnectionConfig::default(), haul(5), CloseReason::Rejected),
        (
            haul(5),
            ConnectionConfig::default(),
            CloseReason::KeyExchangeUnanswered,
        ),
    ] {
        let mut run = Run::new(5, 1 << 20, client, server);
        run.start(link(0.0, 0.0));
        run.finish();
        let client = run.sim.node_mut(run.client).conn();
        assert_eq!(client.close_reason(), Some(reason));
        assert!(run.sim.node(run.server).accepted.is_empty());
    }
}

#[test]
fn a_listener_with_several_keys_accepts_each_and_tells_which_was_proved() {
    let key = |k: u8| PresharedKey::from_bytes([k; 32]);
    for (client_key, accepted) in [(5, true), (7, true), (8, false)] {
        let mut run = Run::new(6, 1 << 16, haul(client_key), haul(5));
        let now = run.sim.now();
        run.sim.node_mut(run.server).endpoint = Endpoint::new(
            EndpointConfig {
                connection: haul(5),
                listen: true,
                seed: 3,
                accept_keys: vec![key(6), key(7)],
                wall_clock: Some(common::WALL_CLOCK),
            },
            now,
        );
        run.start(link(0.0, 0.0));
        let exact = run.finish();
        let server = run.sim.node_mut(run.server);
        if accepted {
            assert!(exact, "key {client_key}");
            assert_eq!(server.conn().peer_key(), Some(&key(client_key)));
        } else {
            assert!(server.accepted.is_empty());
            let client = run.sim.node_mut(run.client).conn();
            assert_eq!(client.close_reason(), Some(CloseReason::AuthFailed));
        }
    }
}

fn listener_config(wall_clock: Option<Duration>) -> EndpointConfig {
    EndpointConfig {
        connection: haul(5),
        listen: true,
        seed: 9,
        accept_keys: Vec::new(),
        wall_clock,
    }
}

#[test]
fn a_client_connects_in_one_round_trip_when_the_clocks_agree() {
    let rtt = Duration::from_millis(200);
    let path = LinkConfig::wan(100_000_000, rtt);
    // The listener's clock: the client's, two minutes ahead, or unknown.
    for (server_clock, one_round_trip) in [
        (Some(common::WALL_CLOCK), true),
        (Some(common::WALL_CLOCK + Duration::from_secs(120)), false),
        (None, false),
    ] {
        let mut run = Run::new(7, 1 << 20, haul(5), haul(5));
        run.set_server_endpoint(listener_config(server_clock));
        run.start(path.clone());
        let took = run.connect_time();
        assert!(run.finish(), "{server_clock:?}");
        let stats = run.sim.node(run.server).endpoint.stats();
        if one_round_trip {
            assert!(took < rtt * 5 / 4, "{took:?}");
            assert_eq!((stats.cookies_sent, stats.accepted_without_cookie), (0, 1));
        } else {
            assert!(took >= rtt * 2, "{server_clock:?}: {took:?}");
            assert_eq!(stats.accepted_without_cookie, 0);
            assert!(stats.cookies_sent >= 1);
        }
        assert_eq!(
            stats.stale_key_exchanges >= 1,
            server_clock.is_some() && !one_round_trip
        );
    }
}

#[test]
fn a_request_replayed_from_another_address_draws_only_a_cookie() {
    let now = Instant::now();
    let (client_addr, spoofed) = (addr(CLIENT), addr("10.0.0.66:4000"));
    let request = first_request(haul(5), now);
    assert!(request.len() > 64, "the request carries the key exchange");
    let mut buf = Vec::new();

    let mut listener = Endpoint::new(listener_config(Some(common::WALL_CLOCK)), now);
    let id = match listener.handle(now, client_addr, &request, &mut buf) {
        Some(DatagramEvent::NewConnection(id, _)) => id,
        other => panic!("not accepted: {other:?}"),
    };
    // The same request again from the client is its repeat: routed to the connection.
    let again = listener.handle(now, client_addr, &request, &mut buf);
    assert!(matches!(again, Some(DatagramEvent::Connection(h)) if h == id));
    // From anywhere else, or later from the client's address once forgotten: only a cookie.
    listener.forget(id);
    let later = now + Duration::from_secs(30);
    for from in [spoofed, client_addr] {
        let Some(DatagramEvent::Response(t)) = listener.handle(later, from, &request, &mut buf)
        else {
            panic!("a copy of an accepted request must not be accepted again");
        };
        assert_eq!(t.destination, from);
        let Ok(Packet::Control(ControlPacket {
            body: Control::Handshake(reply),
            ..
        })) = Packet::parse(&buf[..t.size])
        else {
            panic!("not a handshake");
        };
        assert_eq!(reply.req_type, RequestType::Request);
        assert_ne!(reply.cookie, 0);
    }
    let stats = listener.stats();
    assert_eq!((stats.accepted, stats.stale_key_exchanges), (1, 2));
    // Two minutes on, the copy is too old to pass whoever sends it.
    let stale = now + Duration::from_secs(121);
    let event = listener.handle(stale, spoofed, &request, &mut buf);
    assert!(matches!(event, Some(DatagramEvent::Response(_))));
    assert_eq!(listener.stats().accepted, 1);
}

/// The first datagram a new client of `config` sends: its request.
fn first_request(config: ConnectionConfig, now: Instant) -> Vec<u8> {
    let mut client = Endpoint::new(
        EndpointConfig {
            connection: config,
            listen: false,
            ..listener_config(Some(common::WALL_CLOCK))
        },
        now,
    );
    let (_, mut conn) = client.connect(now, addr(SERVER));
    let mut buf = Vec::new();
    let t = conn.poll_transmit(now, &mut buf).expect("a request");
    buf.truncate(t.size);
    buf
}

#[test]
fn a_flood_of_requests_with_a_wrong_key_costs_only_the_budget() {
    let now = Instant::now();
    let mut listener = Endpoint::new(listener_config(Some(common::WALL_CLOCK)), now);
    let forged = first_request(haul(6), now);
    let mut buf = Vec::new();
    let flood = 12_000u32;
    for i in 0..flood {
        let from = std::net::SocketAddr::from(([10, 1, (i >> 8) as u8, i as u8], 4000));
        listener.handle(now, from, &forged, &mut buf);
    }
    let stats = listener.stats();
    // One key tried per request until the second's budget is spent, then only cookies.
    assert_eq!(
        stats.auth_failed + stats.key_trials_over_budget,
        u64::from(flood)
    );
    assert_eq!(
        stats.auth_failed, 10_000,
        "the budget: 10 000 keys a second; {stats:?}"
    );
    assert_eq!(stats.cookies_sent, stats.key_trials_over_budget);
    // A real client meanwhile draws a cookie (two round trips), and a second later connects in
    // one again.
    let real = first_request(haul(5), now);
    let event = listener.handle(now, addr(CLIENT), &real, &mut buf);
    assert!(
        matches!(event, Some(DatagramEvent::Response(_))),
        "{event:?}"
    );
    let later = now + Duration::from_secs(1);
    let real = first_request(haul(5), later);
    let event = listener.handle(later, addr(CLIENT), &real, &mut buf);
    assert!(
        matches!(event, Some(DatagramEvent::NewConnection(..))),
        "{event:?}"
    );
}

#[test]
fn handshakes_survive_loss_duplication_and_reordering_of_every_kind() {
    // Requests, cookie replies, echoes and acceptances lost, repeated and overtaken: whichever
    // of the two key exchanges gets through, both ends agree on keys and the bytes arrive.
    let path = LinkConfig {
        loss: 0.3,
        duplicate: 0.3,
        reorder: 0.3,
        reorder_delay: Duration::from_millis(300),
        ..LinkConfig::wan(100_000_000, Duration::from_millis(200))
    };
    for seed in 1..=24 {
        // Every other listener's clock is two minutes off: its clients take the cookie's way.
        let skew = Duration::from_secs(if seed % 2 == 0 { 0 } else { 120 });
        let mut run = Run::new(100 + seed, 64 << 10, haul(5), haul(5));
        run.set_server_endpoint(listener_config(Some(common::WALL_CLOCK + skew)));
        run.start(path.clone());
        assert!(run.finish(), "seed {seed}");
        assert_eq!(run.sim.node(run.server).sink.bytes, 64 << 10, "seed {seed}");
        let stats = run.sim.node(run.server).endpoint.stats();
        assert_eq!(stats.accepted, 1, "seed {seed}: {stats:?}");
        let one_round_trip = skew.is_zero();
        assert_eq!(
            stats.accepted_without_cookie == 1,
            one_round_trip,
            "seed {seed}: {stats:?}"
        );
    }
}
