//! Packets as a TUN device with `IFF_VNET_HDR` hands them over: a virtio-net header, then an IP
//! packet that may be a GSO super-packet (TCP TSO or UDP GSO) carrying many segments.
//!
//! [`SuperPacket::parse`] checks every length once; after that, [`SuperPacket::write_run`] cuts
//! any run of consecutive segments into a packet of its own (a smaller super-packet, or a plain
//! packet when the run is one segment), fixing the IP lengths and identifiers, the IPv4 header
//! checksum, TCP sequence numbers and flags, UDP lengths and the partial L4 checksum the kernel
//! completes. Nothing here panics on any input.

use thiserror::Error;

/// Size of `struct virtio_net_hdr` (the TUN default vnet header size).
pub const VNET_HDR_LEN: usize = 10;

const GSO_NONE: u8 = 0;
const GSO_TCPV4: u8 = 1;
const GSO_TCPV6: u8 = 4;
const GSO_UDP_L4: u8 = 5;
const GSO_ECN: u8 = 0x80;

const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;

const TCP_FIN: u8 = 0x01;
const TCP_PSH: u8 = 0x08;
const TCP_CWR: u8 = 0x80;

/// Why a buffer is not a super-packet that can be cut.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PacketError {
    /// Shorter than the headers it announces.
    #[error("packet truncated: {0}")]
    Truncated(&'static str),
    /// A GSO type, IP version or transport this code does not cut.
    #[error("unsupported packet: {0}")]
    Unsupported(&'static str),
}

/// The layer-4 protocol of a super-packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Tcp,
    Udp,
}

/// A parsed GSO super-packet: where its headers end and how its payload divides into segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuperPacket {
    ipv6: bool,
    transport: Transport,
    /// Offset of the layer-4 header in the buffer (after the vnet header and IP header).
    l4_start: usize,
    /// Offset of the payload (end of all headers).
    payload_start: usize,
    payload_len: usize,
    segment_size: usize,
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

fn ones_sum(bytes: &[u8]) -> u32 {
    bytes
        .chunks(2)
        .map(|c| u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0)))
        .sum()
}

fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

impl SuperPacket {
    /// Parses `buf` (vnet header + IP packet). `Ok(None)` for a packet that is not GSO.
    pub fn parse(buf: &[u8]) -> Result<Option<Self>, PacketError> {
        if buf.len() < VNET_HDR_LEN {
            return Err(PacketError::Truncated("virtio-net header"));
        }
        let gso_type = buf[1] & !GSO_ECN;
        if gso_type == GSO_NONE {
            return Ok(None);
        }
        let segment_size = u16::from_ne_bytes([buf[4], buf[5]]) as usize;
        if segment_size == 0 {
            return Err(PacketError::Unsupported(
                "GSO packet with a zero segment size",
            ));
        }
        let ip = &buf[VNET_HDR_LEN..];
        let version = ip.first().ok_or(PacketError::Truncated("IP header"))? >> 4;
        let (ipv6, ip_hdr_len, proto) = match version {
            4 => {
                if ip.len() < 20 {
                    return Err(PacketError::Truncated("IPv4 header"));
                }
                let ihl = usize::from(ip[0] & 0x0f) * 4;
                if ihl < 20 || ip.len() < ihl {
                    return Err(PacketError::Truncated("IPv4 options"));
                }
                (false, ihl, ip[9])
            }
            6 => {
                if ip.len() < 40 {
                    return Err(PacketError::Truncated("IPv6 header"));
                }
                (true, 40, ip[6])
            }
            _ => return Err(PacketError::Unsupported("IP version")),
        };
        let transport = match (gso_type, proto) {
            (GSO_TCPV4, PROTO_TCP) if !ipv6 => Transport::Tcp,
            (GSO_TCPV6, PROTO_TCP) if ipv6 => Transport::Tcp,
            (GSO_UDP_L4, PROTO_UDP) => Transport::Udp,
            _ => {
                return Err(PacketError::Unsupported(
                    "GSO type and IP protocol disagree",
                ))
            }
        };
        let l4_start = VNET_HDR_LEN + ip_hdr_len;
        let l4_hdr_len = match transport {
            Transport::Tcp => {
                let offset = *buf
                    .get(l4_start + 12)
                    .ok_or(PacketError::Truncated("TCP header"))?;
                usize::from(offset >> 4) * 4
            }
            Transport::Udp => 8,
        };
        let payload_start = l4_start + l4_hdr_len;
        if l4_hdr_len < 8 || buf.len() < payload_start {
            return Err(PacketError::Truncated("transport header"));
        }
        Ok(Some(Self {
            ipv6,
            transport,
            l4_start,
            payload_start,
            payload_len: buf.len() - payload_start,
            segment_size,
        }))
    }

    /// How many segments the payload divides into (at least one).
    pub fn segments(&self) -> usize {
        self.payload_len.div_ceil(self.segment_size).max(1)
    }

    fn segment_payload(&self, index: usize) -> usize {
        let start = index * self.segment_size;
        self.payload_len
            .saturating_sub(start)
            .min(self.segment_size)
    }

    /// The size on the wire (IP packet) of segment `index`.
    pub fn segment_wire_len(&self, index: usize) -> usize {
        self.payload_start - VNET_HDR_LEN + self.segment_payload(index)
    }

    /// Writes segments `first..first + count` of `buf` (which [`parse`](Self::parse) accepted)
    /// into `out` as one packet: vnet header, IP packet.
    pub fn write_run(&self, buf: &[u8], first: usize, count: usize, out: &mut Vec<u8>) {
        let count = count.clamp(1, self.segments().saturating_sub(first).max(1));
        let payload_from = self.payload_start + first * self.segment_size;
        let payload: usize = (first..first + count)
            .map(|i| self.segment_payload(i))
            .sum();
        out.clear();
        out.extend_from_slice(&buf[..self.payload_start]);
        out.extend_from_slice(&buf[payload_from..payload_from + payload]);
        if count == 1 {
            out[1] = GSO_NONE;
            out[4..6].copy_from_slice(&0u16.to_ne_bytes());
        }
        let l4_len = self.payload_start - self.l4_start + payload;
        let ip = VNET_HDR_LEN;
        if self.ipv6 {
            put16(out, ip + 4, l4_len as u16);
        } else {
            let ip_hdr_len = self.l4_start - ip;
            put16(out, ip + 2, (ip_hdr_len + l4_len) as u16);
            let id = be16(out, ip + 4).wrapping_add(first as u16);
            put16(out, ip + 4, id);
            put16(out, ip + 10, 0);
            let check = !fold(ones_sum(&out[ip..self.l4_start]));
            put16(out, ip + 10, check);
        }
        let l4 = self.l4_start;
        let check_at = match self.transport {
            Transport::Tcp => {
                let seq = u32::from_be_bytes([out[l4 + 4], out[l4 + 5], out[l4 + 6], out[l4 + 7]])
                    .wrapping_add((first * self.segment_size) as u32);
                out[l4 + 4..l4 + 8].copy_from_slice(&seq.to_be_bytes());
                if first > 0 {
                    out[l4 + 13] &= !TCP_CWR;
                }
                if first + count < self.segments() {
                    out[l4 + 13] &= !(TCP_FIN | TCP_PSH);
                }
                l4 + 16
            }
            Transport::Udp => {
                put16(out, l4 + 4, l4_len as u16);
                l4 + 6
            }
        };
        // The L4 checksum stays partial (the vnet header asks the kernel to finish it): the
        // folded pseudo-header sum over this packet's own length.
        let addrs = if self.ipv6 {
            &out[ip + 8..ip + 40]
        } else {
            &out[ip + 12..ip + 20]
        };
        let proto = match self.transport {
            Transport::Tcp => PROTO_TCP,
            Transport::Udp => PROTO_UDP,
        };
        let pseudo =
            ones_sum(addrs) + u32::from(proto) + (l4_len as u32 >> 16) + (l4_len as u32 & 0xffff);
        put16(out, check_at, fold(pseudo));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TSO super-packet: vnet header, IPv4, TCP with `payload` bytes cut at `mss`.
    fn tcp4(payload: usize, mss: u16, flags: u8) -> Vec<u8> {
        let mut b = vec![0u8; VNET_HDR_LEN + 20 + 20 + payload];
        b[0] = 1; // NEEDS_CSUM
        b[1] = GSO_TCPV4;
        b[2..4].copy_from_slice(&40u16.to_ne_bytes());
        b[4..6].copy_from_slice(&mss.to_ne_bytes());
        let ip = VNET_HDR_LEN;
        b[ip] = 0x45;
        put16(&mut b, ip + 2, (40 + payload) as u16);
        put16(&mut b, ip + 4, 100);
        b[ip + 8] = 64;
        b[ip + 9] = PROTO_TCP;
        b[ip + 12..ip + 16].copy_from_slice(&[10, 77, 0, 1]);
        b[ip + 16..ip + 20].copy_from_slice(&[10, 77, 0, 2]);
        let tcp = ip + 20;
        b[tcp + 4..tcp + 8].copy_from_slice(&1000u32.to_be_bytes());
        b[tcp + 12] = 5 << 4;
        b[tcp + 13] = flags;
        for (i, x) in b[tcp + 20..].iter_mut().enumerate() {
            *x = i as u8;
        }
        b
    }

    #[test]
    fn plain_packets_are_not_cut() {
        let mut b = tcp4(100, 1000, 0);
        b[1] = GSO_NONE;
        assert_eq!(SuperPacket::parse(&b), Ok(None));
    }

    #[test]
    fn tso_packet_cuts_into_segments_with_fixed_headers() {
        let b = tcp4(3500, 1448, TCP_PSH | TCP_FIN | TCP_CWR);
        let p = SuperPacket::parse(&b).unwrap().unwrap();
        assert_eq!(p.segments(), 3);
        assert_eq!(p.segment_wire_len(0), 40 + 1448);
        assert_eq!(p.segment_wire_len(2), 40 + 604);
        let mut out = Vec::new();
        // The middle segment alone: a plain packet.
        p.write_run(&b, 1, 1, &mut out);
        assert_eq!(out.len(), VNET_HDR_LEN + 40 + 1448);
        assert_eq!(out[1], GSO_NONE);
        let ip = VNET_HDR_LEN;
        assert_eq!(be16(&out, ip + 2), 1488);
        assert_eq!(be16(&out, ip + 4), 101);
        assert_eq!(
            fold(ones_sum(&out[ip..ip + 20])),
            0xffff,
            "IPv4 checksum verifies"
        );
        let seq = u32::from_be_bytes(out[ip + 24..ip + 28].try_into().unwrap());
        assert_eq!(seq, 1000 + 1448);
        assert_eq!(out[ip + 33], 0, "no PSH, FIN or CWR in a middle segment");
        assert_eq!(
            out[ip + 40],
            (1448 % 256) as u8,
            "payload starts at the segment"
        );
        // The last two segments: still a super-packet, keeps FIN and PSH.
        p.write_run(&b, 1, 2, &mut out);
        assert_eq!(out[1], GSO_TCPV4);
        assert_eq!(be16(&out, ip + 2) as usize, 40 + 3500 - 1448);
        assert_eq!(out[ip + 33], TCP_PSH | TCP_FIN);
        // The partial checksum is the folded pseudo-header sum over this packet's length.
        let expect = fold(ones_sum(&[10, 77, 0, 1, 10, 77, 0, 2]) + 6 + (20 + 3500 - 1448));
        assert_eq!(be16(&out, ip + 36), expect);
    }

    #[test]
    fn udp_gso_runs_fix_the_udp_length() {
        let payload = 4 * 1200 + 10;
        let mut b = vec![0u8; VNET_HDR_LEN + 40 + 8 + payload];
        b[0] = 1;
        b[1] = GSO_UDP_L4;
        b[4..6].copy_from_slice(&1200u16.to_ne_bytes());
        let ip = VNET_HDR_LEN;
        b[ip] = 0x60;
        put16(&mut b, ip + 4, (8 + payload) as u16);
        b[ip + 6] = PROTO_UDP;
        let p = SuperPacket::parse(&b).unwrap().unwrap();
        assert_eq!(p.segments(), 5);
        let mut out = Vec::new();
        p.write_run(&b, 4, 1, &mut out);
        assert_eq!(out.len(), VNET_HDR_LEN + 48 + 10);
        assert_eq!(be16(&out, ip + 4), 18, "IPv6 payload length");
        assert_eq!(be16(&out, ip + 44), 18, "UDP length");
    }

    #[test]
    fn garbage_never_panics() {
        let mut b = tcp4(3000, 1000, 0);
        for cut in 0..b.len().min(80) {
            let _ = SuperPacket::parse(&b[..cut]);
        }
        b[VNET_HDR_LEN + 20 + 12] = 0xf0; // TCP header longer than the packet
        b.truncate(VNET_HDR_LEN + 50);
        assert!(SuperPacket::parse(&b).is_err());
        let mut zero = tcp4(3000, 1000, 0);
        zero[4..6].copy_from_slice(&0u16.to_ne_bytes());
        assert!(SuperPacket::parse(&zero).is_err());
    }
}
