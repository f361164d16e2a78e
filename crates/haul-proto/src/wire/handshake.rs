//! The 48-byte handshake body.

use super::{put_word, word, WireError};
use crate::seq::SeqNo;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Socket type carried in the handshake (the reference uses 1 and 2, not the draft's 0 and 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SocketType {
    /// Byte stream (`SOCK_STREAM`).
    Stream,
    /// Messages (`SOCK_DGRAM`).
    Datagram,
}

impl SocketType {
    /// The wire value.
    pub fn to_wire(self) -> u32 {
        match self {
            SocketType::Stream => 1,
            SocketType::Datagram => 2,
        }
    }

    /// Decodes a wire value.
    pub fn from_wire(v: u32) -> Option<Self> {
        match v {
            1 => Some(SocketType::Stream),
            2 => Some(SocketType::Datagram),
            _ => None,
        }
    }
}

/// The handshake's request type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestType {
    /// `1`: a client's request (and the listener's cookie reply).
    Request,
    /// `-1`: response (client's cookie echo, server's acceptance, rendezvous answer).
    Response,
    /// `0`: rendezvous request.
    Rendezvous,
    /// `-2`: rendezvous final.
    RendezvousFinal,
    /// `1002`: rejected (version or socket-type mismatch).
    Rejected,
    /// Anything else; kept so the packet re-encodes exactly.
    Other(i32),
}

impl RequestType {
    fn from_wire(v: i32) -> Self {
        match v {
            1 => Self::Request,
            -1 => Self::Response,
            0 => Self::Rendezvous,
            -2 => Self::RendezvousFinal,
            1002 => Self::Rejected,
            other => Self::Other(other),
        }
    }

    fn to_wire(self) -> i32 {
        match self {
            Self::Request => 1,
            Self::Response => -1,
            Self::Rendezvous => 0,
            Self::RendezvousFinal => -2,
            Self::Rejected => 1002,
            Self::Other(v) => v,
        }
    }
}

/// The peer-IP field, stored exactly as on the wire.
///
/// The reference reads the address as a host-order `u32` and then applies `htonl`, so on x86 each
/// 4-byte group appears byte-reversed: 127.0.0.1 goes out as `01 00 00 7f`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PeerIp(pub [u8; 16]);

impl PeerIp {
    /// Encodes an address the way the reference does.
    pub fn from_ip(ip: IpAddr) -> Self {
        let mut raw = [0u8; 16];
        match ip {
            IpAddr::V4(v4) => raw[..4].copy_from_slice(&v4.octets()),
            IpAddr::V6(v6) => raw.copy_from_slice(&v6.octets()),
        }
        for group in raw.chunks_exact_mut(4) {
            group.reverse();
        }
        Self(raw)
    }

    /// Decodes the field as an address of the given family.
    pub fn to_ip(self, v6: bool) -> IpAddr {
        let mut raw = self.0;
        for group in raw.chunks_exact_mut(4) {
            group.reverse();
        }
        if v6 {
            IpAddr::V6(Ipv6Addr::from(raw))
        } else {
            IpAddr::V4(Ipv4Addr::new(raw[0], raw[1], raw[2], raw[3]))
        }
    }
}

/// A handshake body: 12 big-endian words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handshake {
    /// Protocol version (4).
    pub version: u32,
    /// Raw socket type (see [`SocketType`]); kept raw so a mismatch can be answered.
    pub socket_type: u32,
    /// Initial sequence number.
    pub isn: SeqNo,
    /// Maximum segment size in bytes, IP and UDP headers included.
    pub mss: u32,
    /// Flow window in packets.
    pub flow_window: u32,
    /// Request type.
    pub req_type: RequestType,
    /// The sender's socket id.
    pub socket_id: u32,
    /// SYN cookie.
    pub cookie: u32,
    /// The address the sender sees its peer at.
    pub peer_ip: PeerIp,
}

impl Handshake {
    /// Exact body length; a listener drops any other.
    pub const LEN: usize = 48;
    /// The protocol version this crate speaks.
    pub const VERSION: u32 = 4;

    /// Parses a handshake body of exactly [`Handshake::LEN`] bytes.
    pub fn parse(body: &[u8]) -> Result<Self, WireError> {
        if body.len() != Self::LEN {
            return Err(WireError::BadBodyLength {
                ctrl_type: 0,
                len: body.len(),
            });
        }
        let mut peer_ip = [0u8; 16];
        peer_ip.copy_from_slice(&body[32..48]);
        Ok(Self {
            version: word(body, 0),
            socket_type: word(body, 4),
            isn: SeqNo::new(word(body, 8)).ok_or(WireError::InvalidField("handshake ISN"))?,
            mss: word(body, 12),
            flow_window: word(body, 16),
            req_type: RequestType::from_wire(word(body, 20) as i32),
            socket_id: word(body, 24),
            cookie: word(body, 28),
            peer_ip: PeerIp(peer_ip),
        })
    }

    /// Writes the body into `out`, which is exactly [`Handshake::LEN`] bytes long.
    pub(crate) fn write(&self, out: &mut [u8]) {
        put_word(out, 0, self.version);
        put_word(out, 4, self.socket_type);
        put_word(out, 8, self.isn.value());
        put_word(out, 12, self.mss);
        put_word(out, 16, self.flow_window);
        put_word(out, 20, self.req_type.to_wire() as u32);
        put_word(out, 24, self.socket_id);
        put_word(out, 28, self.cookie);
        out[32..48].copy_from_slice(&self.peer_ip.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_ip_quirk_matches_the_reference() {
        let ip = PeerIp::from_ip(IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_eq!(&ip.0[..4], &[0x01, 0x00, 0x00, 0x7f]);
        assert_eq!(ip.to_ip(false), IpAddr::V4(Ipv4Addr::LOCALHOST));
        let v6 = IpAddr::V6("2001:db8::1".parse().unwrap());
        assert_eq!(PeerIp::from_ip(v6).to_ip(true), v6);
    }

    #[test]
    fn wrong_length_is_rejected() {
        assert!(Handshake::parse(&[0; 47]).is_err());
        assert!(Handshake::parse(&[0; 49]).is_err());
        assert!(Handshake::parse(&[0; 48]).is_ok());
    }
}
