//! The receive buffer: a ring of packet slots indexed by extended sequence number.
//!
//! Payload bytes are copied once, from the datagram into a page, and once more into the
//! application's buffer. Slots borrow pages from a last-in-first-out free list, so a reader
//! that keeps up reuses the few pages it just emptied — still in the CPU cache — instead of
//! walking the whole window's memory (384 MiB by default). The page store is allocated zeroed,
//! so pages never used cost no memory.

use crate::seq::MsgNo;
use crate::wire::MsgInfo;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    Empty,
    Filled,
    /// The sender dropped this packet's message.
    Dropped,
    /// Delivered out of order; skipped when the read point reaches it.
    Consumed,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    state: SlotState,
    len: u16,
    msg: u32,
    /// The page holding the payload ([`NO_PAGE`] when there is none).
    page: u32,
}

/// A slot without a page.
const NO_PAGE: u32 = u32::MAX;

const EMPTY: Slot = Slot {
    state: SlotState::Empty,
    len: 0,
    msg: 0,
    page: NO_PAGE,
};

/// What became of an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// Stored in its slot.
    New,
    /// That slot already held it (or it was already read).
    Duplicate,
    /// Beyond the buffer: dropped.
    NoRoom,
}

/// Received packets waiting for the application.
#[derive(Debug)]
pub struct RecvBuffer {
    /// One page of `slot_size` bytes per slot at most.
    data: Vec<u8>,
    slots: Vec<Slot>,
    slot_size: usize,
    /// Pages given back, most recently freed last (it is reused first).
    free_pages: Vec<u32>,
    /// Pages `0..fresh_pages` have been handed out at least once.
    fresh_pages: u32,
    /// First sequence number not yet consumed by the application.
    read_seq: u64,
    /// Bytes of slot `read_seq` already read (stream mode).
    read_off: usize,
}

impl RecvBuffer {
    /// A buffer of `packets` slots of `slot_size` bytes whose first packet is `first_seq`.
    pub fn new(first_seq: u64, packets: usize, slot_size: usize) -> Self {
        let packets = packets.max(2);
        Self {
            data: vec![0; packets * slot_size],
            slots: vec![EMPTY; packets],
            slot_size,
            free_pages: Vec::new(),
            fresh_pages: 0,
            read_seq: first_seq,
            read_off: 0,
        }
    }

    fn cap(&self) -> u64 {
        self.slots.len() as u64
    }

    fn index(&self, seq: u64) -> usize {
        (seq % self.cap()) as usize
    }

    /// Takes a page: the most recently freed one, else one never used. There are as many
    /// pages as slots, so a slot that needs one always gets one.
    fn take_page(&mut self) -> u32 {
        self.free_pages.pop().unwrap_or_else(|| {
            self.fresh_pages += 1;
            self.fresh_pages - 1
        })
    }

    /// Empties slot `i`, giving its page back.
    fn clear_slot(&mut self, i: usize) {
        let page = self.slots[i].page;
        if page != NO_PAGE {
            self.free_pages.push(page);
        }
        self.slots[i] = EMPTY;
    }

    fn page_bytes(&self, slot: &Slot) -> &[u8] {
        let start = slot.page as usize * self.slot_size;
        &self.data[start..start + slot.len as usize]
    }

    /// Moves an untouched buffer to start at `first_seq` (a rendezvous learns the peer's ISN late).
    pub fn restart(&mut self, first_seq: u64) {
        self.read_seq = first_seq;
        self.read_off = 0;
    }

    /// First sequence number the application has not consumed.
    pub fn read_seq(&self) -> u64 {
        self.read_seq
    }

    /// Free slots beyond `ack_point` (everything before it is held until read).
    pub fn available(&self, ack_point: u64) -> u64 {
        self.cap()
            .saturating_sub(ack_point.saturating_sub(self.read_seq))
    }

    /// Whether `seq` falls inside the buffer window.
    pub fn in_window(&self, seq: u64) -> bool {
        seq >= self.read_seq && seq < self.read_seq + self.cap()
    }

    /// Whether everything before `seq` was read and `seq` itself is not held.
    pub fn is_drained_to(&self, seq: u64) -> bool {
        seq == self.read_seq
            && self.read_off == 0
            && self.slots[self.index(seq)].state == SlotState::Empty
    }

    /// Counts packet `seq` as read without storing it (the application took it directly);
    /// only valid when [`RecvBuffer::is_drained_to`] holds.
    pub fn skip_read(&mut self, seq: u64) {
        debug_assert!(self.is_drained_to(seq));
        self.read_seq = seq + 1;
    }

    /// Stores one packet's payload.
    pub fn insert(&mut self, seq: u64, msg: MsgInfo, payload: &[u8]) -> Stored {
        if seq < self.read_seq {
            return Stored::Duplicate;
        }
        if !self.in_window(seq) || payload.len() > self.slot_size {
            return Stored::NoRoom;
        }
        let i = self.index(seq);
        if self.slots[i].state != SlotState::Empty {
            return Stored::Duplicate;
        }
        let page = self.take_page();
        let start = page as usize * self.slot_size;
        self.data[start..start + payload.len()].copy_from_slice(payload);
        self.slots[i] = Slot {
            state: SlotState::Filled,
            len: payload.len() as u16,
            msg: msg.to_word(),
            page,
        };
        Stored::New
    }

    /// Drops message `number`: marks `first..=last` (the parts inside the window) and every
    /// adjacent held packet of the same message. The sender names only the packets it still
    /// holds, so the head of the message may already sit here, acknowledged.
    pub fn drop_message(&mut self, first: u64, last: u64, number: MsgNo) {
        let window_end = self.read_seq + self.cap() - 1;
        let start = first.max(self.read_seq);
        let end = last.min(window_end);
        for seq in start..=end {
            let i = self.index(seq);
            self.slots[i].state = SlotState::Dropped;
        }
        let held_part = |slot: &Slot| {
            slot.state == SlotState::Filled && MsgInfo::from_word(slot.msg).number == number
        };
        let mut seq = start;
        while seq > self.read_seq && held_part(&self.slots[self.index(seq - 1)]) {
            seq -= 1;
            let i = self.index(seq);
            self.slots[i].state = SlotState::Dropped;
        }
        let mut seq = end;
        while seq < window_end && held_part(&self.slots[self.index(seq + 1)]) {
            seq += 1;
            let i = self.index(seq);
            self.slots[i].state = SlotState::Dropped;
        }
    }

    /// Whether `read_stream` would return bytes, given that all packets before `end` arrived.
    pub fn has_stream_data(&self, end: u64) -> bool {
        self.read_seq < end
    }

    /// Reads stream bytes from packets before `end` (all of which have arrived).
    pub fn read_stream(&mut self, end: u64, out: &mut [u8]) -> usize {
        let mut written = 0;
        while self.read_seq < end && written < out.len() {
            let i = self.index(self.read_seq);
            let slot = self.slots[i];
            if slot.state == SlotState::Filled {
                let avail = slot.len as usize - self.read_off;
                let n = avail.min(out.len() - written);
                let bytes = &self.page_bytes(&slot)[self.read_off..];
                out[written..written + n].copy_from_slice(&bytes[..n]);
                written += n;
                self.read_off += n;
                if self.read_off < slot.len as usize {
                    break;
                }
            }
            self.release_front();
        }
        written
    }

    fn release_front(&mut self) {
        self.clear_slot(self.index(self.read_seq));
        self.read_seq += 1;
        self.read_off = 0;
    }

    /// Reads one complete message into `out` (truncating it if `out` is short, as the reference
    /// does) and returns its full length. In-order messages are delivered in sequence; a message
    /// sent without the in-order flag may overtake an incomplete one. `high` is one past the
    /// highest sequence number received.
    pub fn read_message(&mut self, high: u64, out: &mut [u8]) -> Option<usize> {
        // Skip what was dropped, consumed, or cannot start a message.
        while self.read_seq < high {
            let slot = self.slots[self.index(self.read_seq)];
            let orphan = slot.state == SlotState::Filled
                && !MsgInfo::from_word(slot.msg).position.starts_message();
            if slot.state == SlotState::Dropped || slot.state == SlotState::Consumed || orphan {
                self.release_front();
            } else {
                break;
            }
        }
        if let Some(last) = self.complete_message_at(self.read_seq, high) {
            let len = self.copy_message(self.read_seq, last, out);
            while self.read_seq <= last {
                self.release_front();
            }
            return Some(len);
        }
        let mut seq = self.read_seq;
        while seq < high {
            let slot = self.slots[self.index(seq)];
            let info = MsgInfo::from_word(slot.msg);
            if slot.state == SlotState::Filled && info.position.starts_message() && !info.in_order {
                if let Some(last) = self.complete_message_at(seq, high) {
                    let len = self.copy_message(seq, last, out);
                    for s in seq..=last {
                        let i = self.index(s);
                        self.slots[i].state = SlotState::Consumed;
                    }
                    return Some(len);
                }
            }
            seq += 1;
        }
        None
    }

    /// If a complete message starts at `first`, the sequence number of its last packet.
    fn complete_message_at(&self, first: u64, high: u64) -> Option<u64> {
        let number = MsgInfo::from_word(self.slots[self.index(first)].msg).number;
        let mut seq = first;
        while seq < high {
            let slot = self.slots[self.index(seq)];
            let info = MsgInfo::from_word(slot.msg);
            if slot.state != SlotState::Filled || info.number != number {
                return None;
            }
            if seq == first && !info.position.starts_message() {
                return None;
            }
            if info.position.ends_message() {
                return Some(seq);
            }
            seq += 1;
        }
        None
    }

    fn copy_message(&self, first: u64, last: u64, out: &mut [u8]) -> usize {
        let mut total = 0;
        let mut written = 0;
        for seq in first..=last {
            let slot = self.slots[self.index(seq)];
            let len = slot.len as usize;
            let n = len.min(out.len() - written);
            out[written..written + n].copy_from_slice(&self.page_bytes(&slot)[..n]);
            written += n;
            total += len;
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::MsgPosition;

    fn info(position: MsgPosition, n: u32, in_order: bool) -> MsgInfo {
        MsgInfo {
            position,
            in_order,
            number: MsgNo::masked(n),
        }
    }

    #[test]
    fn stream_reads_across_slots_and_partial_reads() {
        let mut b = RecvBuffer::new(10, 4, 8);
        let solo = info(MsgPosition::Solo, 1, false);
        assert_eq!(b.insert(11, solo, b"efgh"), Stored::New);
        assert_eq!(b.insert(10, solo, b"abcd"), Stored::New);
        assert_eq!(b.insert(10, solo, b"abcd"), Stored::Duplicate);
        assert_eq!(b.insert(14, solo, b"x"), Stored::NoRoom);
        let mut out = [0u8; 3];
        assert_eq!(b.read_stream(12, &mut out), 3);
        assert_eq!(&out, b"abc");
        let mut out = [0u8; 10];
        assert_eq!(b.read_stream(12, &mut out), 5);
        assert_eq!(&out[..5], b"defgh");
        assert_eq!(b.read_seq(), 12);
        assert_eq!(b.available(12), 4);
    }

    #[test]
    fn a_reader_that_keeps_up_reuses_the_same_pages() {
        let mut b = RecvBuffer::new(0, 64, 8);
        let solo = info(MsgPosition::Solo, 1, false);
        let mut out = [0u8; 16];
        for seq in 0..1000u64 {
            let byte = seq as u8;
            assert_eq!(b.insert(seq, solo, &[byte; 8]), Stored::New);
            assert_eq!(b.read_stream(seq + 1, &mut out), 8);
            assert_eq!(out[..8], [byte; 8]);
        }
        assert_eq!(b.fresh_pages, 1, "one page, reused");
        // Out of order: three held at once need three pages, then they are reused.
        for seq in [1002, 1001, 1000] {
            b.insert(seq, solo, &[seq as u8; 8]);
        }
        assert_eq!(b.read_stream(1003, &mut out), 16);
        assert_eq!(out[..8], [1000u16 as u8; 8]);
        assert_eq!(out[8..16], [1001u16 as u8; 8]);
        assert_eq!(b.fresh_pages, 3);
    }

    #[test]
    fn unordered_message_overtakes_an_incomplete_one() {
        let mut b = RecvBuffer::new(0, 16, 4);
        b.insert(0, info(MsgPosition::First, 1, true), b"aaaa");
        // seq 1 (Last of msg 1) missing
        b.insert(2, info(MsgPosition::Solo, 2, false), b"bb");
        let mut out = [0u8; 16];
        assert_eq!(b.read_message(3, &mut out), Some(2));
        assert_eq!(&out[..2], b"bb");
        assert_eq!(b.read_message(3, &mut out), None);
        b.insert(1, info(MsgPosition::Last, 1, true), b"cc");
        assert_eq!(b.read_message(3, &mut out), Some(6));
        assert_eq!(&out[..6], b"aaaacc");
        assert_eq!(b.read_message(3, &mut out), None);
        assert_eq!(b.read_seq(), 3);
    }

    #[test]
    fn dropped_messages_are_skipped() {
        let mut b = RecvBuffer::new(0, 16, 4);
        b.insert(0, info(MsgPosition::First, 1, true), b"aaaa");
        b.drop_message(0, 1, MsgNo::masked(1));
        b.insert(2, info(MsgPosition::Solo, 2, true), b"z");
        let mut out = [0u8; 4];
        assert_eq!(b.read_message(3, &mut out), Some(1));
        assert_eq!(out[0], b'z');
    }
}

#[cfg(test)]
mod drop_tests {
    use super::*;
    use crate::wire::MsgPosition;

    #[test]
    fn dropping_a_message_whose_head_was_acknowledged() {
        let mut b = RecvBuffer::new(100, 16, 4);
        let m = |p, n| MsgInfo {
            position: p,
            in_order: true,
            number: MsgNo::masked(n),
        };
        b.insert(100, m(MsgPosition::Solo, 1), b"a");
        // msg 2 = 101..=103, 101 and 103 arrive, 102 lost; then dropped.
        b.insert(101, m(MsgPosition::First, 2), b"bbbb");
        b.insert(103, m(MsgPosition::Last, 2), b"bb");
        b.insert(104, m(MsgPosition::Solo, 3), b"c");
        let mut out = [0u8; 16];
        assert_eq!(b.read_message(105, &mut out), Some(1));
        assert_eq!(b.read_message(105, &mut out), None);
        // The sender no longer holds 101 (acknowledged): it names only 102..=103.
        b.drop_message(102, 103, MsgNo::masked(2));
        assert_eq!(b.read_message(105, &mut out), Some(1));
        assert_eq!(out[0], b'c');
    }
}
