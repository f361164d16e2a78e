//! Sealing and opening packets, and the replay window.

use super::Cipher;
use crate::wire::HEADER_LEN;
use bytes::{Bytes, BytesMut};
use ring::aead::{Aad, LessSafeKey, Nonce, Tag, UnboundKey, NONCE_LEN};
use thiserror::Error;

/// Packet number bytes after the body.
pub(super) const PN_LEN: usize = 8;
/// Authentication tag bytes at the end.
pub(super) const TAG_LEN: usize = 16;
/// Packet numbers the replay window remembers behind the newest one.
const WINDOW: u64 = 8192;
const WORDS: usize = (WINDOW / 64) as usize;

/// Why a datagram was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum OpenError {
    /// Too short, or the tag did not verify: altered, forged, or from another key.
    #[error("packet failed authentication")]
    Forged,
    /// Authentic, but its packet number was seen already or is too old to tell.
    #[error("packet replayed")]
    Replayed,
}

/// One connection's keys, packet counter and replay window.
pub struct Protection {
    cipher: Cipher,
    seal: LessSafeKey,
    open: LessSafeKey,
    next_pn: u64,
    replay: ReplayWindow,
}

impl std::fmt::Debug for Protection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Protection")
            .field("cipher", &self.cipher)
            .field("next_pn", &self.next_pn)
            .finish_non_exhaustive()
    }
}

impl Protection {
    /// Keys for sending and receiving (32 bytes each, from the key exchange).
    pub(super) fn new(cipher: Cipher, seal: &[u8; 32], open: &[u8; 32]) -> Self {
        let key = |bytes: &[u8; 32]| {
            LessSafeKey::new(
                UnboundKey::new(cipher.algorithm(), bytes)
                    .expect("32-byte keys for AES-256/ChaCha20"),
            )
        };
        Self {
            cipher,
            seal: key(seal),
            open: key(open),
            next_pn: 0,
            replay: ReplayWindow::default(),
        }
    }

    /// The negotiated cipher.
    pub fn cipher(&self) -> Cipher {
        self.cipher
    }

    /// Encrypts the packet at `buf[start..]` (header, body) in place and appends its packet
    /// number and tag.
    pub fn seal(&mut self, buf: &mut Vec<u8>, start: usize) {
        let pn = self.next_pn;
        self.next_pn += 1;
        let (header, body) = buf[start..].split_at_mut(HEADER_LEN);
        let aad = aad(header, pn);
        let tag = self
            .seal
            .seal_in_place_separate_tag(nonce(pn), Aad::from(aad), body)
            .expect("packets are far below the AEAD length limit");
        buf.extend_from_slice(&pn.to_be_bytes());
        buf.extend_from_slice(tag.as_ref());
    }

    /// Verifies and decrypts `bytes` into `out` (cleared first: an arena's room) and returns
    /// the plain packet, split off `out` without a copy; `out` keeps its spare room. On
    /// failure `out` is left empty.
    pub fn open(&mut self, bytes: &[u8], out: &mut BytesMut) -> Result<Bytes, OpenError> {
        let body_end = bytes
            .len()
            .checked_sub(PN_LEN + TAG_LEN)
            .filter(|&end| end >= HEADER_LEN)
            .ok_or(OpenError::Forged)?;
        let pn_bytes: [u8; PN_LEN] = bytes[body_end..body_end + PN_LEN].try_into().unwrap();
        let pn = u64::from_be_bytes(pn_bytes);
        let tag = Tag::try_from(&bytes[body_end + PN_LEN..]).map_err(|_| OpenError::Forged)?;
        if !self.replay.is_fresh(pn) {
            return Err(OpenError::Replayed);
        }
        out.clear();
        out.extend_from_slice(&bytes[..body_end]);
        let aad = aad(&out[..HEADER_LEN], pn);
        let body = &mut out[HEADER_LEN..];
        if self
            .open
            .open_in_place_separate_tag(nonce(pn), Aad::from(aad), tag, body, 0..)
            .is_err()
        {
            out.clear();
            return Err(OpenError::Forged);
        }
        self.replay.mark(pn);
        Ok(out.split().freeze())
    }
}

fn aad(header: &[u8], pn: u64) -> [u8; HEADER_LEN + PN_LEN] {
    let mut aad = [0u8; HEADER_LEN + PN_LEN];
    aad[..HEADER_LEN].copy_from_slice(header);
    aad[HEADER_LEN..].copy_from_slice(&pn.to_be_bytes());
    aad
}

fn nonce(pn: u64) -> Nonce {
    let mut n = [0u8; NONCE_LEN];
    n[NONCE_LEN - 8..].copy_from_slice(&pn.to_be_bytes());
    Nonce::assume_unique_for_key(n)
}

/// Which of the last [`WINDOW`] packet numbers were seen (a bitmap indexed by number mod WINDOW).
#[derive(Debug)]
struct ReplayWindow {
    /// One past the highest number accepted.
    top: u64,
    bits: [u64; WORDS],
}

impl Default for ReplayWindow {
    fn default() -> Self {
        Self {
            top: 0,
            bits: [0; WORDS],
        }
    }
}

impl ReplayWindow {
    fn is_fresh(&self, pn: u64) -> bool {
        if pn >= self.top {
            return true;
        }
        self.top - pn <= WINDOW && !self.bit(pn)
    }

    fn mark(&mut self, pn: u64) {
        if pn >= self.top {
            // Forget the numbers the window slides past.
            let newly = (pn + 1 - self.top).min(WINDOW);
            for n in pn + 1 - newly..=pn {
                self.bits[(n % WINDOW / 64) as usize] &= !(1 << (n % 64));
            }
            self.top = pn + 1;
        }
        self.bits[(pn % WINDOW / 64) as usize] |= 1 << (pn % 64);
    }

    fn bit(&self, pn: u64) -> bool {
        self.bits[(pn % WINDOW / 64) as usize] & (1 << (pn % 64)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(cipher: Cipher) -> (Protection, Protection) {
        let (a, b) = ([1u8; 32], [2u8; 32]);
        (
            Protection::new(cipher, &a, &b),
            Protection::new(cipher, &b, &a),
        )
    }

    fn packet(body: &[u8]) -> Vec<u8> {
        let mut p = vec![0x80, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7];
        p.extend_from_slice(body);
        p
    }

    #[test]
    fn sealed_packets_open_once_and_only_unaltered() {
        for cipher in [Cipher::Aes256Gcm, Cipher::ChaCha20Poly1305] {
            let (mut tx, mut rx) = pair(cipher);
            let plain = packet(b"hello, long fat network");
            let mut wire = plain.clone();
            tx.seal(&mut wire, 0);
            assert_eq!(wire.len(), plain.len() + PN_LEN + TAG_LEN);
            assert_ne!(&wire[HEADER_LEN..plain.len()], &plain[HEADER_LEN..]);
            let mut out = BytesMut::new();
            assert_eq!(rx.open(&wire, &mut out).as_deref(), Ok(&plain[..]));
            assert_eq!(rx.open(&wire, &mut out), Err(OpenError::Replayed));
            for i in 0..wire.len() {
                let mut bad = wire.clone();
                bad[i] ^= 0x10;
                let e = rx.open(&bad, &mut out).unwrap_err();
                // A flipped packet-number bit may land on a fresh number: still forged.
                assert!(
                    e == OpenError::Forged || e == OpenError::Replayed,
                    "byte {i}"
                );
            }
            assert_eq!(rx.open(&wire[..20], &mut out), Err(OpenError::Forged));
        }
    }

    #[test]
    fn packets_open_one_after_another_in_the_same_room() {
        let (mut tx, mut rx) = pair(Cipher::Aes256Gcm);
        let mut out = BytesMut::with_capacity(4096);
        let mut opened = Vec::new();
        for text in [&b"first"[..], b"second"] {
            let mut wire = packet(text);
            tx.seal(&mut wire, 0);
            opened.push(rx.open(&wire, &mut out).unwrap());
            assert!(out.is_empty() && out.capacity() > 0, "the room is kept");
        }
        assert_eq!(&opened[0][HEADER_LEN..], b"first");
        assert_eq!(&opened[1][HEADER_LEN..], b"second");
        let follows = opened[0].as_ptr() as usize + opened[0].len();
        assert_eq!(
            opened[1].as_ptr() as usize,
            follows,
            "one block, no new allocation"
        );
    }

    #[test]
    fn the_wrong_direction_key_does_not_open() {
        let (mut tx, _) = pair(Cipher::Aes256Gcm);
        let mut wire = packet(b"x");
        tx.seal(&mut wire, 0);
        let mut out = BytesMut::new();
        assert_eq!(tx.open(&wire, &mut out), Err(OpenError::Forged));
    }

    #[test]
    fn replay_window_accepts_reordering_and_refuses_repeats_and_the_ancient() {
        let mut w = ReplayWindow::default();
        for pn in [5, 3, 4, 0, 9000, 8999, 1000] {
            assert!(w.is_fresh(pn), "{pn}");
            w.mark(pn);
            assert!(!w.is_fresh(pn), "{pn} twice");
        }
        assert!(!w.is_fresh(5), "slid out of the window");
        assert!(w.is_fresh(1001));
        w.mark(100_000);
        assert!(!w.is_fresh(9000));
        assert!(w.is_fresh(99_999));
    }
}
