//! Property tests: the parser never panics, the codec round-trips, and sequence arithmetic holds
//! across the 31-bit wrap.

use haul_proto::seq::{AckNo, MsgNo, SeqNo};
use haul_proto::wire::{
    Control, ControlPacket, DataHeader, DataPacket, FullAck, Handshake, LossList, LossRange,
    MsgInfo, Packet, PeerIp, RateReport, RequestType,
};
use proptest::prelude::*;

fn seq() -> impl Strategy<Value = SeqNo> {
    (0..=SeqNo::MAX).prop_map(|v| SeqNo::new(v).unwrap())
}

fn handshake() -> impl Strategy<Value = Handshake> {
    (
        (
            any::<u32>(),
            any::<u32>(),
            seq(),
            any::<u32>(),
            any::<u32>(),
        ),
        (
            prop_oneof![
                Just(1i32),
                Just(-1),
                Just(0),
                Just(-2),
                Just(1002),
                any::<i32>()
            ],
            any::<u32>(),
            any::<u32>(),
            any::<[u8; 16]>(),
        ),
    )
        .prop_map(
            |((version, socket_type, isn, mss, flow_window), (req, socket_id, cookie, ip))| {
                // Decode the request type the way the parser does, from its wire value.
                let mut body = [0u8; 48];
                body[20..24].copy_from_slice(&req.to_be_bytes());
                let req_type = Handshake::parse(&body).unwrap().req_type;
                Handshake {
                    version,
                    socket_type,
                    isn,
                    mss,
                    flow_window,
                    req_type,
                    socket_id,
                    cookie,
                    peer_ip: PeerIp(ip),
                }
            },
        )
}

fn control_body() -> impl Strategy<Value = (Control<'static>, Vec<u8>)> {
    let simple = prop_oneof![
        Just(Control::KeepAlive),
        Just(Control::Shutdown),
        Just(Control::CongestionWarning),
        seq().prop_map(|next_seq| Control::LightAck { next_seq }),
        (0..=AckNo::MAX).prop_map(|n| Control::Ack2 {
            ack_no: AckNo::masked(n)
        }),
        any::<u32>().prop_map(|code| Control::PeerError { code }),
        (any::<u32>(), seq(), seq()).prop_map(|(msg_word, first, last)| Control::DropRequest {
            msg_word,
            first,
            last
        }),
        handshake().prop_map(Control::Handshake),
        (
            0..=AckNo::MAX,
            seq(),
            any::<[u32; 3]>(),
            proptest::option::of(any::<[u32; 2]>())
        )
            .prop_map(|(n, next_seq, w, rates)| Control::Ack(FullAck {
                ack_no: AckNo::masked(n),
                next_seq,
                rtt_us: w[0],
                rtt_var_us: w[1],
                avail_buf: w[2],
                rates: rates.map(|r| RateReport {
                    recv_rate: r[0],
                    capacity: r[1]
                }),
            })),
    ];
    prop_oneof![
        simple.prop_map(|c| (c, Vec::new())),
        proptest::collection::vec((seq(), 0u32..1000), 1..40).prop_map(|ranges| {
            let mut words = vec![0u8; ranges.len() * 8];
            let mut len = 0;
            for (start, n) in ranges {
                let r = LossRange {
                    start,
                    end: start.wrapping_add(n),
                };
                len = LossList::write_range(r, &mut words, len).unwrap();
            }
            words.truncate(len);
            (Control::KeepAlive, words)
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Any bytes: a value or an error, never a panic; a value re-encodes to bytes that parse to
    /// the same value.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(packet) = Packet::parse(&bytes) {
            let again = packet.to_vec();
            prop_assert_eq!(Packet::parse(&again).unwrap(), packet);
        }
    }

    /// Control-looking bytes of every type and length, to reach every body parser.
    #[test]
    fn control_bytes_never_panic(ty in 0u16..12, body in proptest::collection::vec(any::<u8>(), 0..80)) {
        let mut bytes = vec![0x80 | (ty >> 8) as u8, ty as u8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5];
        bytes.extend_from_slice(&body);
        if let Ok(packet) = Packet::parse(&bytes) {
            let again = packet.to_vec();
            prop_assert_eq!(Packet::parse(&again).unwrap(), packet);
        }
    }

    #[test]
    fn control_packets_round_trip(
        (body, nak_words) in control_body(),
        dest in any::<u32>(),
        timestamp in any::<u32>(),
    ) {
        let body = if nak_words.is_empty() { body } else { Control::Nak(LossList::parse(&nak_words).unwrap()) };
        let packet = Packet::Control(ControlPacket { timestamp, dest, body });
        let bytes = packet.to_vec();
        prop_assert_eq!(bytes.len(), packet.encoded_len());
        prop_assert_eq!(Packet::parse(&bytes).unwrap(), packet);
    }

    #[test]
    fn data_packets_round_trip(
        s in seq(),
        msg_word in any::<u32>(),
        timestamp in any::<u32>(),
        dest in any::<u32>(),
        payload in proptest::collection::vec(any::<u8>(), 0..1500),
    ) {
        let packet = Packet::Data(DataPacket {
            header: DataHeader { seq: s, msg: MsgInfo::from_word(msg_word), timestamp, dest },
            payload: &payload,
        });
        let bytes = packet.to_vec();
        prop_assert_eq!(Packet::parse(&bytes).unwrap(), packet);
    }

    /// Offsets and comparisons agree with plain integer arithmetic on extended numbers,
    /// starting right below the 31-bit wrap.
    #[test]
    fn sequence_arithmetic_across_the_wrap(
        start in (SeqNo::MAX - 1000)..=SeqNo::MAX,
        a in 0u64..(1 << 29),
        b in 0u64..(1 << 29),
    ) {
        let base = SeqNo::new(start).unwrap().start();
        let (x, y) = (base + a, base + b);
        let (sx, sy) = (SeqNo::from_extended(x), SeqNo::from_extended(y));
        prop_assert_eq!(sx.offset_to(sy) as i64, y as i64 - x as i64);
        prop_assert_eq!(sx.cmp_wrapping(sy), x.cmp(&y));
        prop_assert_eq!(sy.extend(x), Some(y));
        prop_assert_eq!(sx.wrapping_add((y - x.min(y)) as u32), SeqNo::from_extended(x.max(y)));
    }

    #[test]
    fn message_numbers_stay_in_range(start in 0u32..=MsgNo::MAX, steps in 0usize..2000) {
        let mut m = MsgNo::masked(start);
        for _ in 0..steps {
            m = m.next();
            prop_assert!(m.value() >= 1 && m.value() <= MsgNo::MAX);
        }
    }
}

#[test]
fn request_type_values() {
    let mut body = [0u8; 48];
    for (v, t) in [
        (1i32, RequestType::Request),
        (-1, RequestType::Response),
        (0, RequestType::Rendezvous),
        (-2, RequestType::RendezvousFinal),
        (1002, RequestType::Rejected),
    ] {
        body[20..24].copy_from_slice(&v.to_be_bytes());
        assert_eq!(Handshake::parse(&body).unwrap().req_type, t);
    }
}
