//! The sans-IO core's per-packet cost: moves N packets' worth of stream bytes between two
//! connections in memory (`pair`), 10 Gbit/s bottleneck, 1 ms each way, the default controller.
//!
//!     cargo bench -p haul-proto --bench data_path -- [PACKETS]
//!
//! Prints wall time per packet. `bench/callgrind.sh` runs it under callgrind at two sizes and
//! takes the difference: instructions per packet, free of set-up and of the machine's noise —
//! the figure CI holds to a budget.

mod pair;

use std::time::Instant;

/// Stream bytes per packet at the default MSS (1500 − IP, UDP and haul headers).
const PAYLOAD: u64 = 1456;

fn main() {
    // `cargo bench` passes `--bench`; the first number is the packet count.
    let packets: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(200_000);
    let mut pair = pair::Pair::connect();
    let started = Instant::now();
    pair.transfer(packets * PAYLOAD);
    let elapsed = started.elapsed();
    println!(
        "{packets} packets ({} bytes) in {:.3} s: {:.0} ns per packet",
        pair.delivered,
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e9 / packets as f64
    );
}
