//! Once warm, the data path allocates nothing per packet: payloads are shared slices of the
//! send buffer's chunks and of the received datagrams, headers go into reused buffers, and
//! receive memory comes from recycled blocks (`haul_proto::arena`). A per-packet allocation
//! creeping back in (a `Vec` per ACK, a boxed event) fails this test, whatever the machine's
//! noise — a timed test could not tell.

#[path = "../benches/pair/mod.rs"]
mod pair;

use haul_proto::secure::PresharedKey;
use haul_proto::Dialect;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

/// The system allocator, counting allocations and reallocations.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is System's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is System's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations, and packets sent, while `packets` more packets' worth of bytes go through a
/// warm pair.
fn allocations_per(dialect: Dialect, packets: u64) -> (u64, u64) {
    let mut pair = pair::Pair::connect(dialect);
    // Warm: start-up over, buffers and pools at their working size.
    pair.transfer(2 * packets * pair::PAYLOAD);
    let (before, sent_before) = (ALLOCATIONS.load(Ordering::Relaxed), pair.packets_sent());
    pair.transfer(packets * pair::PAYLOAD);
    (
        ALLOCATIONS.load(Ordering::Relaxed) - before,
        pair.packets_sent() - sent_before,
    )
}

#[test]
fn a_warm_data_path_allocates_nothing_per_packet() {
    let packets = 20_000;
    for (name, dialect) in [
        ("udt4", Dialect::Udt4),
        ("haul", Dialect::Haul(PresharedKey::from_bytes([7; 32]))),
    ] {
        let (allocations, sent) = allocations_per(dialect, packets);
        eprintln!("{name}: {allocations} allocations over {sent} packets");
        assert!(sent >= packets, "{name}: only {sent} packets sent");
        assert!(
            allocations * 1000 <= sent,
            "{name}: {allocations} allocations over {sent} packets, more than one per thousand"
        );
    }
}
