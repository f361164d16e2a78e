//! The sans-IO core's per-packet cost: moves N packets' worth of stream bytes between two
//! connections in memory (`pair`), 10 Gbit/s bottleneck, 1 ms each way, in the plain `udt4`
//! dialect or (argument `haul`) the encrypted one.
//!
//!     cargo bench -p haul-proto --bench data_path -- [PACKETS] [udt4|haul]
//!
//! Prints wall time per packet. `bench/callgrind.sh` runs it under callgrind at two sizes and
//! takes the difference: instructions per packet, free of set-up and of the machine's noise —
//! the figure CI holds to a budget.

mod pair;

use haul_proto::secure::PresharedKey;
use haul_proto::Dialect;
use std::time::Instant;

fn main() {
    // `cargo bench` passes `--bench`: the first number is the packet count, a word the dialect.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let packets: u64 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(200_000);
    let (name, dialect) = if args.iter().any(|a| a == "haul") {
        ("haul", Dialect::Haul(PresharedKey::from_bytes([7; 32])))
    } else {
        ("udt4", Dialect::Udt4)
    };
    let mut pair = pair::Pair::connect(dialect);
    let started = Instant::now();
    pair.transfer(packets * pair::PAYLOAD);
    let elapsed = started.elapsed();
    let sent = pair.packets_sent();
    println!(
        "{name}: {} bytes in {sent} packets in {:.3} s: {:.0} ns per packet",
        pair.delivered,
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e9 / sent as f64
    );
    // For bench/callgrind.sh.
    println!("packets_sent={sent}");
}
