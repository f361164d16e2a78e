//! The send buffer: bytes the application wrote, cut into packets lazily, kept until acknowledged.
//!
//! Stream writes are coalesced: a packet is cut only when the pacer lets one go, so many small
//! writes still fill full-size packets. Messages keep their boundaries.
//!
//! Bytes are held as [`Bytes`] chunks, so a driver can take a packet's payload with a reference
//! count instead of a copy and send it after letting go of the connection. Copying writes go to
//! a tail that becomes a chunk when packets are cut from it; [`SendBuffer::write_bytes`] adds a
//! chunk the application already owns, without a copy.

use crate::seq::MsgNo;
use crate::wire::{MsgInfo, MsgPosition};
use bytes::{Bytes, BytesMut};
use std::collections::VecDeque;
use std::time::Instant;

/// Owned chunks shorter than this are copied into the tail: every chunk but the tail's is then
/// longer than any payload, and a packet spans at most three chunks.
const MIN_OWNED_CHUNK: usize = 64 << 10;
/// The tail grows in steps of at least this much.
const TAIL_BYTES: usize = 256 << 10;

/// A packet that has been cut (sent at least once) and not yet acknowledged.
#[derive(Debug, Clone, Copy)]
pub struct SentPacket {
    /// Stream offset of its first byte.
    offset: u64,
    /// Payload length.
    len: u16,
    /// Message word.
    pub msg: MsgInfo,
    /// Past this instant the message may be dropped instead of retransmitted.
    pub deadline: Option<Instant>,
    /// When it was last sent, and whether that was a retransmission (then it gives no RTT
    /// sample: an ACK cannot tell which copy it answers).
    pub last_sent: Option<(Instant, bool)>,
}

impl SentPacket {
    /// Payload length in bytes.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Stream offset of its first byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

/// A message written but not yet completely cut into packets.
#[derive(Debug, Clone, Copy)]
struct PendingMessage {
    len: usize,
    cut: usize,
    number: MsgNo,
    in_order: bool,
    deadline: Option<Instant>,
}

/// Unacknowledged and unsent application data.
#[derive(Debug)]
pub struct SendBuffer {
    /// Frozen bytes with the stream offset of each chunk's first byte, oldest first.
    chunks: VecDeque<(u64, Bytes)>,
    /// Stream offset of the first byte held (of `chunks[0]`, or of the tail).
    base: u64,
    /// Written bytes not yet frozen into a chunk; they follow the chunks.
    tail: BytesMut,
    /// Stream offset of the first byte not yet cut into a packet.
    cut: u64,
    packets: VecDeque<SentPacket>,
    /// Extended sequence number of `packets[0]`.
    first_seq: u64,
    /// Message boundaries over the uncut bytes (message mode only).
    messages: VecDeque<PendingMessage>,
    next_msg: MsgNo,
    message_mode: bool,
    capacity: usize,
}

impl SendBuffer {
    /// An empty buffer whose first packet will carry `first_seq`.
    pub fn new(first_seq: u64, capacity: usize, message_mode: bool) -> Self {
        Self {
            chunks: VecDeque::new(),
            base: 0,
            tail: BytesMut::new(),
            cut: 0,
            packets: VecDeque::new(),
            first_seq,
            messages: VecDeque::new(),
            next_msg: MsgNo::FIRST,
            message_mode,
            capacity,
        }
    }

    /// Stream offset one past the last byte written.
    fn end(&self) -> u64 {
        self.frozen_end() + self.tail.len() as u64
    }

    /// Stream offset one past the last frozen byte.
    fn frozen_end(&self) -> u64 {
        self.chunks
            .back()
            .map_or(self.base, |(start, chunk)| start + chunk.len() as u64)
    }

    /// Bytes held: written and not yet acknowledged.
    fn held(&self) -> usize {
        (self.end() - self.base) as usize
    }

    /// Bytes that can still be written.
    pub fn free_space(&self) -> usize {
        self.capacity.saturating_sub(self.held())
    }

    /// Largest message the buffer could ever hold.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Copies stream bytes in; returns how many fit.
    pub fn write_stream(&mut self, data: &[u8]) -> usize {
        let n = data.len().min(self.free_space());
        self.append_to_tail(&data[..n]);
        n
    }

    /// Takes stream bytes the caller owns, without a copy (short ones are copied); returns
    /// how many fit.
    pub fn write_bytes(&mut self, data: &Bytes) -> usize {
        let n = data.len().min(self.free_space());
        if n < MIN_OWNED_CHUNK {
            self.append_to_tail(&data[..n]);
        } else {
            self.freeze_tail();
            let start = self.end();
            self.chunks.push_back((start, data.slice(..n)));
        }
        n
    }

    fn append_to_tail(&mut self, data: &[u8]) {
        if self.tail.capacity() - self.tail.len() < data.len() {
            self.tail.reserve(data.len().max(TAIL_BYTES));
        }
        self.tail.extend_from_slice(data);
    }

    /// Makes the tail a chunk (packets are cut from chunks only).
    fn freeze_tail(&mut self) {
        if !self.tail.is_empty() {
            let start = self.frozen_end();
            self.chunks.push_back((start, self.tail.split().freeze()));
        }
    }

    /// Appends one message whole, or nothing if it does not fit.
    pub fn write_message(
        &mut self,
        data: &[u8],
        in_order: bool,
        deadline: Option<Instant>,
    ) -> bool {
        if data.len() > self.free_space() {
            return false;
        }
        self.append_to_tail(data);
        let number = self.take_msg_no();
        self.messages.push_back(PendingMessage {
            len: data.len(),
            cut: 0,
            number,
            in_order,
            deadline,
        });
        true
    }

    fn take_msg_no(&mut self) -> MsgNo {
        let n = self.next_msg;
        self.next_msg = n.next();
        n
    }

    /// Whether bytes wait to be cut into new packets.
    pub fn has_unsent(&self) -> bool {
        self.unsent() > 0
    }

    /// Bytes written but not yet cut into packets.
    pub fn unsent(&self) -> usize {
        (self.end() - self.cut) as usize
    }

    /// Whether nothing remains: every byte was sent and acknowledged.
    pub fn is_empty(&self) -> bool {
        self.held() == 0
    }

    /// Extended sequence number the next new packet will carry.
    pub fn next_seq(&self) -> u64 {
        self.first_seq + self.packets.len() as u64
    }

    /// Extended sequence number of the oldest unacknowledged packet.
    pub fn first_seq(&self) -> u64 {
        self.first_seq
    }

    /// Cuts the next new packet of at most `max_payload` bytes and returns its sequence number.
    pub fn cut_packet(&mut self, max_payload: usize) -> Option<u64> {
        if !self.has_unsent() || max_payload == 0 {
            return None;
        }
        if self.frozen_end() - self.cut < max_payload as u64 {
            self.freeze_tail();
        }
        let unsent = self.unsent();
        let (len, msg, deadline) = if self.message_mode {
            let m = self.messages.front_mut()?;
            let len = (m.len - m.cut).min(max_payload);
            let count = m.len.div_ceil(max_payload).max(1);
            let index = m.cut / max_payload;
            let msg = MsgInfo {
                position: MsgPosition::of(index, count),
                in_order: m.in_order,
                number: m.number,
            };
            let deadline = m.deadline;
            m.cut += len;
            if m.cut >= m.len {
                self.messages.pop_front();
            }
            (len, msg, deadline)
        } else {
            let msg = MsgInfo {
                position: MsgPosition::Solo,
                in_order: false,
                number: self.take_msg_no(),
            };
            (unsent.min(max_payload), msg, None)
        };
        let seq = self.next_seq();
        self.packets.push_back(SentPacket {
            offset: self.cut,
            len: len as u16,
            msg,
            deadline,
            last_sent: None,
        });
        self.cut += len as u64;
        Some(seq)
    }

    /// The packet with extended sequence number `seq`, if it is still held.
    pub fn packet(&self, seq: u64) -> Option<&SentPacket> {
        let index = seq.checked_sub(self.first_seq)?;
        self.packets.get(usize::try_from(index).ok()?)
    }

    /// Records that `seq` was just sent.
    pub fn mark_sent(&mut self, seq: u64, now: Instant, retransmission: bool) {
        if let Some(index) = seq.checked_sub(self.first_seq) {
            if let Some(p) = self.packets.get_mut(index as usize) {
                p.last_sent = Some((now, retransmission));
            }
        }
    }

    /// Appends the payload of `packet` to `out` (one copy, no zero-fill), returning its length.
    pub fn append_payload(&self, packet: &SentPacket, out: &mut Vec<u8>) -> usize {
        let before = out.len();
        self.for_each_part(packet.offset, packet.len(), |chunk, range| {
            out.extend_from_slice(&chunk[range]);
        });
        out.len() - before
    }

    /// Calls `f` with each chunk that holds part of `offset..offset + len` (bytes cut into
    /// packets already) and that part's range in it, in order — one to three parts; false (and
    /// no call) unless all of them are frozen and held.
    pub fn for_each_part(
        &self,
        offset: u64,
        len: usize,
        mut f: impl FnMut(&Bytes, std::ops::Range<usize>),
    ) -> bool {
        let end = offset.saturating_add(len as u64);
        if offset < self.base || end > self.frozen_end() {
            return false;
        }
        if len == 0 {
            return true;
        }
        let mut i = self.chunks.partition_point(|(start, _)| *start <= offset) - 1;
        let mut at = offset;
        while at < end {
            let (start, chunk) = &self.chunks[i];
            let from = (at - start) as usize;
            let to = ((end - start) as usize).min(chunk.len());
            f(chunk, from..to);
            at = start + to as u64;
            i += 1;
        }
        true
    }

    /// Releases every packet before `seq`. Returns how many were released.
    pub fn ack(&mut self, seq: u64) -> u64 {
        let count = seq
            .saturating_sub(self.first_seq)
            .min(self.packets.len() as u64);
        if count == 0 {
            return 0;
        }
        let released_to = match self.packets.get(count as usize) {
            Some(p) => p.offset,
            None => self.cut,
        };
        self.packets.drain(..count as usize);
        self.release_to(released_to);
        self.first_seq += count;
        count
    }

    /// The inclusive sequence range of the message containing `seq`, and its message word.
    /// The part of the message not yet cut is discarded: a dropped message is not sent further.
    pub fn drop_message(&mut self, seq: u64) -> Option<(u64, u64, MsgInfo)> {
        let msg = self.packet(seq)?.msg;
        let same = |p: Option<&SentPacket>| p.is_some_and(|p| p.msg.number == msg.number);
        let mut first = seq;
        while first > self.first_seq && same(self.packet(first - 1)) {
            first -= 1;
        }
        let mut last = seq;
        while same(self.packet(last + 1)) {
            last += 1;
        }
        if let Some(front) = self.messages.front() {
            if front.number == msg.number {
                let rest = (front.len - front.cut) as u64;
                self.messages.pop_front();
                // Uncut bytes of the dropped message are skipped by cutting over them.
                self.skip_uncut(rest);
            }
        }
        Some((first, last, msg))
    }

    /// Forgets the bytes before stream offset `to` (all of them cut and acknowledged).
    fn release_to(&mut self, to: u64) {
        while let Some((start, chunk)) = self.chunks.front_mut() {
            let chunk_end = *start + chunk.len() as u64;
            if chunk_end <= to {
                self.chunks.pop_front();
            } else {
                if *start < to {
                    *chunk = chunk.slice((to - *start) as usize..);
                    *start = to;
                }
                break;
            }
        }
        self.base = to;
    }

    /// Discards `len` uncut bytes at the cut point (they belong to a dropped message).
    fn skip_uncut(&mut self, len: u64) {
        self.freeze_tail();
        let (from, to) = (self.cut, self.cut + len);
        let mut kept = VecDeque::with_capacity(self.chunks.len() + 1);
        for (start, chunk) in self.chunks.drain(..) {
            let chunk_end = start + chunk.len() as u64;
            if chunk_end <= from {
                kept.push_back((start, chunk));
                continue;
            }
            // Later offsets shift down by `len`; nothing cut refers to them yet.
            if start < from {
                kept.push_back((start, chunk.slice(..(from - start) as usize)));
            }
            if chunk_end > to {
                let skip = to.saturating_sub(start) as usize;
                let new_start = start.max(to) - len;
                kept.push_back((new_start, chunk.slice(skip..)));
            }
        }
        self.chunks = kept;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_writes_coalesce_into_full_packets() {
        let mut b = SendBuffer::new(100, 1 << 20, false);
        for _ in 0..10 {
            assert_eq!(b.write_stream(&[7; 300]), 300);
        }
        assert_eq!(b.cut_packet(1456), Some(100));
        assert_eq!(b.cut_packet(1456), Some(101));
        assert_eq!(b.cut_packet(1456), Some(102));
        assert_eq!(b.cut_packet(1456), None);
        let mut out = vec![9u8];
        let len = b.append_payload(b.packet(102).unwrap(), &mut out);
        assert_eq!(len, 3000 - 2912);
        assert_eq!(out.len(), 1 + len, "appended after what was there");
        assert_eq!(b.ack(102), 2);
        assert_eq!(b.first_seq(), 102);
        assert_eq!(b.ack(103), 1);
        assert!(b.is_empty());
    }

    /// A packet's payload as the chunks' own memory, one slice per part.
    fn parts_of(b: &SendBuffer, offset: u64, len: usize) -> Option<Vec<Bytes>> {
        let mut parts = Vec::new();
        b.for_each_part(offset, len, |chunk, range| parts.push(chunk.slice(range)))
            .then_some(parts)
    }

    /// A packet's payload, gathered from its parts.
    fn payload_of(b: &SendBuffer, offset: u64, len: usize) -> Option<Vec<u8>> {
        parts_of(b, offset, len).map(|parts| parts.concat())
    }

    #[test]
    fn payloads_follow_the_chunks_whatever_the_writes() {
        let mut b = SendBuffer::new(0, 1 << 22, false);
        let byte_at = |offset: u64| (offset % 251) as u8;
        let mut written = 0u64;
        let mut most_parts = 0;
        for round in 0..60u64 {
            let size = if round % 5 == 0 {
                MIN_OWNED_CHUNK as u64 + round * 13
            } else {
                300 + round * 37 % 500
            };
            let data: Vec<u8> = (written..written + size).map(byte_at).collect();
            written += if round % 2 == 0 {
                b.write_bytes(&Bytes::from(data)) as u64
            } else {
                b.write_stream(&data) as u64
            };
            // A few packets per write (the pacer lags the writer), all of them at the end.
            let cuts = if round == 59 { usize::MAX } else { 3 };
            for _ in 0..cuts {
                let Some(seq) = b.cut_packet(1456) else { break };
                let p = *b.packet(seq).unwrap();
                let parts = parts_of(&b, p.offset(), p.len()).unwrap();
                most_parts = most_parts.max(parts.len());
                let want: Vec<u8> = (p.offset()..p.offset() + p.len() as u64)
                    .map(byte_at)
                    .collect();
                assert_eq!(payload_of(&b, p.offset(), p.len()), Some(want));
                if seq % 7 != 0 {
                    // Keep some packets unacknowledged so the front moves in steps.
                    b.ack(seq);
                }
            }
        }
        assert!(most_parts >= 2, "no packet spanned two chunks");
        assert!(most_parts <= 3, "{most_parts} parts");
        assert_eq!(payload_of(&b, 0, 1), None, "acknowledged bytes are gone");
        assert_eq!(payload_of(&b, written, 1), None, "bytes never written");
        let last = b.next_seq() - 1;
        b.ack(last + 1);
        assert!(b.is_empty());
    }

    #[test]
    fn owned_chunks_are_sent_from_their_own_memory() {
        let mut b = SendBuffer::new(0, 1 << 22, false);
        let data = Bytes::from(vec![5u8; MIN_OWNED_CHUNK * 2]);
        assert_eq!(b.write_bytes(&data), data.len());
        let seq = b.cut_packet(1456).unwrap();
        let p = *b.packet(seq).unwrap();
        let parts = parts_of(&b, p.offset(), p.len()).unwrap();
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].as_ptr(), data.as_ptr(), "no copy");
    }

    #[test]
    fn messages_keep_boundaries_and_positions() {
        let mut b = SendBuffer::new(0, 1 << 20, true);
        assert!(b.write_message(&[1; 3000], true, None));
        assert!(b.write_message(&[2; 10], false, None));
        let seqs: Vec<_> = std::iter::from_fn(|| b.cut_packet(1456)).collect();
        let positions: Vec<_> = seqs
            .iter()
            .map(|s| b.packet(*s).unwrap().msg.position)
            .collect();
        use MsgPosition::*;
        assert_eq!(positions, vec![First, Middle, Last, Solo]);
        assert_eq!(b.drop_message(1).map(|(f, l, _)| (f, l)), Some((0, 2)));
    }

    #[test]
    fn a_dropped_message_leaves_the_next_one_intact() {
        let mut b = SendBuffer::new(0, 1 << 20, true);
        assert!(b.write_message(&[1; 3000], true, None));
        let first = b.cut_packet(1456).unwrap();
        // Written after the first cut: it lands in a later chunk than the first message.
        assert!(b.write_message(&[2; 10], false, None));
        assert_eq!(b.drop_message(first).map(|(f, l, _)| (f, l)), Some((0, 0)));
        let next = b.cut_packet(1456).unwrap();
        let p = *b.packet(next).unwrap();
        assert_eq!(p.msg.position, MsgPosition::Solo);
        assert_eq!(payload_of(&b, p.offset(), p.len()), Some(vec![2; 10]));
        assert_eq!(b.cut_packet(1456), None);
        b.ack(next + 1);
        assert!(b.is_empty());
    }

    #[test]
    fn full_buffer_refuses_a_message_whole() {
        let mut b = SendBuffer::new(0, 100, true);
        assert!(!b.write_message(&[0; 101], true, None));
        assert!(b.write_message(&[0; 100], true, None));
        assert_eq!(b.free_space(), 0);
    }
}
