//! Memory handed out as [`Bytes`] and reused once every [`Bytes`] into it is gone.
//!
//! A payload kept without a copy pins the block it lies in until the application has read it.
//! Allocating a fresh block each time cost a page fault per 4 KiB (the allocator hands large
//! blocks back to the kernel and maps them again): 80 000–90 000 faults in a 3 s `haul perf`
//! run on loopback. Blocks here are retired instead, and taken again as soon as their last
//! reader is done with them; a pool keeps up to its `keep` blocks (size it to the most data
//! that may wait for the application, as a receive buffer's pages would stay mapped).

use bytes::{Bytes, BytesMut};
use std::collections::VecDeque;

/// Blocks of one size, recycled.
#[derive(Debug)]
pub struct BlockPool {
    block: usize,
    /// Blocks whose bytes were handed out, oldest first; each is reused once they are dropped.
    retired: VecDeque<BytesMut>,
    keep: usize,
}

impl BlockPool {
    /// A pool of `block`-byte blocks that remembers at most `keep` retired ones.
    pub fn new(block: usize, keep: usize) -> Self {
        Self {
            block,
            retired: VecDeque::new(),
            keep,
        }
    }

    /// An empty buffer with room for at least `min` bytes: a retired block nobody reads any
    /// more, else a new one. Blocks are read in about the order they were filled, so only the
    /// two oldest retired blocks are looked at (one still read goes to the back of the line).
    pub fn take(&mut self, min: usize) -> BytesMut {
        for _ in 0..2 {
            let Some(mut block) = self.retired.pop_front() else {
                break;
            };
            block.clear();
            if block.try_reclaim(min) {
                return block;
            }
            self.retired.push_back(block);
        }
        BytesMut::with_capacity(self.block.max(min))
    }

    /// Gives back a buffer [`BlockPool::take`] handed out, whose bytes were split off and may
    /// still be read (all of them, even: an exhausted handle still reclaims its whole block): it
    /// is taken again once they are all dropped.
    pub fn retire(&mut self, block: BytesMut) {
        if self.retired.len() < self.keep {
            self.retired.push_back(block);
        }
    }
}

/// Copies byte strings one after another into recycled blocks.
#[derive(Debug)]
pub struct Arena {
    pool: BlockPool,
    /// The block being filled (none before the first copy).
    current: Option<BytesMut>,
}

impl Arena {
    /// An arena of `block`-byte blocks, remembering at most `keep` retired ones.
    pub fn new(block: usize, keep: usize) -> Self {
        Self {
            pool: BlockPool::new(block, keep),
            current: None,
        }
    }

    /// The buffer to append at most `len` bytes to; split what was appended off it.
    pub fn room(&mut self, len: usize) -> &mut BytesMut {
        let short = self
            .current
            .as_ref()
            .is_none_or(|c| c.capacity() - c.len() < len);
        if short {
            if let Some(full) = self.current.replace(self.pool.take(len)) {
                self.pool.retire(full);
            }
        }
        self.current.get_or_insert_with(BytesMut::new)
    }

    /// A copy of `data`.
    pub fn copy(&mut self, data: &[u8]) -> Bytes {
        let room = self.room(data.len());
        room.extend_from_slice(data);
        room.split().freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exhausted_block_is_reused_once_its_bytes_are_dropped() {
        let mut pool = BlockPool::new(1024, 4);
        let mut block = pool.take(1024);
        let address = block.as_ptr();
        block.extend_from_slice(&[7; 1024]);
        let bytes = block.split().freeze();
        assert_eq!(block.capacity(), 0);
        pool.retire(block);
        // Still read: a new block.
        let other = pool.take(1024);
        assert_ne!(other.as_ptr(), address);
        drop(bytes);
        assert_eq!(pool.take(1024).as_ptr(), address);
    }

    #[test]
    fn a_block_is_reused_once_its_bytes_are_dropped() {
        let mut arena = Arena::new(1024, 4);
        let first = arena.copy(&[1; 1000]);
        let block = first.as_ptr();
        // The block is full: the next copy goes to a new one while `first` is alive.
        let second = arena.copy(&[2; 1000]);
        assert_ne!(second.as_ptr(), block);
        drop(first);
        let third = arena.copy(&[3; 1000]);
        assert_eq!(third.as_ptr(), block, "the first block, reclaimed");
        assert_eq!(&third[..], &[3; 1000][..]);
        assert_eq!(&second[..], &[2; 1000][..]);
    }

    #[test]
    fn blocks_still_read_are_not_reused() {
        let mut pool = BlockPool::new(64, 8);
        let mut block = pool.take(64);
        block.extend_from_slice(&[7; 64]);
        let held = block.split().freeze();
        pool.retire(block);
        let other = pool.take(64);
        assert_ne!(other.as_ptr(), held.as_ptr());
        assert_eq!(&held[..], &[7; 64][..]);
    }
}
