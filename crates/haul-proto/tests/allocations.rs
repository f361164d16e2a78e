//! Once warm, the data path allocates nothing per packet: payloads are shared slices of the
//! send buffer's chunks and of the received datagrams, headers go into reused buffers, and
//! receive memory comes from recycled blocks (`haul_proto::arena`). A per-packet allocation
//! creeping back in (a `Vec` per ACK, a boxed event) fails this test, whatever the machine's
//! noise — a timed test could not tell.

#[path = "../benches/pair/mod.rs"]
mod pair;

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

/// Stream bytes per packet at the default MSS.
const PAYLOAD: u64 = 1456;

#[test]
fn a_warm_data_path_allocates_nothing_per_packet() {
    let packets = 20_000;
    let mut pair = pair::Pair::connect();
    // Warm: start-up over, buffers and pools at their working size.
    pair.transfer(2 * packets * PAYLOAD);
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    pair.transfer(packets * PAYLOAD);
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    eprintln!("{allocations} allocations over {packets} packets");
    assert!(
        allocations * 1000 <= packets,
        "{allocations} allocations over {packets} packets: more than one per thousand"
    );
}
