//! The `haul` dialect's security: a Noise key exchange inside the UDT4 handshake, then
//! authenticated encryption on every other packet.
//!
//! * **Key exchange** — `Noise_NNpsk0_25519_ChaChaPoly_BLAKE2s`: fresh X25519 keys on both sides
//!   (forward secrecy), mixed with a 32-byte pre-shared key that only the two ends know (handed out
//!   over ssh by `haul copy`). The client's request carries the first Noise message, stamped
//!   with its clock (or its cookie echo does, when the listener asks for a cookie), the server's
//!   acceptance the second; each carries its sender's handshake fields as the encrypted payload,
//!   and a handshake whose clear fields differ from them is refused.
//! * **Packet protection** — `[16-byte header][encrypted body][8-byte packet number][16-byte tag]`.
//!   The header and packet number are authenticated, not encrypted: the header routes the
//!   datagram to its connection; the packet number (one counter per direction, never reused) is
//!   the nonce and feeds a replay window. AES-256-GCM when both CPUs have AES instructions,
//!   ChaCha20-Poly1305 otherwise.

mod handshake;
mod packet;

pub use handshake::{Initiator, Responder};
pub use packet::{OpenError, Protection};

use std::fmt;
use thiserror::Error;

/// Handshake version field of the `haul` dialect (the `udt4` dialect uses 4).
pub const VERSION: u32 = 0x6861_0001;
/// Request type of a rejection because the key exchange failed (the reference uses 1002 for a
/// version or socket-type mismatch).
pub const REJECT_AUTH: i32 = 1003;
/// Bytes protection adds to every packet: packet number and tag.
pub const OVERHEAD: usize = packet::PN_LEN + packet::TAG_LEN;

/// A 32-byte secret both ends know before they connect.
#[derive(Clone, PartialEq, Eq)]
pub struct PresharedKey([u8; 32]);

impl PresharedKey {
    /// Wraps raw key bytes (draw them from the operating system's random source).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// Parses 64 hexadecimal digits.
    pub fn from_hex(text: &str) -> Result<Self, KeyError> {
        let text = text.trim();
        if text.len() != 64 || !text.is_ascii() {
            return Err(KeyError);
        }
        let mut key = [0u8; 32];
        for (i, byte) in key.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| KeyError)?;
        }
        Ok(Self(key))
    }

    /// The key as 64 lowercase hexadecimal digits.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Debug for PresharedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PresharedKey(…)")
    }
}

/// A key that is not 64 hexadecimal digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("a key is 64 hexadecimal digits")]
pub struct KeyError;

/// The AEAD protecting packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cipher {
    /// AES-256-GCM (fast with AES instructions).
    Aes256Gcm,
    /// ChaCha20-Poly1305 (fast everywhere else).
    ChaCha20Poly1305,
}

impl Cipher {
    /// The faster cipher on this CPU.
    pub fn preferred() -> Self {
        if has_aes_instructions() {
            Self::Aes256Gcm
        } else {
            Self::ChaCha20Poly1305
        }
    }

    /// What the server picks: AES only if both sides prefer it.
    fn negotiate(client: Self, server: Self) -> Self {
        if client == Self::Aes256Gcm && server == Self::Aes256Gcm {
            Self::Aes256Gcm
        } else {
            Self::ChaCha20Poly1305
        }
    }

    fn to_wire(self) -> u8 {
        match self {
            Self::Aes256Gcm => 1,
            Self::ChaCha20Poly1305 => 2,
        }
    }

    fn from_wire(v: u8) -> Option<Self> {
        match v {
            1 => Some(Self::Aes256Gcm),
            2 => Some(Self::ChaCha20Poly1305),
            _ => None,
        }
    }

    fn algorithm(self) -> &'static ring::aead::Algorithm {
        match self {
            Self::Aes256Gcm => &ring::aead::AES_256_GCM,
            Self::ChaCha20Poly1305 => &ring::aead::CHACHA20_POLY1305,
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn has_aes_instructions() -> bool {
    std::arch::is_x86_feature_detected!("aes") && std::arch::is_x86_feature_detected!("pclmulqdq")
}

#[cfg(target_arch = "aarch64")]
fn has_aes_instructions() -> bool {
    std::arch::is_aarch64_feature_detected!("aes")
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn has_aes_instructions() -> bool {
    false
}

/// Why a key exchange failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HandshakeError {
    /// The message did not decrypt: the peer holds another key, or it was altered.
    #[error("key exchange failed (wrong key, or the message was altered)")]
    Authentication,
    /// The message decrypted but its contents do not match the handshake that carried it.
    #[error("key exchange message does not match its handshake")]
    Mismatch,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_through_hex_and_never_print() {
        let key = PresharedKey::from_bytes([0xab; 32]);
        assert_eq!(PresharedKey::from_hex(&key.to_hex()), Ok(key.clone()));
        assert!(!format!("{key:?}").contains("ab"));
        assert_eq!(PresharedKey::from_hex("abc"), Err(KeyError));
        assert_eq!(PresharedKey::from_hex(&"zz".repeat(32)), Err(KeyError));
        assert_eq!(PresharedKey::from_hex(&"é".repeat(32)), Err(KeyError));
    }

    #[test]
    fn aes_only_when_both_prefer_it() {
        use Cipher::*;
        assert_eq!(Cipher::negotiate(Aes256Gcm, Aes256Gcm), Aes256Gcm);
        assert_eq!(
            Cipher::negotiate(Aes256Gcm, ChaCha20Poly1305),
            ChaCha20Poly1305
        );
        assert_eq!(
            Cipher::negotiate(ChaCha20Poly1305, Aes256Gcm),
            ChaCha20Poly1305
        );
        assert_eq!(Cipher::from_wire(Aes256Gcm.to_wire()), Some(Aes256Gcm));
        assert_eq!(Cipher::from_wire(0), None);
    }
}
