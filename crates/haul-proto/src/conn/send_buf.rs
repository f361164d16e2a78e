//! The send buffer: bytes the application wrote, cut into packets lazily, kept until acknowledged.
//!
//! Stream writes are coalesced: a packet is cut only when the pacer lets one go, so many small
//! writes still fill full-size packets. Messages keep their boundaries.

use crate::seq::MsgNo;
use crate::wire::{MsgInfo, MsgPosition};
use std::collections::VecDeque;
use std::time::Instant;

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
    bytes: VecDeque<u8>,
    /// Stream offset of `bytes[0]`.
    base: u64,
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
            bytes: VecDeque::new(),
            base: 0,
            cut: 0,
            packets: VecDeque::new(),
            first_seq,
            messages: VecDeque::new(),
            next_msg: MsgNo::FIRST,
            message_mode,
            capacity,
        }
    }

    /// Bytes that can still be written.
    pub fn free_space(&self) -> usize {
        self.capacity.saturating_sub(self.bytes.len())
    }

    /// Largest message the buffer could ever hold.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Appends stream bytes; returns how many fit.
    pub fn write_stream(&mut self, data: &[u8]) -> usize {
        let n = data.len().min(self.free_space());
        self.bytes.extend(&data[..n]);
        n
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
        self.bytes.extend(data);
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
        (self.base + self.bytes.len() as u64 - self.cut) as usize
    }

    /// Whether nothing remains: every byte was sent and acknowledged.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
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
        let Some((a, b)) = self.slices(packet.offset, packet.len()) else {
            return 0;
        };
        out.extend_from_slice(a);
        out.extend_from_slice(b);
        a.len() + b.len()
    }

    /// The `len` bytes from stream offset `offset`: one slice, or two where the ring wraps.
    /// `None` unless all of them are held.
    pub fn slices(&self, offset: u64, len: usize) -> Option<(&[u8], &[u8])> {
        let start = usize::try_from(offset.checked_sub(self.base)?).ok()?;
        if start.checked_add(len)? > self.bytes.len() {
            return None;
        }
        let (a, b) = self.bytes.as_slices();
        Some(if start + len <= a.len() {
            (&a[start..start + len], &[][..])
        } else if start >= a.len() {
            (&b[start - a.len()..start - a.len() + len], &[][..])
        } else {
            (&a[start..], &b[..len - (a.len() - start)])
        })
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
        self.bytes.drain(..(released_to - self.base) as usize);
        self.base = released_to;
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

    /// Discards `len` uncut bytes at the cut point (they belong to a dropped message).
    fn skip_uncut(&mut self, len: u64) {
        let start = (self.cut - self.base) as usize;
        self.bytes.drain(start..start + len as usize);
        // Later offsets shift down by `len`; nothing cut refers to them yet.
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

    #[test]
    fn slices_follow_the_ring_around_its_end() {
        let mut b = SendBuffer::new(0, 1 << 20, false);
        let byte_at = |offset: u64| (offset % 251) as u8;
        let mut written = 0u64;
        let mut wrapped = false;
        for round in 0..50u64 {
            let size = 300 + round * 37 % 500;
            let data: Vec<u8> = (written..written + size).map(byte_at).collect();
            written += b.write_stream(&data) as u64;
            while let Some(seq) = b.cut_packet(300) {
                let p = *b.packet(seq).unwrap();
                let (x, y) = b.slices(p.offset(), p.len()).unwrap();
                wrapped |= !y.is_empty();
                let got: Vec<u8> = x.iter().chain(y).copied().collect();
                let want: Vec<u8> = (p.offset()..p.offset() + p.len() as u64)
                    .map(byte_at)
                    .collect();
                assert_eq!(got, want);
            }
            // Keep the last packet unacknowledged so the ring's start moves on.
            b.ack(b.next_seq() - 1);
        }
        assert!(wrapped, "the test never reached the ring's end");
        assert_eq!(b.slices(0, 1), None, "acknowledged bytes are gone");
        assert_eq!(b.slices(written, 1), None, "bytes never written");
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
    fn full_buffer_refuses_a_message_whole() {
        let mut b = SendBuffer::new(0, 100, true);
        assert!(!b.write_message(&[0; 101], true, None));
        assert!(b.write_message(&[0; 100], true, None));
        assert_eq!(b.free_space(), 0);
    }
}
