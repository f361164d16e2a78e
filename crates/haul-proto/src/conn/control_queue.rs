//! Control packets waiting to go out, encoded back to back in one buffer, and what each answers.

use crate::seq::AckNo;
use crate::wire::{self, ControlPacket};
use std::collections::VecDeque;
use std::time::Instant;

/// What a queued control packet answers: its sending writes how long it waited (see
/// [`wire::set_answer_wait`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Answer {
    /// When the answer was due: the arrival it answers, or a periodic ACK's deadline.
    pub due: Instant,
    /// A full ACK's number: its ACK–ACK2 time counts from its sending.
    pub ack_no: Option<AckNo>,
}

/// The queue: one buffer of encoded packets, their lengths and answers, and how far it is read.
#[derive(Debug, Default)]
pub(super) struct ControlQueue {
    buf: Vec<u8>,
    queued: VecDeque<(usize, Option<Answer>)>,
    read: usize,
}

impl ControlQueue {
    /// Encodes `packet` at the end of the queue (nothing if it cannot be encoded).
    pub fn push(&mut self, packet: &ControlPacket<'_>, answer: Option<Answer>) {
        let start = self.buf.len();
        let len = packet.encoded_len();
        self.buf.resize(start + len, 0);
        if packet.encode(&mut self.buf[start..]).is_ok() {
            self.queued.push_back((len, answer));
        } else {
            self.buf.truncate(start);
        }
    }

    /// Appends `bytes` to the newest packet (a handshake's key-exchange message after it).
    pub fn extend_last(&mut self, bytes: &[u8]) {
        if let Some((len, _)) = self.queued.back_mut() {
            self.buf.extend_from_slice(bytes);
            *len += bytes.len();
        }
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.queued.is_empty()
    }

    /// Appends the oldest packet to `out`, an answer with its wait until `now` written in, and
    /// returns what it answers (`None` when the queue is empty).
    pub fn pop_into(&mut self, now: Instant, out: &mut Vec<u8>) -> Option<Option<Answer>> {
        let (len, answer) = self.queued.pop_front()?;
        let start = out.len();
        out.extend_from_slice(&self.buf[self.read..self.read + len]);
        self.read += len;
        if self.queued.is_empty() {
            self.buf.clear();
            self.read = 0;
        }
        if let Some(a) = answer {
            let wait = now.saturating_duration_since(a.due).as_micros();
            wire::set_answer_wait(&mut out[start..], wait.min(u32::MAX as u128) as u32);
        }
        Some(answer)
    }
}
