//! Sequence, message and ACK numbers with UDT4's wrap-around arithmetic.
//!
//! On the wire a packet sequence number has 31 bits and wraps `0x7FFF_FFFF → 0`; two numbers are
//! compared with a half-space threshold. Inside a connection we *extend* every wire number to a
//! monotonically increasing `u64` (like QUIC packet-number decoding), so that buffers, loss lists
//! and windows never deal with the wrap themselves.

use std::cmp::Ordering;

/// A 31-bit packet sequence number as carried on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SeqNo(u32);

impl SeqNo {
    /// Largest representable value; the next number after it is 0.
    pub const MAX: u32 = 0x7FFF_FFFF;
    /// Half-space threshold used for comparisons.
    const THRESHOLD: u32 = 0x3FFF_FFFF;
    const SPAN: i64 = 1 << 31;

    /// Builds a sequence number, or `None` if `value` does not fit in 31 bits.
    pub fn new(value: u32) -> Option<Self> {
        (value <= Self::MAX).then_some(Self(value))
    }

    /// Keeps the low 31 bits of `value`.
    pub fn masked(value: u32) -> Self {
        Self(value & Self::MAX)
    }

    /// The raw 31-bit value.
    pub fn value(self) -> u32 {
        self.0
    }

    /// Signed distance from `self` to `later` (UDT4's `seqoff`): positive when `later` follows.
    pub fn offset_to(self, later: SeqNo) -> i32 {
        let diff = later.0.wrapping_sub(self.0) & Self::MAX;
        if diff > Self::THRESHOLD {
            (diff as i64 - Self::SPAN) as i32
        } else {
            diff as i32
        }
    }

    /// Wrap-aware ordering (UDT4's `seqcmp`).
    pub fn cmp_wrapping(self, other: SeqNo) -> Ordering {
        other.offset_to(self).cmp(&0)
    }

    /// `self + n` with wrap-around.
    pub fn wrapping_add(self, n: u32) -> SeqNo {
        Self::masked(self.0.wrapping_add(n))
    }

    /// `self - n` with wrap-around.
    pub fn wrapping_sub(self, n: u32) -> SeqNo {
        Self::masked(self.0.wrapping_sub(n))
    }

    /// Extends this wire number to the 64-bit number closest to `near`.
    ///
    /// Returns `None` only if that number would be negative, which cannot happen for numbers
    /// derived from [`SeqNo::start`].
    pub fn extend(self, near: u64) -> Option<u64> {
        let delta = SeqNo::masked(near as u32).offset_to(self) as i64;
        u64::try_from(near as i64 + delta).ok()
    }

    /// The extended (64-bit) number of this initial sequence number: far from zero, so that
    /// numbers before it never underflow.
    pub fn start(self) -> u64 {
        (1 << 32) | self.0 as u64
    }

    /// The wire number of an extended sequence number.
    pub fn from_extended(ext: u64) -> SeqNo {
        SeqNo::masked(ext as u32)
    }
}

/// A 29-bit message number: starts at 1 and wraps `0x1FFF_FFFF → 1` (0 is never used).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MsgNo(u32);

impl MsgNo {
    /// Largest message number.
    pub const MAX: u32 = 0x1FFF_FFFF;
    /// The first message number of a connection.
    pub const FIRST: MsgNo = MsgNo(1);

    /// Keeps the low 29 bits of `value`.
    pub fn masked(value: u32) -> Self {
        Self(value & Self::MAX)
    }

    /// The raw 29-bit value.
    pub fn value(self) -> u32 {
        self.0
    }

    /// The next message number, skipping 0 on wrap.
    pub fn next(self) -> MsgNo {
        if self.0 >= Self::MAX {
            MsgNo(1)
        } else {
            MsgNo(self.0 + 1)
        }
    }
}

/// A 31-bit ACK number: starts at 1 and wraps `0x7FFF_FFFF → 1` (0 marks a light ACK).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AckNo(u32);

impl AckNo {
    /// Largest ACK number.
    pub const MAX: u32 = 0x7FFF_FFFF;
    /// The first ACK number of a connection.
    pub const FIRST: AckNo = AckNo(1);

    /// Keeps the low 31 bits of `value`.
    pub fn masked(value: u32) -> Self {
        Self(value & Self::MAX)
    }

    /// The raw value.
    pub fn value(self) -> u32 {
        self.0
    }

    /// The next ACK number, skipping 0 on wrap.
    pub fn next(self) -> AckNo {
        if self.0 >= Self::MAX {
            AckNo(1)
        } else {
            AckNo(self.0 + 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_across_the_wrap() {
        let near_end = SeqNo::new(0x7FFF_FFFE).unwrap();
        let after = near_end.wrapping_add(5);
        assert_eq!(after.value(), 3);
        assert_eq!(near_end.offset_to(after), 5);
        assert_eq!(after.offset_to(near_end), -5);
        assert_eq!(after.cmp_wrapping(near_end), Ordering::Greater);
        assert_eq!(after.wrapping_sub(5), near_end);
    }

    #[test]
    fn extension_follows_the_reference() {
        let base = SeqNo::new(0x7FFF_FFF0).unwrap().start();
        let wire = SeqNo::from_extended(base + 100);
        assert_eq!(wire.extend(base), Some(base + 100));
        assert_eq!(
            SeqNo::from_extended(base - 7).extend(base + 3),
            Some(base - 7)
        );
    }

    #[test]
    fn message_and_ack_numbers_skip_zero() {
        assert_eq!(MsgNo::masked(MsgNo::MAX).next(), MsgNo::FIRST);
        assert_eq!(AckNo::masked(AckNo::MAX).next(), AckNo::FIRST);
        assert_eq!(AckNo::FIRST.next().value(), 2);
    }
}
