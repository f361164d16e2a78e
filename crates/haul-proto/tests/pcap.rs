//! Every packet in the reference captures (`tests/data/*.pcap`, real traffic of Debian's libudt
//! 4.11) decodes and re-encodes to the same bytes.
//!
//! Captures taken with a 96-byte snapshot cut data payloads (opaque: the captured prefix must
//! round-trip) and the tail of handshakes, whose missing bytes are the zero upper words of an
//! IPv4 peer address (the snap-128 captures show them whole). Those are padded with zeros to
//! their on-wire length before decoding.

use haul_proto::seq::SeqNo;
use haul_proto::wire::{Control, Packet, RequestType, SocketType};
use std::collections::BTreeMap;
use std::path::Path;

/// UDP payloads of a pcap file (Ethernet, IPv4): (captured bytes, length on the wire).
fn udp_payloads(path: &Path) -> Vec<(Vec<u8>, usize)> {
    let data = std::fs::read(path).unwrap();
    assert_eq!(&data[..4], &[0xd4, 0xc3, 0xb2, 0xa1], "little-endian pcap");
    assert_eq!(
        u32::from_le_bytes(data[20..24].try_into().unwrap()),
        1,
        "Ethernet"
    );
    let mut out = Vec::new();
    let mut off = 24;
    while off + 16 <= data.len() {
        let incl = u32::from_le_bytes(data[off + 8..off + 12].try_into().unwrap()) as usize;
        let frame = &data[off + 16..off + 16 + incl];
        off += 16 + incl;
        let ip = &frame[14..];
        assert_eq!(ip[0] >> 4, 4, "IPv4");
        assert_eq!(ip[9], 17, "UDP");
        let udp = &ip[(ip[0] & 0xF) as usize * 4..];
        let wire_len = u16::from_be_bytes([udp[4], udp[5]]) as usize - 8;
        out.push((udp[8..].to_vec(), wire_len));
    }
    out
}

fn captures() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 5, "all five reference captures are present");
    files
}

fn kind(p: &Packet) -> &'static str {
    match p {
        Packet::Data(_) => "data",
        Packet::Control(c) => match c.body {
            Control::Handshake(_) => "handshake",
            Control::KeepAlive => "keepalive",
            Control::LightAck { .. } => "light-ack",
            Control::Ack(a) if a.rates.is_some() => "full-ack",
            Control::Ack(_) => "medium-ack",
            Control::Nak(_) => "nak",
            Control::CongestionWarning => "congestion",
            Control::Shutdown => "shutdown",
            Control::Ack2 { .. } => "ack2",
            Control::DropRequest { .. } => "drop",
            Control::PeerError { .. } => "peer-error",
            Control::User { .. } => "user",
        },
    }
}

#[test]
fn every_captured_packet_round_trips() {
    let mut kinds = BTreeMap::new();
    let mut total = 0;
    for file in captures() {
        for (i, (captured, wire_len)) in udp_payloads(&file).into_iter().enumerate() {
            let is_data = captured[0] & 0x80 == 0;
            let bytes = if captured.len() < wire_len && !is_data {
                let mut padded = captured.clone();
                padded.resize(wire_len, 0);
                padded
            } else {
                captured.clone()
            };
            let packet = Packet::parse(&bytes)
                .unwrap_or_else(|e| panic!("{} packet {}: {e}", file.display(), i + 1));
            assert_eq!(
                packet.to_vec(),
                bytes,
                "{} packet {} re-encodes differently",
                file.display(),
                i + 1
            );
            *kinds.entry(kind(&packet)).or_insert(0) += 1;
            total += 1;
        }
    }
    assert_eq!(total, 569);
    for k in [
        "handshake",
        "keepalive",
        "full-ack",
        "nak",
        "ack2",
        "shutdown",
        "data",
    ] {
        assert!(kinds.contains_key(k), "captures contain {k}: {kinds:?}");
    }
}

#[test]
fn handshake_fields_match_what_the_reference_sent() {
    let file = captures()
        .into_iter()
        .find(|p| p.ends_with("keepalive-peer-gone.pcap"))
        .unwrap();
    let packets = udp_payloads(&file);
    let Packet::Control(c) = Packet::parse(&packets[3].0).unwrap() else {
        panic!("control expected")
    };
    let Control::Handshake(h) = c.body else {
        panic!("handshake expected")
    };
    assert_eq!(h.version, 4);
    assert_eq!(
        SocketType::from_wire(h.socket_type),
        Some(SocketType::Stream)
    );
    assert_eq!(h.req_type, RequestType::Response);
    assert_eq!(h.mss, 1500);
    assert_eq!(h.flow_window, 8192);
    // The server's answer carries the client's ISN.
    assert_eq!(h.isn, SeqNo::new(0x1cdf_3472).unwrap());
    assert_eq!(h.peer_ip.to_ip(false), std::net::Ipv4Addr::LOCALHOST);
}

#[test]
fn nak_range_decodes_as_in_the_capture() {
    let file = captures()
        .into_iter()
        .find(|p| p.ends_with("nak-range.pcap"))
        .unwrap();
    let naks: Vec<_> = udp_payloads(&file)
        .into_iter()
        .filter(|(b, _)| b[0] == 0x80 && b[1] == 0x03)
        .collect();
    let Packet::Control(c) = Packet::parse(&naks[0].0).unwrap() else {
        panic!()
    };
    let Control::Nak(list) = c.body else { panic!() };
    let ranges: Vec<_> = list
        .iter()
        .map(|r| (r.start.value(), r.end.value()))
        .collect();
    assert_eq!(ranges, vec![(0x0335_c371, 0x0335_c372)]);
}
