//! Simulated transfers: every byte written is delivered, exactly, under delay, loss, bursty loss,
//! reordering, duplication, corruption and garbage.

mod common;

use common::{addr, Host, Source};
use haul_proto::cc::FixedRateFactory;
use haul_proto::seq::SeqNo;
use haul_proto::ConnectionConfig;
use haul_sim::{GilbertElliott, Injector, LinkConfig, Simulation};
use rand::{Rng, RngCore};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CLIENT: &str = "10.0.0.1:4000";
const SERVER: &str = "10.0.0.2:9000";

struct Outcome {
    virtual_time: Duration,
    retransmitted: u64,
    sent: u64,
}

/// Sends `bytes` from client to server over `link` (both directions) and checks the hash.
fn transfer(
    seed: u64,
    bytes: u64,
    link: LinkConfig,
    config: ConnectionConfig,
    setup: impl FnOnce(&mut Simulation<Host>),
) -> Outcome {
    transfer_from_isn(seed, bytes, link, config, None, setup)
}

fn transfer_from_isn(
    seed: u64,
    bytes: u64,
    link: LinkConfig,
    config: ConnectionConfig,
    isn: Option<SeqNo>,
    setup: impl FnOnce(&mut Simulation<Host>),
) -> Outcome {
    let mut sim: Simulation<Host> = Simulation::new(seed);
    let now = sim.now();
    let mut client = Host::new(config.clone(), false, seed ^ 1, now);
    client.source = Some(Source::new(seed, bytes));
    let server = Host::new(config, true, seed ^ 2, now);
    let c = sim.add_node(addr(CLIENT), client);
    let s = sim.add_node(addr(SERVER), server);
    sim.set_path(addr(CLIENT), addr(SERVER), link);
    setup(&mut sim);
    match isn {
        Some(isn) => sim.node_mut(c).connect_with_isn(now, addr(SERVER), isn),
        None => sim.node_mut(c).connect(now, addr(SERVER)),
    };
    let finished = sim.run_until(Duration::from_secs(3600), |sim| {
        sim.node(s).sink.eof && sim.node(c).closed()
    });
    let stats = sim.node_mut(c).conn().stats();
    assert!(
        finished,
        "transfer did not finish: {} of {bytes} bytes after {:?} virtual; client {:?}",
        sim.node(s).sink.bytes,
        sim.elapsed(),
        stats
    );
    let src_hash = sim.node(c).source.as_ref().unwrap().hasher.finalize();
    assert_eq!(sim.node(s).sink.bytes, bytes);
    assert_eq!(
        sim.node(s).sink.hasher.finalize(),
        src_hash,
        "payload differs"
    );
    Outcome {
        virtual_time: sim.elapsed(),
        retransmitted: stats.packets_retransmitted,
        sent: stats.packets_sent,
    }
}

fn lossy(rate_bps: u64, rtt_ms: u64, loss: f64) -> LinkConfig {
    LinkConfig {
        loss,
        ..LinkConfig::wan(rate_bps, Duration::from_millis(rtt_ms))
    }
}

#[test]
fn clean_path_without_queue_drops_needs_no_retransmission() {
    // Nothing is lost, so any retransmission would be a spurious timeout (at 300 ms RTT a
    // timeout computed from a default RTT instead of a measured one fires before the first ACK).
    for rtt in [10, 100, 300] {
        let link = LinkConfig {
            queue_bytes: usize::MAX,
            ..lossy(100_000_000, rtt, 0.0)
        };
        let out = transfer(1, 8 << 20, link, ConnectionConfig::default(), |_| {});
        assert_eq!(out.retransmitted, 0, "spurious retransmissions at {rtt} ms");
        assert!(out.sent > 5_000);
    }
}

#[test]
fn rtt_and_loss_grid_with_the_default_controller() {
    for (i, rtt) in [0u64, 10, 100, 300].into_iter().enumerate() {
        for (j, loss) in [0.0, 0.01, 0.05, 0.10].into_iter().enumerate() {
            let seed = 100 + (i * 4 + j) as u64;
            let started = Instant::now();
            let out = transfer(
                seed,
                2 << 20,
                lossy(100_000_000, rtt, loss),
                ConnectionConfig::default(),
                |_| {},
            );
            eprintln!(
                "rtt {rtt:>3} ms loss {:>4.1}%: {:>8.2?} virtual, {} sent, {} retransmitted, {:?} cpu",
                loss * 100.0,
                out.virtual_time,
                out.sent,
                out.retransmitted,
                started.elapsed()
            );
        }
    }
}

fn fixed_rate(bits_per_second: u64) -> ConnectionConfig {
    ConnectionConfig {
        congestion: Arc::new(FixedRateFactory { bits_per_second }),
        ..ConnectionConfig::default()
    }
}

#[test]
fn heavy_random_loss_at_a_fixed_rate() {
    // A fixed-rate sender does not back off, so recovery alone must deliver the bytes.
    for (rtt, loss) in [(100, 0.10), (300, 0.10), (10, 0.20)] {
        transfer(
            7,
            8 << 20,
            lossy(100_000_000, rtt, loss),
            fixed_rate(90_000_000),
            |_| {},
        );
    }
}

#[test]
fn bursty_loss() {
    let link = LinkConfig {
        bursty: Some(GilbertElliott {
            good_to_bad: 0.01,
            bad_to_good: 0.3,
            loss_good: 0.001,
            loss_bad: 0.5,
        }),
        ..LinkConfig::wan(100_000_000, Duration::from_millis(50))
    };
    transfer(
        8,
        4 << 20,
        link.clone(),
        ConnectionConfig::default(),
        |_| {},
    );
    transfer(9, 8 << 20, link, fixed_rate(80_000_000), |_| {});
}

#[test]
fn reordering_and_duplication() {
    let link = LinkConfig {
        reorder: 0.05,
        reorder_delay: Duration::from_millis(3),
        duplicate: 0.05,
        jitter: Duration::from_micros(500),
        ..lossy(100_000_000, 20, 0.01)
    };
    transfer(
        10,
        4 << 20,
        link.clone(),
        ConnectionConfig::default(),
        |_| {},
    );
    transfer(11, 8 << 20, link, fixed_rate(80_000_000), |_| {});
}

#[test]
fn sequence_numbers_wrap_during_the_transfer() {
    // Start 1000 packets before 0x7FFF_FFFF: the transfer crosses the wrap, with loss.
    let isn = SeqNo::new(SeqNo::MAX - 1000).unwrap();
    let link = lossy(100_000_000, 20, 0.02);
    transfer_from_isn(12, 6 << 20, link, fixed_rate(80_000_000), Some(isn), |_| {});
    let isn = SeqNo::new(SeqNo::MAX - 3).unwrap();
    transfer_from_isn(
        13,
        2 << 20,
        lossy(100_000_000, 20, 0.01),
        ConnectionConfig::default(),
        Some(isn),
        |_| {},
    );
}

/// Sends `bytes` over a link that flips one bit in `corrupt` of the packets, past the UDP
/// checksum. The `udt4` dialect has no integrity check of its own (the reference has none), so
/// the bytes may differ; the connection must still neither panic nor stall.
fn corrupted_transfer(seed: u64, bytes: u64, corrupt: f64) -> (u64, bool) {
    let mut sim: Simulation<Host> = Simulation::new(seed);
    let now = sim.now();
    let config = fixed_rate(80_000_000);
    let mut client = Host::new(config.clone(), false, seed ^ 1, now);
    client.source = Some(Source::new(seed, bytes));
    let c = sim.add_node(addr(CLIENT), client);
    let s = sim.add_node(addr(SERVER), Host::new(config, true, seed ^ 2, now));
    let link = LinkConfig {
        corrupt,
        ..lossy(100_000_000, 20, 0.01)
    };
    sim.set_path(addr(CLIENT), addr(SERVER), link);
    sim.node_mut(c).connect(now, addr(SERVER));
    let done = sim.run_until(Duration::from_secs(600), |sim| {
        sim.node(s).sink.eof || sim.node(c).closed()
    });
    let same = sim.node(s).sink.hasher.finalize()
        == sim.node(c).source.as_ref().unwrap().hasher.finalize();
    assert!(done, "corruption stalled the connection");
    (sim.node(s).sink.bytes, same)
}

#[test]
fn corruption_never_panics_or_stalls() {
    // Clean run: identical.
    assert_eq!(corrupted_transfer(16, 2 << 20, 0.0), (2 << 20, true));
    // Every packet hit: the connection must survive whatever the flipped bits mean.
    for seed in 17..20 {
        corrupted_transfer(seed, 1 << 20, 0.3);
    }
}

#[test]
fn injected_garbage_datagrams_are_ignored() {
    let link = lossy(100_000_000, 20, 0.01);
    transfer(14, 4 << 20, link, fixed_rate(80_000_000), |sim| {
        for (to, from) in [(SERVER, "10.6.6.6:666"), (CLIENT, SERVER)] {
            // Random bytes of random length, from a stranger and spoofing the peer.
            sim.inject(Injector {
                from: addr(from),
                to: addr(to),
                interval: Duration::from_micros(300),
                count: 5_000,
                generator: Box::new(|rng| {
                    let mut b = vec![0u8; rng.gen_range(0..1600)];
                    rng.fill_bytes(&mut b);
                    b
                }),
            });
        }
        // Well-formed control packets of every type with random bodies, addressed to the
        // listener (destination 0) and to small socket ids.
        sim.inject(Injector {
            from: addr(CLIENT),
            to: addr(SERVER),
            interval: Duration::from_micros(700),
            count: 3_000,
            generator: Box::new(|rng| {
                let mut b = vec![0u8; 16 + 4 * rng.gen_range(0..14)];
                rng.fill_bytes(&mut b);
                b[0] = 0x80;
                b[1] = rng.gen_range(0..10);
                b[12..16].copy_from_slice(&[0, 0, 0, rng.gen_range(0..2)]);
                b
            }),
        });
    });
}

#[test]
fn simulated_gigabit_transfer_is_cheap() {
    // 100 MB over a simulated 1 Gbit/s, 10 ms path: a check that simulation scales (the CPU
    // time is printed, not asserted: benchmarks are not timed tests).
    let started = Instant::now();
    let out = transfer(
        15,
        100 << 20,
        lossy(1_000_000_000, 10, 0.0),
        fixed_rate(1_000_000_000),
        |_| {},
    );
    eprintln!(
        "100 MB at 1 Gbit/s: {:?} virtual, {:?} CPU, {} packets",
        out.virtual_time,
        started.elapsed(),
        out.sent
    );
    assert!(out.virtual_time < Duration::from_secs(2));
}

#[test]
fn forged_packets_addressed_to_live_sockets_are_harmless() {
    // Packets that carry the real destination ids reach each connection's own parser. Forged
    // ACKs, shutdowns and in-window data cannot be told from real ones in the unauthenticated
    // udt4 dialect (the haul dialect's AEAD rejects them), so the forgeries here are every other
    // kind: handshakes, keep-alives, NAKs, ACK2s, warnings, drop requests, user packets,
    // malformed bodies, and data outside the receive window.
    let seed = 21;
    let bytes = 4u64 << 20;
    let mut sim: Simulation<Host> = Simulation::new(seed);
    let now = sim.now();
    let config = fixed_rate(80_000_000);
    let mut client = Host::new(config.clone(), false, 1, now);
    client.source = Some(Source::new(seed, bytes));
    let c = sim.add_node(addr(CLIENT), client);
    let s = sim.add_node(addr(SERVER), Host::new(config, true, 2, now));
    sim.set_path(addr(CLIENT), addr(SERVER), lossy(100_000_000, 20, 0.01));
    // A known ISN, so that forged data can be placed outside the window for sure.
    let isn = SeqNo::new(1000).unwrap();
    sim.node_mut(c).connect_with_isn(now, addr(SERVER), isn);
    assert!(
        sim.run_until(Duration::from_secs(5), |sim| sim.node(s).accepted.len()
            == 1)
    );
    let client_id = sim.node_mut(c).conn().local_id();
    let server_id = sim.node_mut(s).conn().local_id();
    for (from, to, dest) in [(SERVER, CLIENT, client_id), (CLIENT, SERVER, server_id)] {
        sim.inject(Injector {
            from: addr(from),
            to: addr(to),
            interval: Duration::from_micros(200),
            count: 10_000,
            generator: Box::new(move |rng| forged(rng, dest)),
        });
    }
    let done = sim.run_until(Duration::from_secs(600), |sim| {
        sim.node(s).sink.eof && sim.node(c).closed()
    });
    assert!(done, "transfer stalled under forged packets");
    assert_eq!(sim.node(s).sink.bytes, bytes);
    assert_eq!(
        sim.node(s).sink.hasher.finalize(),
        sim.node(c).source.as_ref().unwrap().hasher.finalize()
    );
    assert!(
        sim.node_mut(s).conn().stats().packets_invalid > 0,
        "forgeries reached the parser"
    );
}

/// One forged datagram for socket `dest`.
fn forged(rng: &mut rand::rngs::SmallRng, dest: u32) -> Vec<u8> {
    const TYPES: [u16; 7] = [0, 1, 3, 4, 6, 7, 0x7FFF];
    let data = rng.gen_bool(0.3);
    let mut b = vec![0u8; 20 + 4 * rng.gen_range(0..16)];
    rng.fill_bytes(&mut b);
    if data {
        // The transfer uses sequence numbers just above 1000: these are a quarter to half the
        // number space away, never inside the window.
        b[0] = rng.gen_range(0x40..0x7F);
    } else {
        let ty = TYPES[rng.gen_range(0..TYPES.len())];
        b[0] = 0x80 | (ty >> 8) as u8;
        b[1] = ty as u8;
        if ty == 3 {
            // NAK of packets far beyond anything sent.
            b[16] = 0x70;
        }
    }
    b[12..16].copy_from_slice(&dest.to_be_bytes());
    b
}

#[test]
fn slow_reader_is_never_overrun() {
    // A 64-packet receive buffer and a reader that takes 8 KiB every 5 ms (~13 Mbit/s) behind a
    // 100 Mbit/s link: the flow window must hold the sender back, and nothing may be lost.
    let config = ConnectionConfig {
        recv_buffer_packets: 64,
        send_buffer_bytes: 256 << 10,
        ..ConnectionConfig::default()
    };
    let mut sim: Simulation<Host> = Simulation::new(30);
    let now = sim.now();
    let mut client = Host::new(config.clone(), false, 1, now);
    client.source = Some(Source::new(30, 2 << 20));
    let mut server = Host::new(config, true, 2, now);
    server.auto_app = false;
    let c = sim.add_node(addr(CLIENT), client);
    let s = sim.add_node(addr(SERVER), server);
    sim.set_path(addr(CLIENT), addr(SERVER), lossy(100_000_000, 20, 0.0));
    sim.node_mut(c).connect(now, addr(SERVER));
    let mut hasher = blake3::Hasher::new();
    let mut got = 0u64;
    let mut next_read = now;
    let mut buf = vec![0u8; 8 << 10];
    let done = sim.run_until(Duration::from_secs(60), |sim| {
        if sim.now() >= next_read {
            next_read = sim.now() + Duration::from_millis(5);
            if let Some(conn) = sim.node_mut(s).conns.values_mut().next() {
                match conn.read(&mut buf) {
                    Ok(0) => return true,
                    Ok(n) => {
                        hasher.update(&buf[..n]);
                        got += n as u64;
                    }
                    Err(_) => {}
                }
            }
        }
        false
    });
    // Both ends may finish (everything acknowledged, closed) while data still waits in the
    // receive buffer: a closed connection still hands it over, then reports end of stream.
    let conn = sim.node_mut(s).conn();
    if !done {
        loop {
            match conn.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    hasher.update(&buf[..n]);
                    got += n as u64;
                }
                Err(e) => panic!("reading what is left after close: {e}"),
            }
        }
    }
    assert_eq!(got, 2 << 20);
    assert_eq!(
        hasher.finalize(),
        sim.node(c).source.as_ref().unwrap().hasher.finalize()
    );
    let server_stats = sim.node_mut(s).conn().stats();
    assert_eq!(
        server_stats.packets_lost, 0,
        "the window, not loss, limited the sender"
    );
    let events = &sim.node(c).events;
    assert!(
        events
            .iter()
            .any(|(_, e)| *e == haul_proto::Event::Writable),
        "a blocked writer is told when it can write again"
    );
}

#[test]
fn same_seed_replays_the_same_run() {
    let run = |seed| {
        let link = LinkConfig {
            jitter: Duration::from_millis(2),
            reorder: 0.02,
            ..lossy(50_000_000, 40, 0.03)
        };
        let out = transfer(seed, 1 << 20, link, ConnectionConfig::default(), |_| {});
        (out.virtual_time, out.sent, out.retransmitted)
    };
    assert_eq!(run(40), run(40));
    assert_ne!(run(40), run(41));
}
