//! The receive buffer: a ring of packet slots indexed by extended sequence number.
//!
//! A slot holds its payload as [`Bytes`]: a slice of the datagram the driver received when it
//! hands datagrams over as [`Bytes`] (no copy at all), otherwise a copy in a shared arena.
//! Readers either copy out ([`RecvBuffer::read_stream`]) or take the payloads themselves
//! ([`RecvBuffer::read_chunk`]), so a byte is copied at most once between the datagram and the
//! application. Payloads live in a pool indexed by the slots and reused last-in-first-out, so
//! memory follows what is held, not the window (262 144 packets by default).

use crate::arena::Arena;
use crate::seq::MsgNo;
use crate::wire::MsgInfo;
use bytes::Bytes;
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    Empty,
    Filled,
    /// The sender dropped this packet's message.
    Dropped,
    /// Delivered out of order; skipped when the read point reaches it.
    Consumed,
}

impl SlotState {
    const ALL: [SlotState; 4] = [Self::Empty, Self::Filled, Self::Dropped, Self::Consumed];
}

/// One slot, unpacked. The buffer keeps slots packed into a `u64` each, zero for an empty one,
/// so that a new buffer's slots come from zeroed memory the kernel hands out lazily: a
/// connection does not write its whole window (3 MB by default) before its first packet.
#[derive(Debug, Clone, Copy)]
struct Slot {
    state: SlotState,
    msg: u32,
    /// The pool entry holding the payload ([`NO_PAGE`] when there is none).
    page: u32,
}

/// A slot without a payload.
const NO_PAGE: u32 = u32::MAX;
/// Bits of a packed slot: the state, the message word, then the pool entry plus one (so that 0
/// means [`NO_PAGE`]).
const STATE_BITS: u32 = 2;
const PAGE_SHIFT: u32 = STATE_BITS + 32;
/// Most slots a buffer has: every pool entry plus one must fit the packed slot's 30 page bits.
const MAX_SLOTS: usize = 1 << 29;

impl Slot {
    const EMPTY: Slot = Slot {
        state: SlotState::Empty,
        msg: 0,
        page: NO_PAGE,
    };

    fn pack(self) -> u64 {
        let page = u64::from(self.page.wrapping_add(1));
        self.state as u64 | u64::from(self.msg) << STATE_BITS | page << PAGE_SHIFT
    }

    fn unpack(bits: u64) -> Slot {
        Slot {
            state: SlotState::ALL[(bits & 0b11) as usize],
            msg: (bits >> STATE_BITS) as u32,
            page: ((bits >> PAGE_SHIFT) as u32).wrapping_sub(1),
        }
    }
}

/// Copies of payloads that did not arrive as [`Bytes`] go into blocks of this size, of which
/// this many (512 MiB) are kept for reuse — more than a default window holds.
const ARENA_BYTES: usize = 256 << 10;
const ARENA_KEEP: usize = 2048;

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
    /// Payloads, indexed by the slots' `page`.
    pages: Vec<Bytes>,
    /// Packed [`Slot`]s.
    slots: Vec<u64>,
    /// Largest payload accepted.
    slot_size: usize,
    /// Pool entries given back, most recently freed last (reused first).
    free_pages: Vec<u32>,
    /// Where payloads that arrive as borrowed bytes are copied.
    arena: Arena,
    /// First sequence number not yet consumed by the application.
    read_seq: u64,
    /// Bytes of slot `read_seq` already read (stream mode).
    read_off: usize,
}

impl RecvBuffer {
    /// A buffer of `packets` slots of at most `slot_size` bytes whose first packet is
    /// `first_seq`.
    pub fn new(first_seq: u64, packets: usize, slot_size: usize) -> Self {
        let packets = packets.clamp(2, MAX_SLOTS);
        Self {
            pages: Vec::new(),
            slots: vec![Slot::EMPTY.pack(); packets],
            slot_size,
            free_pages: Vec::new(),
            arena: Arena::new(ARENA_BYTES, ARENA_KEEP),
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

    /// The slot of `seq`.
    fn slot(&self, seq: u64) -> Slot {
        Slot::unpack(self.slots[self.index(seq)])
    }

    fn set_slot(&mut self, seq: u64, slot: Slot) {
        let i = self.index(seq);
        self.slots[i] = slot.pack();
    }

    fn set_state(&mut self, seq: u64, state: SlotState) {
        let slot = self.slot(seq);
        self.set_slot(seq, Slot { state, ..slot });
    }

    /// Stores `payload` in the pool: the most recently freed entry, else a new one.
    fn take_page(&mut self, payload: Bytes) -> u32 {
        match self.free_pages.pop() {
            Some(page) => {
                self.pages[page as usize] = payload;
                page
            }
            None => {
                self.pages.push(payload);
                (self.pages.len() - 1) as u32
            }
        }
    }

    /// Empties the slot of `seq`, releasing its payload.
    fn clear_slot(&mut self, seq: u64) {
        let page = self.slot(seq).page;
        if page != NO_PAGE {
            self.pages[page as usize] = Bytes::new();
            self.free_pages.push(page);
        }
        self.set_slot(seq, Slot::EMPTY);
    }

    fn page_bytes(&self, slot: &Slot) -> &Bytes {
        &self.pages[slot.page as usize]
    }

    /// `payload` as [`Bytes`]: a slice of `owner` when it lies inside it, else a copy.
    fn own(&mut self, payload: &[u8], owner: Option<&Bytes>) -> Bytes {
        if let Some(owner) = owner {
            let (start, base) = (payload.as_ptr() as usize, owner.as_ptr() as usize);
            if start >= base && start + payload.len() <= base + owner.len() {
                return owner.slice_ref(payload);
            }
        }
        self.arena.copy(payload)
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

    /// Stores one packet's payload: without a copy when it lies inside `owner` (the datagram
    /// it came in), else as a copy.
    pub fn insert(
        &mut self,
        seq: u64,
        msg: MsgInfo,
        payload: &[u8],
        owner: Option<&Bytes>,
    ) -> Stored {
        if seq < self.read_seq {
            return Stored::Duplicate;
        }
        if !self.in_window(seq) || payload.len() > self.slot_size {
            return Stored::NoRoom;
        }
        if self.slot(seq).state != SlotState::Empty {
            return Stored::Duplicate;
        }
        let payload = self.own(payload, owner);
        let page = self.take_page(payload);
        self.set_slot(
            seq,
            Slot {
                state: SlotState::Filled,
                msg: msg.to_word(),
                page,
            },
        );
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
            self.set_state(seq, SlotState::Dropped);
        }
        let held_part = |slot: Slot| {
            slot.state == SlotState::Filled && MsgInfo::from_word(slot.msg).number == number
        };
        let mut seq = start;
        while seq > self.read_seq && held_part(self.slot(seq - 1)) {
            seq -= 1;
            self.set_state(seq, SlotState::Dropped);
        }
        let mut seq = end;
        while seq < window_end && held_part(self.slot(seq + 1)) {
            seq += 1;
            self.set_state(seq, SlotState::Dropped);
        }
    }

    /// Whether `read_stream` would return bytes, given that all packets before `end` arrived.
    pub fn has_stream_data(&self, end: u64) -> bool {
        self.read_seq < end
    }

    /// Reads stream bytes from packets before `end` (all of which have arrived).
    pub fn read_stream(&mut self, end: u64, out: &mut [u8]) -> usize {
        let mut written = 0;
        while written < out.len() {
            let copied = self.read_front(end, out.len() - written, |payload, part| {
                out[written..written + part.len()].copy_from_slice(&payload[part.clone()]);
                part.len()
            });
            let Some(n) = copied else {
                break;
            };
            written += n;
        }
        written
    }

    /// Takes up to `max` stream bytes from packets before `end` without copying them: the
    /// rest of one packet at most. `None` when there is nothing to read.
    pub fn read_chunk(&mut self, end: u64, max: usize) -> Option<Bytes> {
        self.read_front(end, max, |payload, part| payload.slice(part))
    }

    /// Hands `take` the next up to `max` unread stream bytes of the front packet (its payload
    /// and the range of them), counting them as read; `None` when nothing before `end` is left.
    fn read_front<R>(
        &mut self,
        end: u64,
        max: usize,
        take: impl FnOnce(&Bytes, Range<usize>) -> R,
    ) -> Option<R> {
        while self.read_seq < end && max > 0 {
            let slot = self.slot(self.read_seq);
            if slot.state != SlotState::Filled {
                self.release_front();
                continue;
            }
            let payload = self.page_bytes(&slot);
            let len = payload.len();
            let n = (len - self.read_off).min(max);
            if n == 0 {
                // An empty payload, or one read to its end.
                self.release_front();
                continue;
            }
            let taken = take(payload, self.read_off..self.read_off + n);
            self.read_off += n;
            if self.read_off == len {
                self.release_front();
            }
            return Some(taken);
        }
        None
    }

    fn release_front(&mut self) {
        self.clear_slot(self.read_seq);
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
            let slot = self.slot(self.read_seq);
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
            let slot = self.slot(seq);
            let info = MsgInfo::from_word(slot.msg);
            if slot.state == SlotState::Filled && info.position.starts_message() && !info.in_order {
                if let Some(last) = self.complete_message_at(seq, high) {
                    let len = self.copy_message(seq, last, out);
                    for s in seq..=last {
                        self.set_state(s, SlotState::Consumed);
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
        let number = MsgInfo::from_word(self.slot(first).msg).number;
        let mut seq = first;
        while seq < high {
            let slot = self.slot(seq);
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
            let slot = self.slot(seq);
            let payload = self.page_bytes(&slot);
            let len = payload.len();
            let n = len.min(out.len() - written);
            out[written..written + n].copy_from_slice(&payload[..n]);
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
    fn slots_pack_to_zero_when_empty_and_round_trip() {
        assert_eq!(Slot::EMPTY.pack(), 0);
        for state in SlotState::ALL {
            for (msg, page) in [(0, 0), (u32::MAX, (MAX_SLOTS - 1) as u32), (7, NO_PAGE)] {
                let back = Slot::unpack(Slot { state, msg, page }.pack());
                assert_eq!((back.state, back.msg, back.page), (state, msg, page));
            }
        }
    }

    #[test]
    fn stream_reads_across_slots_and_partial_reads() {
        let mut b = RecvBuffer::new(10, 4, 8);
        let solo = info(MsgPosition::Solo, 1, false);
        assert_eq!(b.insert(11, solo, b"efgh", None), Stored::New);
        assert_eq!(b.insert(10, solo, b"abcd", None), Stored::New);
        assert_eq!(b.insert(10, solo, b"abcd", None), Stored::Duplicate);
        assert_eq!(b.insert(14, solo, b"x", None), Stored::NoRoom);
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
            assert_eq!(b.insert(seq, solo, &[byte; 8], None), Stored::New);
            assert_eq!(b.read_stream(seq + 1, &mut out), 8);
            assert_eq!(out[..8], [byte; 8]);
        }
        assert_eq!(b.pages.len(), 1, "one page, reused");
        // Out of order: three held at once need three pages, then they are reused.
        for seq in [1002, 1001, 1000] {
            b.insert(seq, solo, &[seq as u8; 8], None);
        }
        assert_eq!(b.read_stream(1003, &mut out), 16);
        assert_eq!(out[..8], [1000u16 as u8; 8]);
        assert_eq!(out[8..16], [1001u16 as u8; 8]);
        assert_eq!(b.pages.len(), 3);
    }

    #[test]
    fn payloads_inside_their_datagram_are_kept_without_a_copy() {
        let mut b = RecvBuffer::new(0, 16, 8);
        let solo = info(MsgPosition::Solo, 1, false);
        let datagram = Bytes::from_static(b"hdr-abcdefgh");
        assert_eq!(
            b.insert(0, solo, &datagram[4..], Some(&datagram)),
            Stored::New
        );
        // Not inside the datagram: copied.
        let elsewhere = *b"ijkl";
        assert_eq!(b.insert(1, solo, &elsewhere, Some(&datagram)), Stored::New);
        let first = b.read_chunk(2, 5).unwrap();
        assert_eq!(&first[..], b"abcde");
        assert_eq!(
            first.as_ptr(),
            datagram[4..].as_ptr(),
            "the datagram's own bytes"
        );
        assert_eq!(&b.read_chunk(2, 100).unwrap()[..], b"fgh");
        let second = b.read_chunk(2, 100).unwrap();
        assert_eq!(&second[..], b"ijkl");
        assert_ne!(second.as_ptr(), elsewhere.as_ptr());
        assert_eq!(b.read_chunk(2, 100), None);
        assert_eq!(b.read_seq(), 2);
    }

    #[test]
    fn unordered_message_overtakes_an_incomplete_one() {
        let mut b = RecvBuffer::new(0, 16, 4);
        b.insert(0, info(MsgPosition::First, 1, true), b"aaaa", None);
        // seq 1 (Last of msg 1) missing
        b.insert(2, info(MsgPosition::Solo, 2, false), b"bb", None);
        let mut out = [0u8; 16];
        assert_eq!(b.read_message(3, &mut out), Some(2));
        assert_eq!(&out[..2], b"bb");
        assert_eq!(b.read_message(3, &mut out), None);
        b.insert(1, info(MsgPosition::Last, 1, true), b"cc", None);
        assert_eq!(b.read_message(3, &mut out), Some(6));
        assert_eq!(&out[..6], b"aaaacc");
        assert_eq!(b.read_message(3, &mut out), None);
        assert_eq!(b.read_seq(), 3);
    }

    #[test]
    fn dropped_messages_are_skipped() {
        let mut b = RecvBuffer::new(0, 16, 4);
        b.insert(0, info(MsgPosition::First, 1, true), b"aaaa", None);
        b.drop_message(0, 1, MsgNo::masked(1));
        b.insert(2, info(MsgPosition::Solo, 2, true), b"z", None);
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
        b.insert(100, m(MsgPosition::Solo, 1), b"a", None);
        // msg 2 = 101..=103, 101 and 103 arrive, 102 lost; then dropped.
        b.insert(101, m(MsgPosition::First, 2), b"bbbb", None);
        b.insert(103, m(MsgPosition::Last, 2), b"bb", None);
        b.insert(104, m(MsgPosition::Solo, 3), b"c", None);
        let mut out = [0u8; 16];
        assert_eq!(b.read_message(105, &mut out), Some(1));
        assert_eq!(b.read_message(105, &mut out), None);
        // The sender no longer holds 101 (acknowledged): it names only 102..=103.
        b.drop_message(102, 103, MsgNo::masked(2));
        assert_eq!(b.read_message(105, &mut out), Some(1));
        assert_eq!(out[0], b'c');
    }
}
