//! Receive buffers handed on as [`Bytes`]: a large message (a GRO batch) leaves in the memory
//! the kernel wrote it to, and its slot takes another block (one whose bytes were all read, if
//! there is one); a small one is copied into a shared arena, so that a lone packet held by a
//! slow reader pins a few bytes, not a slot.

use crate::socket::{BATCH, MAX_RECV};
use bytes::{Bytes, BytesMut};
use haul_proto::arena::{Arena, BlockPool};

/// Messages at least this long are handed on without a copy (the slot they pin is at most
/// four times their size).
const ZERO_COPY_MIN: usize = MAX_RECV / 4;
/// Small messages are copied into blocks of this size.
const ARENA_BYTES: usize = 256 << 10;
/// Retired blocks kept for reuse (512 MiB of each kind at most: received data waits in them
/// until the application reads it).
const SLOTS_KEEP: usize = 8192;
const ARENA_KEEP: usize = 2048;

/// [`BATCH`] slots of [`MAX_RECV`] bytes for one `recvmmsg`, and the arena for small messages.
pub(crate) struct RecvPool {
    slots: Vec<BytesMut>,
    /// Where slots whose memory was handed out get their next buffer.
    blocks: BlockPool,
    arena: Arena,
}

impl Default for RecvPool {
    fn default() -> Self {
        let mut blocks = BlockPool::new(MAX_RECV, SLOTS_KEEP);
        Self {
            slots: (0..BATCH).map(|_| blocks.take(MAX_RECV)).collect(),
            blocks,
            arena: Arena::new(ARENA_BYTES, ARENA_KEEP),
        }
    }
}

impl RecvPool {
    /// Where the kernel may write: each slot's `MAX_RECV` bytes.
    pub(crate) fn iovecs(&mut self) -> impl Iterator<Item = libc::iovec> + '_ {
        let blocks = &mut self.blocks;
        self.slots.iter_mut().map(move |slot| {
            slot.clear();
            if slot.capacity() < MAX_RECV {
                let handed_out = std::mem::replace(slot, blocks.take(MAX_RECV));
                blocks.retire(handed_out);
            }
            let spare = slot.spare_capacity_mut();
            libc::iovec {
                iov_base: spare.as_mut_ptr() as *mut libc::c_void,
                iov_len: MAX_RECV,
            }
        })
    }

    /// The `len` bytes the last receive wrote into slot `i`.
    pub(crate) fn take(&mut self, i: usize, len: usize) -> Bytes {
        let slot = &mut self.slots[i];
        let len = len.min(MAX_RECV);
        // SAFETY: the kernel wrote `len` bytes at the start of this slot's spare capacity
        // (the `recvmmsg` that reported them used the pointers `iovecs` gave).
        unsafe { slot.set_len(len) };
        if len >= ZERO_COPY_MIN {
            // The slot's next `iovecs` finds it short of room and takes another block.
            return slot.split().freeze();
        }
        let copy = self.arena.copy(slot);
        slot.clear();
        copy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `len` bytes of `byte` where the kernel would, then takes them.
    fn receive(pool: &mut RecvPool, i: usize, len: usize, byte: u8) -> Bytes {
        let iov = pool.iovecs().nth(i).unwrap();
        // SAFETY: the iovec points at MAX_RECV writable bytes of slot `i`.
        unsafe { std::ptr::write_bytes(iov.iov_base as *mut u8, byte, len) };
        pool.take(i, len)
    }

    #[test]
    fn large_messages_keep_their_memory_and_small_ones_are_copied() {
        let mut pool = RecvPool::default();
        let slot_start = pool.iovecs().next().unwrap().iov_base as usize;
        let large = receive(&mut pool, 0, MAX_RECV, 7);
        assert_eq!(large.as_ptr() as usize, slot_start, "no copy");
        assert!(large.iter().all(|&b| b == 7));
        // The slot is still pinned by `large`: the next receive writes elsewhere.
        let next = pool.iovecs().next().unwrap().iov_base as usize;
        assert_ne!(next, slot_start);
        let small = receive(&mut pool, 0, 100, 9);
        assert_eq!(&small[..], &[9; 100][..]);
        assert_ne!(small.as_ptr() as usize, next, "copied out of the slot");
        let again = receive(&mut pool, 0, 50, 3);
        assert_eq!(&again[..], &[3; 50][..]);
        assert_eq!(&small[..], &[9; 100][..], "earlier copies stay intact");
        assert!(large.iter().all(|&b| b == 7));
    }
}
