//! Receive buffers handed on as [`Bytes`]: a large message (a GRO batch) leaves in the memory
//! the kernel wrote it to, and its slot gets a fresh buffer; a small one is copied into a
//! shared arena, so that a lone packet held by a slow reader pins a few bytes, not a slot.

use crate::socket::{BATCH, MAX_RECV};
use bytes::{Bytes, BytesMut};

/// Messages at least this long are handed on without a copy (the slot they pin is at most
/// four times their size).
const ZERO_COPY_MIN: usize = MAX_RECV / 4;
/// Small messages are copied into arenas of this size.
const ARENA_BYTES: usize = 256 << 10;

/// [`BATCH`] slots of [`MAX_RECV`] bytes for one `recvmmsg`, and the arena for small messages.
pub(crate) struct RecvPool {
    slots: Vec<BytesMut>,
    arena: BytesMut,
}

impl Default for RecvPool {
    fn default() -> Self {
        Self {
            slots: (0..BATCH)
                .map(|_| BytesMut::with_capacity(MAX_RECV))
                .collect(),
            arena: BytesMut::new(),
        }
    }
}

impl RecvPool {
    /// Where the kernel may write: each slot's `MAX_RECV` bytes.
    pub(crate) fn iovecs(&mut self) -> impl Iterator<Item = libc::iovec> + '_ {
        self.slots.iter_mut().map(|slot| {
            slot.clear();
            slot.reserve(MAX_RECV);
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
            // The slot's next `iovecs` finds it shared and takes a fresh buffer.
            return slot.split().freeze();
        }
        if self.arena.capacity() - self.arena.len() < len {
            self.arena = BytesMut::with_capacity(ARENA_BYTES);
        }
        self.arena.extend_from_slice(slot);
        slot.clear();
        self.arena.split().freeze()
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
