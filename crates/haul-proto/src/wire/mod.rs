//! The `udt4` wire dialect: packet views parsed with length checks and byte-exact encoders.
//!
//! Every function here takes untrusted bytes: any input yields a value or a [`WireError`], never a
//! panic. Layout and quirks follow `shared/reference/udt4/WIRE.md` (the reference library's real
//! behaviour, not the IETF draft).

mod control;
mod handshake;

pub use control::{
    set_answer_wait, Control, ControlPacket, FullAck, LossList, LossRange, RateReport,
};
pub use handshake::{Handshake, PeerIp, RequestType, SocketType};

use crate::seq::{MsgNo, SeqNo};
use thiserror::Error;

/// Length of the fixed header shared by data and control packets.
pub const HEADER_LEN: usize = 16;

/// Why a datagram could not be parsed or a packet could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    /// The datagram is shorter than the structure it claims to hold.
    #[error("truncated packet: need {needed} bytes, have {have}")]
    Truncated {
        /// Bytes the structure requires.
        needed: usize,
        /// Bytes available.
        have: usize,
    },
    /// A control packet body has a length its type does not allow.
    #[error("control type {ctrl_type} with a body of {len} bytes")]
    BadBodyLength {
        /// The control type.
        ctrl_type: u16,
        /// The body length seen.
        len: usize,
    },
    /// A control type the dialect does not define.
    #[error("unknown control type {0:#x}")]
    UnknownControlType(u16),
    /// A field holds a value outside its range.
    #[error("invalid {0}")]
    InvalidField(&'static str),
    /// The output buffer is too small for the packet.
    #[error("output buffer too small: need {needed} bytes, have {have}")]
    BufferTooSmall {
        /// Bytes the encoding needs.
        needed: usize,
        /// Bytes available.
        have: usize,
    },
}

/// Reads a big-endian word at `offset` of a slice already known to be long enough.
fn word(bytes: &[u8], offset: usize) -> u32 {
    u32::from_be_bytes([
        bytes[offset],
        bytes[offset + 1],
        bytes[offset + 2],
        bytes[offset + 3],
    ])
}

/// Writes a big-endian word at `offset` of a slice already known to be long enough.
fn put_word(out: &mut [u8], offset: usize, value: u32) {
    out[offset..offset + 4].copy_from_slice(&value.to_be_bytes());
}

/// Fails with [`WireError::Truncated`] unless `bytes` holds at least `needed` bytes.
fn check_len(bytes: &[u8], needed: usize) -> Result<(), WireError> {
    if bytes.len() < needed {
        return Err(WireError::Truncated {
            needed,
            have: bytes.len(),
        });
    }
    Ok(())
}

/// Fails with [`WireError::BufferTooSmall`] unless `out` can take `needed` bytes.
fn check_room(out: &[u8], needed: usize) -> Result<(), WireError> {
    if out.len() < needed {
        return Err(WireError::BufferTooSmall {
            needed,
            have: out.len(),
        });
    }
    Ok(())
}

/// Returns the destination socket id of a datagram (word 3), if it has a full header.
pub fn destination_id(bytes: &[u8]) -> Option<u32> {
    check_len(bytes, HEADER_LEN).ok()?;
    Some(word(bytes, 12))
}

/// Whether a datagram with a full header is a control packet.
pub fn is_control(bytes: &[u8]) -> bool {
    bytes.first().is_some_and(|b| b & 0x80 != 0)
}

/// Whether a datagram is a handshake (a control packet of type 0 with a full header).
pub fn is_handshake(bytes: &[u8]) -> bool {
    bytes.len() >= HEADER_LEN && is_control(bytes) && (word(bytes, 0) >> 16) & 0x7FFF == 0
}

/// Splits a handshake datagram into the UDT4 packet (header and 48-byte body) and what follows
/// it: the `haul` dialect's key-exchange message. Anything shorter is returned whole.
pub fn split_handshake(bytes: &[u8]) -> (&[u8], &[u8]) {
    bytes.split_at(bytes.len().min(HEADER_LEN + Handshake::LEN))
}

/// Where a data packet sits in its message (bits 31..30 of word 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MsgPosition {
    /// `00`: neither the first nor the last packet.
    Middle,
    /// `01`: the last packet of a multi-packet message.
    Last,
    /// `10`: the first packet of a multi-packet message.
    First,
    /// `11`: the message fits in this packet.
    Solo,
}

impl MsgPosition {
    fn from_bits(bits: u32) -> Self {
        match bits & 0b11 {
            0b00 => Self::Middle,
            0b01 => Self::Last,
            0b10 => Self::First,
            _ => Self::Solo,
        }
    }

    fn bits(self) -> u32 {
        match self {
            Self::Middle => 0b00,
            Self::Last => 0b01,
            Self::First => 0b10,
            Self::Solo => 0b11,
        }
    }

    /// Whether a message starts with this packet.
    pub fn starts_message(self) -> bool {
        matches!(self, Self::First | Self::Solo)
    }

    /// Whether a message ends with this packet.
    pub fn ends_message(self) -> bool {
        matches!(self, Self::Last | Self::Solo)
    }

    /// The position of packet `index` of a message cut into `count` packets.
    pub fn of(index: usize, count: usize) -> Self {
        match (index == 0, index + 1 == count) {
            (true, true) => Self::Solo,
            (true, false) => Self::First,
            (false, true) => Self::Last,
            (false, false) => Self::Middle,
        }
    }
}

/// Word 1 of a data packet: message position, in-order flag and message number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsgInfo {
    /// Position of the packet in its message.
    pub position: MsgPosition,
    /// Whether the message must be delivered in order.
    pub in_order: bool,
    /// The message number.
    pub number: MsgNo,
}

impl MsgInfo {
    /// Decodes word 1.
    pub fn from_word(w: u32) -> Self {
        Self {
            position: MsgPosition::from_bits(w >> 30),
            in_order: w & (1 << 29) != 0,
            number: MsgNo::masked(w),
        }
    }

    /// Encodes word 1.
    pub fn to_word(self) -> u32 {
        (self.position.bits() << 30) | ((self.in_order as u32) << 29) | self.number.value()
    }
}

/// The header of a data packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataHeader {
    /// Packet sequence number.
    pub seq: SeqNo,
    /// Message position, order flag and number.
    pub msg: MsgInfo,
    /// Microseconds since the sending socket was opened.
    pub timestamp: u32,
    /// Destination socket id.
    pub dest: u32,
}

impl DataHeader {
    /// The 16 header bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        put_word(&mut out, 0, self.seq.value());
        put_word(&mut out, 4, self.msg.to_word());
        put_word(&mut out, 8, self.timestamp);
        put_word(&mut out, 12, self.dest);
        out
    }

    /// Writes the 16-byte header into `out`.
    pub fn write(&self, out: &mut [u8]) -> Result<(), WireError> {
        check_room(out, HEADER_LEN)?;
        out[..HEADER_LEN].copy_from_slice(&self.to_bytes());
        Ok(())
    }
}

/// A data packet: header plus a view of its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataPacket<'a> {
    /// The header.
    pub header: DataHeader,
    /// The payload, borrowed from the datagram.
    pub payload: &'a [u8],
}

impl DataPacket<'_> {
    /// Encoded length in bytes.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN + self.payload.len()
    }

    /// Encodes into `out`, returning the number of bytes written.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, WireError> {
        let len = self.encoded_len();
        check_room(out, len)?;
        self.header.write(out)?;
        out[HEADER_LEN..len].copy_from_slice(self.payload);
        Ok(len)
    }
}

/// Any packet of the `udt4` dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packet<'a> {
    /// A data packet.
    Data(DataPacket<'a>),
    /// A control packet.
    Control(ControlPacket<'a>),
}

impl<'a> Packet<'a> {
    /// Parses one datagram. Never panics; every length is checked.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, WireError> {
        check_len(bytes, HEADER_LEN)?;
        let w0 = word(bytes, 0);
        if w0 & 0x8000_0000 == 0 {
            Ok(Packet::Data(DataPacket {
                header: DataHeader {
                    seq: SeqNo::masked(w0),
                    msg: MsgInfo::from_word(word(bytes, 4)),
                    timestamp: word(bytes, 8),
                    dest: word(bytes, 12),
                },
                payload: &bytes[HEADER_LEN..],
            }))
        } else {
            ControlPacket::parse(bytes).map(Packet::Control)
        }
    }

    /// Encoded length in bytes.
    pub fn encoded_len(&self) -> usize {
        match self {
            Packet::Data(d) => d.encoded_len(),
            Packet::Control(c) => c.encoded_len(),
        }
    }

    /// Encodes into `out`, returning the number of bytes written.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, WireError> {
        match self {
            Packet::Data(d) => d.encode(out),
            Packet::Control(c) => c.encode(out),
        }
    }

    /// Encodes into a new vector (convenient for tests and rare control paths).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = vec![0; self.encoded_len()];
        let written = self.encode(&mut out).unwrap_or(0);
        out.truncate(written);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_is_an_error() {
        for len in 0..HEADER_LEN {
            assert!(matches!(
                Packet::parse(&[0x80; 15][..len]),
                Err(WireError::Truncated { .. })
            ));
        }
    }

    #[test]
    fn msg_word_round_trips() {
        for w in [
            0xc000_0001u32,
            0xa000_0002,
            0x2000_0002,
            0x6000_0007,
            0x1fff_ffff,
        ] {
            assert_eq!(MsgInfo::from_word(w).to_word(), w);
        }
    }

    #[test]
    fn encode_into_small_buffer_fails_cleanly() {
        let p = Packet::Data(DataPacket {
            header: DataHeader {
                seq: SeqNo::masked(1),
                msg: MsgInfo::from_word(0xc000_0001),
                timestamp: 0,
                dest: 7,
            },
            payload: b"abc",
        });
        assert!(matches!(
            p.encode(&mut [0u8; 10]),
            Err(WireError::BufferTooSmall { .. })
        ));
    }
}
