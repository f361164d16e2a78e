//! Control packets: header word 0 has bit 31 set, bits 30..16 the type.

use super::{check_len, check_room, put_word, word, Handshake, WireError, HEADER_LEN};
use crate::seq::{AckNo, SeqNo};

const TYPE_HANDSHAKE: u16 = 0;
const TYPE_KEEPALIVE: u16 = 1;
const TYPE_ACK: u16 = 2;
const TYPE_NAK: u16 = 3;
const TYPE_CONGESTION: u16 = 4;
const TYPE_SHUTDOWN: u16 = 5;
const TYPE_ACK2: u16 = 6;
const TYPE_DROP_REQUEST: u16 = 7;
const TYPE_PEER_ERROR: u16 = 8;
const TYPE_USER: u16 = 0x7FFF;

/// Length of an ACK body without the rate report.
const MEDIUM_ACK_LEN: usize = 16;
/// Length of a full ACK body.
const FULL_ACK_LEN: usize = 24;
/// Body of every control packet that carries nothing.
const EMPTY_BODY: [u8; 4] = [0; 4];

/// Rates a full ACK reports: what the receiver measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateReport {
    /// Packets per second arriving at the receiver (0 if unknown).
    pub recv_rate: u32,
    /// Estimated link capacity in packets per second.
    pub capacity: u32,
}

/// A medium (16-byte) or full (24-byte) ACK body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FullAck {
    /// The ACK number, echoed by the sender's ACK2.
    pub ack_no: AckNo,
    /// Next sequence number the receiver expects (everything before it has arrived).
    pub next_seq: SeqNo,
    /// Receiver's RTT estimate in microseconds (haul: the smaller of its smoothed RTT and its
    /// latest sample; the reference: the smoothed RTT).
    pub rtt_us: u32,
    /// Receiver's RTT variance in microseconds.
    pub rtt_var_us: u32,
    /// Free receive buffer in packets.
    pub avail_buf: u32,
    /// Present in a full ACK, absent in a medium one.
    pub rates: Option<RateReport>,
}

/// An inclusive range of lost sequence numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LossRange {
    /// First lost number.
    pub start: SeqNo,
    /// Last lost number (equal to `start` for a single loss).
    pub end: SeqNo,
}

/// A validated view of a NAK's compressed loss list.
///
/// A word with bit 31 set starts a range whose inclusive end is the next word; a word without it
/// is a single loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LossList<'a> {
    words: &'a [u8],
}

impl<'a> LossList<'a> {
    /// Validates the framing of a loss list (range starts followed by an end, no stray flags).
    pub fn parse(words: &'a [u8]) -> Result<Self, WireError> {
        if words.is_empty() || words.len() % 4 != 0 {
            return Err(WireError::BadBodyLength {
                ctrl_type: TYPE_NAK,
                len: words.len(),
            });
        }
        let mut i = 0;
        while i < words.len() {
            if word(words, i) & 0x8000_0000 != 0 {
                check_len(words, i + 8).map_err(|_| WireError::InvalidField("loss range end"))?;
                if word(words, i + 4) & 0x8000_0000 != 0 {
                    return Err(WireError::InvalidField("loss range end"));
                }
                i += 8;
            } else {
                i += 4;
            }
        }
        Ok(Self { words })
    }

    /// The ranges, in wire order.
    pub fn iter(&self) -> impl Iterator<Item = LossRange> + 'a {
        let words = self.words;
        let mut i = 0;
        std::iter::from_fn(move || {
            if i + 4 > words.len() {
                return None;
            }
            let first = word(words, i);
            if first & 0x8000_0000 != 0 && i + 8 <= words.len() {
                i += 8;
                Some(LossRange {
                    start: SeqNo::masked(first),
                    end: SeqNo::masked(word(words, i - 4)),
                })
            } else {
                i += 4;
                let s = SeqNo::masked(first);
                Some(LossRange { start: s, end: s })
            }
        })
    }

    /// The encoded words.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.words
    }

    /// Bytes needed to encode `range`.
    pub fn range_len(range: LossRange) -> usize {
        if range.start == range.end {
            4
        } else {
            8
        }
    }

    /// Appends the encoding of `range` at `out[at..]`, returning the new end offset.
    pub fn write_range(range: LossRange, out: &mut [u8], at: usize) -> Result<usize, WireError> {
        let len = Self::range_len(range);
        check_room(out, at + len)?;
        if len == 4 {
            put_word(out, at, range.start.value());
        } else {
            put_word(out, at, range.start.value() | 0x8000_0000);
            put_word(out, at + 4, range.end.value());
        }
        Ok(at + len)
    }
}

/// The body of a control packet, by type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control<'a> {
    /// Type 0: connection set-up.
    Handshake(Handshake),
    /// Type 1: keep-alive.
    KeepAlive,
    /// Type 2 with a 4-byte body: next expected sequence only.
    LightAck {
        /// Next sequence number the receiver expects.
        next_seq: SeqNo,
    },
    /// Type 2 with a 16- or 24-byte body.
    Ack(FullAck),
    /// Type 3: loss report.
    Nak(LossList<'a>),
    /// Type 4: congestion warning.
    CongestionWarning,
    /// Type 5: shutdown.
    Shutdown,
    /// Type 6: acknowledgement of an ACK.
    Ack2 {
        /// The ACK number being acknowledged.
        ack_no: AckNo,
    },
    /// Type 7: the sender dropped a message; the receiver must stop waiting for it.
    DropRequest {
        /// The message's whole word 1.
        msg_word: u32,
        /// First sequence number of the message.
        first: SeqNo,
        /// Last sequence number of the message.
        last: SeqNo,
    },
    /// Type 8: the peer hit an error (4000 = file error in `recvfile`).
    PeerError {
        /// The error code.
        code: u32,
    },
    /// Type 0x7FFF: application-defined.
    User {
        /// Extended type (bits 15..0 of word 0).
        ext_type: u16,
        /// Additional-info word.
        info: u32,
        /// Opaque body.
        body: &'a [u8],
    },
}

/// A control packet: header fields plus the typed body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlPacket<'a> {
    /// Word 2; the reference always sends 0. haul puts in an ACK, a gap's first NAK and an
    /// ACK2 how long it waited at its sender, in microseconds (see [`set_answer_wait`]).
    pub timestamp: u32,
    /// Destination socket id (0 for a handshake to a listener).
    pub dest: u32,
    /// The typed body.
    pub body: Control<'a>,
}

/// Writes word 2 of an encoded control packet: the microseconds an answer (an ACK, a gap's first
/// NAK, an ACK2) waited at its sender, from the arrival it answers (or a periodic ACK's deadline)
/// to its sending. The reference sends 0 there and reads nothing from it; a haul peer takes the
/// wait off the RTT it measures, so that a busy host's late answers do not read as a queue.
/// Does nothing to a datagram shorter than a header.
pub fn set_answer_wait(packet: &mut [u8], wait_us: u32) {
    if packet.len() >= HEADER_LEN {
        put_word(packet, 8, wait_us);
    }
}

impl<'a> ControlPacket<'a> {
    /// A control packet with timestamp 0, as the reference sends them.
    pub fn new(dest: u32, body: Control<'a>) -> Self {
        Self {
            timestamp: 0,
            dest,
            body,
        }
    }

    /// Parses a datagram whose word 0 has bit 31 set.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, WireError> {
        check_len(bytes, HEADER_LEN)?;
        let w0 = word(bytes, 0);
        let ctrl_type = ((w0 >> 16) & 0x7FFF) as u16;
        let info = word(bytes, 4);
        let body = &bytes[HEADER_LEN..];
        let bad_len = || WireError::BadBodyLength {
            ctrl_type,
            len: body.len(),
        };
        let control = match ctrl_type {
            TYPE_HANDSHAKE => Control::Handshake(Handshake::parse(body)?),
            TYPE_KEEPALIVE => Control::KeepAlive,
            TYPE_ACK => match body.len() {
                4 => Control::LightAck {
                    next_seq: seq_field(body, 0, "ACK sequence")?,
                },
                n if n >= MEDIUM_ACK_LEN => Control::Ack(FullAck {
                    ack_no: AckNo::masked(info),
                    next_seq: seq_field(body, 0, "ACK sequence")?,
                    rtt_us: word(body, 4),
                    rtt_var_us: word(body, 8),
                    avail_buf: word(body, 12),
                    rates: (n >= FULL_ACK_LEN).then(|| RateReport {
                        recv_rate: word(body, 16),
                        capacity: word(body, 20),
                    }),
                }),
                _ => return Err(bad_len()),
            },
            TYPE_NAK => Control::Nak(LossList::parse(body)?),
            TYPE_CONGESTION => Control::CongestionWarning,
            TYPE_SHUTDOWN => Control::Shutdown,
            TYPE_ACK2 => Control::Ack2 {
                ack_no: AckNo::masked(info),
            },
            TYPE_DROP_REQUEST => {
                if body.len() < 8 {
                    return Err(bad_len());
                }
                Control::DropRequest {
                    msg_word: info,
                    first: seq_field(body, 0, "drop request first sequence")?,
                    last: seq_field(body, 4, "drop request last sequence")?,
                }
            }
            TYPE_PEER_ERROR => Control::PeerError { code: info },
            TYPE_USER => Control::User {
                ext_type: w0 as u16,
                info,
                body,
            },
            other => return Err(WireError::UnknownControlType(other)),
        };
        Ok(Self {
            timestamp: word(bytes, 8),
            dest: word(bytes, 12),
            body: control,
        })
    }

    /// Type, extended type, additional info and body of this packet.
    fn parts(&self) -> (u16, u16, u32, BodyBytes<'_>) {
        match &self.body {
            Control::Handshake(h) => (TYPE_HANDSHAKE, 0, 0, BodyBytes::Handshake(h)),
            Control::KeepAlive => (TYPE_KEEPALIVE, 0, 0, BodyBytes::Empty),
            Control::LightAck { next_seq } => (
                TYPE_ACK,
                0,
                0,
                BodyBytes::Words([next_seq.value(), 0, 0, 0, 0, 0], 1),
            ),
            Control::Ack(a) => {
                let mut w = [
                    a.next_seq.value(),
                    a.rtt_us,
                    a.rtt_var_us,
                    a.avail_buf,
                    0,
                    0,
                ];
                let n = match a.rates {
                    Some(r) => {
                        w[4] = r.recv_rate;
                        w[5] = r.capacity;
                        6
                    }
                    None => 4,
                };
                (TYPE_ACK, 0, a.ack_no.value(), BodyBytes::Words(w, n))
            }
            Control::Nak(list) => (TYPE_NAK, 0, 0, BodyBytes::Raw(list.as_bytes())),
            Control::CongestionWarning => (TYPE_CONGESTION, 0, 0, BodyBytes::Empty),
            Control::Shutdown => (TYPE_SHUTDOWN, 0, 0, BodyBytes::Empty),
            Control::Ack2 { ack_no } => (TYPE_ACK2, 0, ack_no.value(), BodyBytes::Empty),
            Control::DropRequest {
                msg_word,
                first,
                last,
            } => (
                TYPE_DROP_REQUEST,
                0,
                *msg_word,
                BodyBytes::Words([first.value(), last.value(), 0, 0, 0, 0], 2),
            ),
            Control::PeerError { code } => (TYPE_PEER_ERROR, 0, *code, BodyBytes::Empty),
            Control::User {
                ext_type,
                info,
                body,
            } => (TYPE_USER, *ext_type, *info, BodyBytes::Raw(body)),
        }
    }

    /// Encoded length in bytes.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN + self.parts().3.len()
    }

    /// Encodes into `out`, returning the number of bytes written.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, WireError> {
        let (ctrl_type, ext_type, info, body) = self.parts();
        let len = HEADER_LEN + body.len();
        check_room(out, len)?;
        put_word(
            out,
            0,
            0x8000_0000 | (ctrl_type as u32) << 16 | ext_type as u32,
        );
        put_word(out, 4, info);
        put_word(out, 8, self.timestamp);
        put_word(out, 12, self.dest);
        body.write(&mut out[HEADER_LEN..len]);
        Ok(len)
    }
}

/// Reads a 31-bit sequence number field, rejecting a set top bit.
fn seq_field(body: &[u8], offset: usize, what: &'static str) -> Result<SeqNo, WireError> {
    check_len(body, offset + 4)?;
    SeqNo::new(word(body, offset)).ok_or(WireError::InvalidField(what))
}

/// A control body ready to be written.
enum BodyBytes<'b> {
    Empty,
    Handshake(&'b Handshake),
    Words([u32; 6], usize),
    Raw(&'b [u8]),
}

impl BodyBytes<'_> {
    fn len(&self) -> usize {
        match self {
            BodyBytes::Empty => EMPTY_BODY.len(),
            BodyBytes::Handshake(_) => Handshake::LEN,
            BodyBytes::Words(_, n) => n * 4,
            BodyBytes::Raw(b) => b.len(),
        }
    }

    /// Writes the body into `out`, which is exactly `self.len()` bytes long.
    fn write(&self, out: &mut [u8]) {
        match self {
            BodyBytes::Empty => out.copy_from_slice(&EMPTY_BODY),
            BodyBytes::Handshake(h) => h.write(out),
            BodyBytes::Words(w, n) => {
                for (i, v) in w.iter().take(*n).enumerate() {
                    put_word(out, i * 4, *v);
                }
            }
            BodyBytes::Raw(b) => out.copy_from_slice(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nak_range_from_the_capture() {
        let body = [0x83, 0x35, 0xc3, 0x71, 0x03, 0x35, 0xc3, 0x72];
        let list = LossList::parse(&body).unwrap();
        let ranges: Vec<_> = list.iter().collect();
        assert_eq!(ranges.len(), 1);
        assert_eq!(ranges[0].start.value(), 0x0335_c371);
        assert_eq!(ranges[0].end.value(), 0x0335_c372);
    }

    #[test]
    fn dangling_range_start_is_rejected() {
        assert!(LossList::parse(&[0x80, 0, 0, 1]).is_err());
        assert!(LossList::parse(&[0x80, 0, 0, 1, 0x80, 0, 0, 2]).is_err());
        assert!(LossList::parse(&[]).is_err());
    }

    #[test]
    fn ack_lengths() {
        let mut pkt = vec![0x80, 0x02, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9];
        pkt.extend_from_slice(&[0; 8]);
        assert!(ControlPacket::parse(&pkt).is_err());
        pkt.extend_from_slice(&[0; 8]);
        assert!(matches!(
            ControlPacket::parse(&pkt).unwrap().body,
            Control::Ack(FullAck { rates: None, .. })
        ));
    }
}
