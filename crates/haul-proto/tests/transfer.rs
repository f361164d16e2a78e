//! Simulated transfers: every byte written is delivered, exactly, under delay, loss, bursty loss,
//! reordering, duplication, corruption and garbage.

mod common;

use common::{addr, Host, Source};
use haul_proto::ConnectionConfig;
use haul_sim::{LinkConfig, Simulation};
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
    let mut sim: Simulation<Host> = Simulation::new(seed);
    let now = sim.now();
    let mut client = Host::new(config.clone(), false, seed ^ 1, now);
    client.source = Some(Source::new(seed, bytes));
    let server = Host::new(config, true, seed ^ 2, now);
    let c = sim.add_node(addr(CLIENT), client);
    let s = sim.add_node(addr(SERVER), server);
    sim.set_path(addr(CLIENT), addr(SERVER), link);
    setup(&mut sim);
    sim.node_mut(c).connect(now, addr(SERVER));
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
    let link = LinkConfig {
        queue_bytes: usize::MAX,
        ..lossy(100_000_000, 10, 0.0)
    };
    let out = transfer(1, 8 << 20, link, ConnectionConfig::default(), |_| {});
    assert_eq!(out.retransmitted, 0);
    assert!(out.sent > 5_000);
}

#[test]
fn rtt_and_loss_grid_with_the_reference_controller() {
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
