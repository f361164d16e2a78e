//! Unit tests of the connection: batching, loss reports, repeats, close, the first ACK.

use super::*;
use crate::cc::{
    AckSample, CcInit, CongestionControl, CongestionControlFactory, FixedRateFactory, LossSample,
    PathEstimate, PathRtt,
};
use crate::wire::{PeerIp, RequestType};
use std::sync::Arc;

/// A server connection, established, sending at 10 Gbit/s so the pacer never holds it back.
fn established(max_segments: usize) -> (Connection, Instant) {
    established_with(ConnectionConfig {
        max_segments,
        congestion: Arc::new(FixedRateFactory {
            bits_per_second: 10_000_000_000,
        }),
        ..ConnectionConfig::default()
    })
}

fn established_with(config: ConnectionConfig) -> (Connection, Instant) {
    established_at(config, Instant::now())
}

fn established_at(config: ConnectionConfig, now: Instant) -> (Connection, Instant) {
    let request = Handshake {
        version: 4,
        socket_type: 1,
        isn: SeqNo::new(5).unwrap(),
        mss: 1500,
        flow_window: 10_000,
        req_type: RequestType::Response,
        socket_id: 9,
        cookie: 0,
        peer_ip: PeerIp::default(),
    };
    let peer = "127.0.0.1:1".parse().unwrap();
    let mut conn = Connection::accept(now, 3, peer, &request, None, config);
    let mut buf = Vec::new();
    let handshake = conn.poll_transmit(now, &mut buf).unwrap();
    assert_eq!(handshake.size, 64);
    (conn, now)
}

#[test]
fn transmits_are_gso_batches_of_equal_segments() {
    let (mut conn, now) = established(8);
    conn.write(&[1; 20_000]).unwrap();
    let mut buf = Vec::new();
    // Pacing banks credit only while time passes: a driver wakes a little after the deadline.
    let t = conn
        .poll_transmit(now + Duration::from_micros(100), &mut buf)
        .unwrap();
    assert_eq!(t.segment_size, Some(1472));
    assert_eq!(t.size, 8 * 1472);
    let sizes: Vec<usize> = std::iter::from_fn(|| {
        buf.clear();
        conn.poll_transmit(now + SYN, &mut buf)
    })
    .map(|t| t.size)
    .collect();
    // 20 000 bytes = 13 full packets + 1 of 1072: 8 in the first batch, then 6 (5 + short).
    assert_eq!(sizes, vec![5 * 1472 + 1072 + 16]);
}

#[test]
fn lent_bytes_may_run_further_ahead_of_the_pacer_than_copied_ones() {
    let (mut conn, _) = established(8);
    let copied = conn.config.max_unsent_bytes;
    let lent = conn.config.max_unsent_lent_bytes;
    assert!(lent > copied);
    assert_eq!(conn.write(&vec![1; 2 * copied]), Ok(copied));
    assert_eq!(conn.write(&[1]), Err(StreamError::Blocked));
    let block = Bytes::from(vec![2; lent]);
    assert_eq!(conn.write_bytes(&block), Ok(lent - copied));
    assert_eq!(conn.write_bytes(&block), Err(StreamError::Blocked));
}

/// The bytes of a gathered transmit, pieces joined in order.
fn joined(conn: &Connection, buf: &[u8], pieces: &[Piece]) -> Vec<u8> {
    let mut out = Vec::new();
    for piece in pieces {
        match *piece {
            Piece::Buf { start, len } => out.extend_from_slice(&buf[start..start + len]),
            Piece::Sent { offset, len } => {
                assert!(conn.sent_payload(offset, len, |chunk, range| {
                    out.extend_from_slice(&chunk[range]);
                }));
            }
        }
    }
    out
}

#[test]
fn gathered_transmits_carry_the_same_bytes_as_copied_ones() {
    let (mut copied, now) = established(8);
    let (mut gathered, _) = established_at(copied.config.clone(), now);
    let data: Vec<u8> = (0..20_000u32).map(|i| (i % 253) as u8).collect();
    copied.write(&data).unwrap();
    gathered.write(&data).unwrap();
    // A retransmission first (it goes alone), then batches of new data.
    for conn in [&mut copied, &mut gathered] {
        conn.snd_loss.insert(
            SeqNo::new(6).unwrap().start(),
            SeqNo::new(6).unwrap().start(),
            (),
        );
    }
    let later = now + SYN;
    let (mut a, mut b, mut pieces) = (Vec::new(), Vec::new(), Vec::new());
    let mut transmits = 0;
    loop {
        a.clear();
        b.clear();
        pieces.clear();
        let t = copied.poll_transmit(later, &mut a);
        let u = gathered.poll_transmit_gather(later, &mut b, &mut pieces);
        assert_eq!(t, u);
        let Some(t) = t else { break };
        let bytes = joined(&gathered, &b, &pieces);
        assert_eq!(bytes.len(), t.size);
        assert!(bytes == a, "transmit {transmits} differs");
        assert!(b.len() < a.len() || t.size < 100, "payloads were copied");
        transmits += 1;
    }
    assert!(transmits >= 2);
}

/// A data packet from the peer of [`established`] (its first sequence number is 5).
fn data_packet(seq: u32, payload: &[u8]) -> Vec<u8> {
    data_packet_sent(seq, payload, 0)
}

/// [`data_packet`] with the sender's `timestamp` (microseconds).
fn data_packet_sent(seq: u32, payload: &[u8], timestamp: u32) -> Vec<u8> {
    let header = DataHeader {
        seq: SeqNo::new(seq).unwrap(),
        msg: MsgInfo {
            position: crate::wire::MsgPosition::Solo,
            in_order: false,
            number: crate::seq::MsgNo::FIRST,
        },
        timestamp,
        dest: 3,
    };
    let mut bytes = header.to_bytes().to_vec();
    bytes.extend_from_slice(payload);
    bytes
}

/// The loss reports `conn` sends now, each as its list of ranges (offsets from sequence
/// number 5, the first of [`data_packet`]'s peer).
fn loss_reports(conn: &mut Connection, now: Instant) -> Vec<Vec<(u32, u32)>> {
    let isn = SeqNo::new(5).unwrap();
    let mut reports = Vec::new();
    let mut buf = Vec::new();
    while let Some(t) = conn.poll_transmit(now, &mut buf) {
        if let Ok(Packet::Control(c)) = Packet::parse(&buf[..t.size]) {
            if let Control::Nak(list) = c.body {
                let offset = |s: SeqNo| isn.offset_to(s) as u32;
                reports.push(
                    list.iter()
                        .map(|r| (offset(r.start), offset(r.end)))
                        .collect(),
                );
            }
        }
        buf.clear();
    }
    reports
}

/// Short data packets (offsets from the peer's first sequence number) arriving at `at`;
/// returns the loss reports they prompted.
fn arrive_at(conn: &mut Connection, at: Instant, offsets: &[u32]) -> Vec<Vec<(u32, u32)>> {
    let peer = conn.peer_addr();
    for &i in offsets {
        conn.handle_datagram(at, peer, &data_packet(5 + i, &[0; 100]));
    }
    loss_reports(conn, at)
}

#[test]
fn a_gap_is_reported_again_with_the_next_while_it_is_missing() {
    let (mut conn, now) = established(8);
    assert_eq!(arrive_at(&mut conn, now, &[0, 2]), [vec![(1, 1)]]);
    assert_eq!(
        arrive_at(&mut conn, now, &[5]),
        [vec![(3, 4), (1, 1)]],
        "1 rides along"
    );
    // 3 arrives: the gap 3..=4 is no longer whole, and is not repeated.
    assert_eq!(arrive_at(&mut conn, now, &[3, 7]), [vec![(6, 6)]]);
    // Half the RTT (100 ms before any sample) later, 6 may have been resent: not repeated.
    let later = now + Duration::from_millis(50);
    assert_eq!(arrive_at(&mut conn, later, &[9]), [vec![(8, 8)]]);
    // An RTO (RTT + 4·RTTVar) and 10 ms after their reports, the holes go out again, three
    // times.
    let due = conn.rtt.rto() + SYN;
    conn.handle_timeout(now + due);
    let renak = vec![vec![(1, 1), (4, 4), (6, 6)]; 3];
    assert_eq!(arrive_at(&mut conn, now + due, &[]), renak);
    let (mut reference, _) = established_with(ConnectionConfig {
        repeat_loss_reports: false,
        ..ConnectionConfig::default()
    });
    assert_eq!(
        arrive_at(&mut reference, now, &[0, 2, 5]),
        [vec![(1, 1)], vec![(3, 4)]]
    );
}

#[test]
fn on_a_long_path_a_gap_is_reported_again_with_the_next_two() {
    let (mut conn, now) = established(8);
    // The first packet's ACK goes at once; its ACK2 comes back 250 ms later.
    arrive_at(&mut conn, now, &[0]);
    let at = now + Duration::from_millis(250);
    ack2_at(&mut conn, at, AckNo::FIRST);
    assert_eq!(conn.rcv_min_rtt, Some(Duration::from_millis(250)));
    assert_eq!(arrive_at(&mut conn, at, &[2]), [vec![(1, 1)]]);
    assert_eq!(arrive_at(&mut conn, at, &[5]), [vec![(3, 4), (1, 1)]]);
    // 3 arrives: the gap 3..=4 is no longer whole, and is not repeated; 1 rides again.
    assert_eq!(arrive_at(&mut conn, at, &[3, 7]), [vec![(6, 6), (1, 1)]]);
    // 1 went out three times: it rides no more.
    assert_eq!(arrive_at(&mut conn, at, &[9]), [vec![(8, 8), (6, 6)]]);
}

/// A short data packet (offset `offset` from the peer's first sequence number) that left the
/// peer `sent_ms` after `start` on its clock and took 50 ms; returns the loss reports it
/// prompted.
fn arrive_sent(
    conn: &mut Connection,
    start: Instant,
    offset: u32,
    sent_ms: u64,
) -> Vec<Vec<(u32, u32)>> {
    let packet = data_packet_sent(5 + offset, &[0; 100], (sent_ms * 1000) as u32);
    let at = start + Duration::from_millis(sent_ms + 50);
    let peer = conn.peer_addr();
    conn.handle_datagram(at, peer, &packet);
    loss_reports(conn, at)
}

/// The peer's ACK2 of our ACK `ack_no`, arriving at `at`.
fn ack2_at(conn: &mut Connection, at: Instant, ack_no: AckNo) {
    feed(conn, at, Control::Ack2 { ack_no });
}

#[test]
fn a_repair_is_reported_again_once_data_sent_after_it_arrives() {
    let (mut conn, now) = established(8);
    let ms = |n: u64| now + Duration::from_millis(n);
    let arrive = |conn: &mut Connection, offset, sent| arrive_sent(conn, now, offset, sent);
    // Its first packet is short: the ACK goes at once (50 ms), its ACK2 is back at 150.
    arrive(&mut conn, 0, 0);
    ack2_at(&mut conn, ms(150), AckNo::FIRST);
    assert_eq!(conn.rcv_min_rtt, Some(Duration::from_millis(100)));
    assert_eq!(
        arrive(&mut conn, 2, 200),
        [vec![(1, 1)]],
        "reported at 250 ms"
    );
    // The repair leaves at 300 ms at the soonest and arrives by 350 (and 10 ms of margin).
    // Data sent at 305 ms says nothing yet; data sent at 315 ms should have come after it.
    assert!(arrive(&mut conn, 3, 305).is_empty());
    conn.handle_timeout(ms(360));
    assert!(loss_reports(&mut conn, ms(360)).is_empty());
    assert!(arrive(&mut conn, 4, 315).is_empty());
    conn.handle_timeout(ms(370));
    let again = vec![vec![(1, 1)]; 3];
    assert_eq!(
        loss_reports(&mut conn, ms(370)),
        again,
        "long before the timer's 560 ms"
    );
}

#[test]
fn an_overdue_repair_is_reported_again_no_sooner_than_the_smoothed_rtt() {
    let (mut conn, now) = established(8);
    let ms = |n: u64| now + Duration::from_millis(n);
    let arrive = |conn: &mut Connection, offset, sent| arrive_sent(conn, now, offset, sent);
    // Two short packets, each acknowledged at once: ACK–ACK2 samples of 100 and 500 ms
    // (a queue on the way back) make the smoothed RTT 150 ms and the smallest 100.
    arrive(&mut conn, 0, 0);
    ack2_at(&mut conn, ms(150), AckNo::FIRST);
    arrive(&mut conn, 1, 100);
    ack2_at(&mut conn, ms(650), AckNo::FIRST.next());
    assert_eq!(conn.rtt.rtt(), Duration::from_millis(150));
    assert_eq!(
        arrive(&mut conn, 3, 700),
        [vec![(2, 2)]],
        "reported at 750 ms"
    );
    // Data sent at 815 ms shows the repair overdue when it arrives at 865, 115 ms after
    // the report; the sender, whose RTT is the one we reported, would ignore a repeat of
    // what it resent less than that ago. So the repeat waits for 900 ms.
    assert!(arrive(&mut conn, 4, 815).is_empty());
    conn.handle_timeout(ms(890));
    assert!(loss_reports(&mut conn, ms(890)).is_empty());
    conn.handle_timeout(ms(900));
    let again = vec![vec![(2, 2)]; 3];
    assert_eq!(loss_reports(&mut conn, ms(900)), again);
}

#[test]
fn payloads_received_as_bytes_are_read_without_a_copy() {
    let (mut conn, now) = established(8);
    let peer = conn.peer_addr();
    let datagrams: Vec<Bytes> = (5..8u8)
        .map(|i| Bytes::from(data_packet(i.into(), &[i; 100])))
        .collect();
    // Out of order: held until the gap fills, still as slices of the datagrams.
    for i in [0, 2, 1] {
        conn.handle_datagram_bytes(now, peer, &datagrams[i]);
    }
    for (i, datagram) in datagrams.iter().enumerate() {
        let chunk = conn.read_chunk(1 << 20).unwrap();
        assert_eq!(chunk.len(), 100);
        assert_eq!(
            chunk.as_ptr(),
            datagram[datagram.len() - 100..].as_ptr(),
            "packet {i}"
        );
    }
    assert_eq!(conn.read_chunk(1 << 20), Err(StreamError::Blocked));
    // The same packets as borrowed bytes are copied, and read alike.
    conn.handle_datagram(now, peer, &data_packet(8, &[8; 100]));
    let mut out = [0u8; 60];
    assert_eq!(conn.read(&mut out), Ok(60));
    assert_eq!(&conn.read_chunk(1 << 20).unwrap()[..], &[8; 40]);
    assert_eq!(conn.stats().bytes_received, 400);
}

#[test]
fn datagrams_of_a_coalesced_message_are_read_as_slices_of_it() {
    let (mut conn, now) = established(8);
    let peer = conn.peer_addr();
    let packets: Vec<Vec<u8>> = (5..8u8).map(|i| data_packet(i.into(), &[i; 100])).collect();
    let message = Bytes::from(packets.concat());
    let size = packets[0].len();
    for start in (0..message.len()).step_by(size) {
        conn.handle_datagram_in(now, peer, &message, start..start + size);
    }
    // A range past the message's end is no datagram: ignored, no panic.
    conn.handle_datagram_in(now, peer, &message, message.len() - 4..message.len() + 4);
    for i in 0..3 {
        let chunk = conn.read_chunk(1 << 20).unwrap();
        assert_eq!(&chunk[..], &[5 + i as u8; 100][..]);
        assert_eq!(chunk.as_ptr(), message[(i + 1) * size - 100..].as_ptr());
    }
    assert_eq!(conn.read_chunk(1 << 20), Err(StreamError::Blocked));
}

/// A control packet from the peer of [`established`].
fn control_packet(body: Control<'_>) -> Vec<u8> {
    let packet = ControlPacket::new(3, body);
    let mut bytes = vec![0; packet.encoded_len()];
    let len = packet.encode(&mut bytes).unwrap();
    bytes.truncate(len);
    bytes
}

/// A full ACK from the peer of [`established`] of everything before `end`.
fn full_ack_of(end: SeqNo) -> Vec<u8> {
    control_packet(Control::Ack(FullAck {
        ack_no: AckNo::masked(1),
        next_seq: end,
        rtt_us: 10_000,
        rtt_var_us: 1_000,
        avail_buf: 1000,
        rates: None,
    }))
}

#[test]
fn a_close_waits_for_a_full_ack_of_the_last_packets() {
    let (mut conn, now) = established(8);
    let peer = conn.peer_addr();
    conn.write(&[7; 3000]).unwrap();
    let mut buf = Vec::new();
    while conn.poll_transmit(now + SYN, &mut buf).is_some() {}
    let end = SeqNo::from_extended(conn.send.next_seq());
    conn.close(now);
    // A light ACK of everything: the peer has the data but (UDT4) cannot read it yet.
    let light = control_packet(Control::LightAck { next_seq: end });
    conn.handle_datagram(now + SYN, peer, &light);
    assert!(conn.send.is_empty());
    assert!(!conn.is_flushed());
    assert_eq!(conn.close_reason(), None, "no shutdown before a full ACK");
    conn.handle_datagram(now + SYN * 2, peer, &full_ack_of(end));
    assert!(conn.is_flushed());
    assert_eq!(conn.close_reason(), Some(CloseReason::LocalClose));
}

/// Sends 3000 bytes and closes; returns the sequence number after the last packet.
fn all_sent_and_closing(conn: &mut Connection, now: Instant) -> SeqNo {
    conn.write(&[7; 3000]).unwrap();
    let mut buf = Vec::new();
    while conn.poll_transmit(now + SYN, &mut buf).is_some() {}
    conn.close(now);
    SeqNo::from_extended(conn.send.next_seq())
}

#[test]
fn an_ack_right_behind_the_peers_shutdown_still_confirms_delivery() {
    let (mut conn, now) = established(8);
    let peer = conn.peer_addr();
    let end = all_sent_and_closing(&mut conn, now);
    conn.handle_datagram(now + SYN, peer, &control_packet(Control::Shutdown));
    assert_eq!(conn.close_reason(), None, "the ACK may be on its way");
    let mut buf = Vec::new();
    assert!(
        conn.poll_transmit(now + SYN * 5, &mut buf).is_none(),
        "nothing goes to a peer that shut down"
    );
    conn.handle_datagram(now + SYN * 2, peer, &full_ack_of(end));
    // Everything delivered: the local close completes as if the peer had stayed.
    assert_eq!(conn.close_reason(), Some(CloseReason::LocalClose));
    assert_eq!(conn.unacknowledged_bytes(), 0);
}

#[test]
fn a_shutdown_with_no_ack_behind_it_closes_after_the_grace() {
    let (mut conn, now) = established(8);
    let peer = conn.peer_addr();
    all_sent_and_closing(&mut conn, now);
    let shut = now + SYN;
    conn.handle_datagram(shut, peer, &control_packet(Control::Shutdown));
    assert_eq!(conn.poll_timeout(), Some(shut + PEER_SHUTDOWN_GRACE));
    conn.handle_timeout(shut + PEER_SHUTDOWN_GRACE);
    assert_eq!(conn.close_reason(), Some(CloseReason::PeerClosed));
    assert_eq!(conn.unacknowledged_bytes(), 3000);
}

#[test]
fn a_shutdown_with_nothing_in_flight_closes_at_once() {
    let (mut conn, now) = established(8);
    let peer = conn.peer_addr();
    conn.handle_datagram(now, peer, &control_packet(Control::Shutdown));
    assert_eq!(conn.close_reason(), Some(CloseReason::PeerClosed));
}

#[test]
fn a_short_packet_never_leads_a_batch_of_full_ones() {
    let (mut conn, now) = established(8);
    conn.write(&[1; 100]).unwrap();
    let mut buf = Vec::new();
    assert_eq!(conn.poll_transmit(now, &mut buf).unwrap().size, 116);
    // Lose it, then queue full packets: the retransmission goes alone, not as segment 1.
    conn.snd_loss.insert(
        SeqNo::new(5).unwrap().start(),
        SeqNo::new(5).unwrap().start(),
        (),
    );
    conn.write(&[2; 5000]).unwrap();
    let later = now + SYN;
    let t = conn.poll_transmit(later, &mut buf).unwrap();
    assert_eq!((t.size, t.segment_size), (116, None));
    let t = conn.poll_transmit(later, &mut buf).unwrap();
    assert_eq!(t.segment_size, Some(1472));
}

/// Paces at 1 µs with a window of 10 000, asks for two copies of repairs (`repeat`: of those
/// that cost a round trip already; `repeat_first`: of first repairs) or not, and
/// records the `lost` count, the longest gap and the RTT sample of every loss report.
#[derive(Debug, Default, Clone)]
struct TestCc {
    /// Copies asked for a repair lost again, and for a first repair (0 reads as 1).
    copies_again: u8,
    copies_first: u8,
    losses: Arc<std::sync::Mutex<Vec<u64>>>,
    gaps: Arc<std::sync::Mutex<Vec<u64>>>,
    samples: Arc<std::sync::Mutex<Vec<Option<Duration>>>>,
    /// The shared path RTTs the controller was handed.
    paths: Arc<std::sync::Mutex<Vec<Arc<PathRtt>>>>,
}

impl CongestionControl for TestCc {
    fn name(&self) -> &'static str {
        "test"
    }
    fn on_ack(&mut self, _: Instant, _: &AckSample) {}
    fn on_loss(&mut self, _: Instant, loss: &LossSample) {
        self.losses.lock().unwrap().push(loss.lost);
        self.gaps.lock().unwrap().push(loss.longest_gap);
        self.samples.lock().unwrap().push(loss.rtt_sample);
    }
    fn on_timeout(&mut self, _: Instant, _: &PathEstimate) {}
    fn pacing_period(&self) -> Duration {
        Duration::from_micros(1)
    }
    fn window(&self) -> u32 {
        10_000
    }
    fn repair_copies(&self, again: bool) -> u8 {
        if again {
            self.copies_again
        } else {
            self.copies_first
        }
    }
    fn share_path_rtt(&mut self, path: Arc<PathRtt>) {
        self.paths.lock().unwrap().push(path);
    }
}

impl TestCc {
    /// A controller that asks for `first` copies of a first repair and `again` of one lost
    /// again.
    fn asking(first: u8, again: u8) -> Self {
        TestCc {
            copies_first: first,
            copies_again: again,
            ..TestCc::default()
        }
    }
}

impl CongestionControlFactory for TestCc {
    fn build(&self, _: &CcInit) -> Box<dyn CongestionControl> {
        Box::new(self.clone())
    }
}

#[test]
fn an_accepted_connections_controller_shares_its_hosts_path_rtt() {
    // An accepted connection builds its controller with the handshake, before the endpoint
    // hands it the path it shares with the other connections to the host: the controller
    // takes it all the same, and the connection keeps no second reference to it.
    let cc = TestCc::default();
    let (mut conn, _) = established_with(ConnectionConfig {
        congestion: Arc::new(cc.clone()),
        ..ConnectionConfig::default()
    });
    let path = Arc::new(PathRtt::default());
    conn.share_path_rtt(path.clone());
    let handed = cc.paths.lock().unwrap();
    assert_eq!(handed.len(), 1, "the controller was not handed the path");
    assert!(Arc::ptr_eq(&handed[0], &path));
    assert!(conn.shared_path_rtt().is_none());
}

#[test]
fn a_retransmission_lost_again_goes_as_often_as_the_controller_asks_within_the_limit() {
    for (asked, copies) in [(2, 2), (4, 4), (200, MAX_REPAIR_COPIES)] {
        let (mut conn, now) = established_with(ConnectionConfig {
            congestion: Arc::new(TestCc::asking(0, asked)),
            ..ConnectionConfig::default()
        });
        conn.write(&[1; 100]).unwrap();
        let mut buf = Vec::new();
        assert_eq!(conn.poll_transmit(now, &mut buf).unwrap().size, 116);
        let seq = SeqNo::new(5).unwrap().start();
        let mut later = now;
        let mut lose_and_send = |conn: &mut Connection| {
            conn.snd_loss.insert(seq, seq, ());
            later += SYN;
            buf.clear();
            conn.poll_transmit(later, &mut buf).unwrap()
        };
        let first = lose_and_send(&mut conn);
        assert_eq!((first.size, first.segment_size), (116, None), "one copy");
        let again = lose_and_send(&mut conn);
        assert_eq!(
            (again.size, again.segment_size),
            (116 * usize::from(copies), Some(116)),
            "asked for {asked}"
        );
        assert_eq!(
            conn.stats().packets_retransmitted,
            1 + u64::from(copies),
            "asked for {asked}"
        );
    }
}

/// A connection with a loss-recording controller that sent 16 packets (from sequence number
/// 5) and had the first 4 acknowledged; the time of the ACK.
fn sixteen_sent_four_acknowledged(recorder: &TestCc) -> (Connection, Instant) {
    let (mut conn, now) = established_with(ConnectionConfig {
        congestion: Arc::new(recorder.clone()),
        ..ConnectionConfig::default()
    });
    conn.write(&[0u8; 16 * 1456]).unwrap();
    let mut buf = Vec::new();
    let mut t = now;
    while conn.stats().packets_sent < 16 {
        t += Duration::from_micros(1);
        conn.poll_transmit(t, &mut buf);
    }
    let ack = FullAck {
        ack_no: AckNo::FIRST,
        next_seq: SeqNo::new(5).unwrap().wrapping_add(4),
        rtt_us: 1000,
        rtt_var_us: 100,
        avail_buf: 1000,
        rates: None,
    };
    feed(&mut conn, t, Control::Ack(ack));
    (conn, t)
}

#[test]
fn a_hole_reported_again_before_its_retransmission_is_no_new_loss() {
    let recorder = TestCc::default();
    let (mut conn, now) = sixteen_sent_four_acknowledged(&recorder);
    let mut buf = Vec::new();
    // Reported, reported again before anything was resent, again right after the resend
    // (the receiver cannot know of it yet), then again a round trip after it.
    report_lost(&mut conn, now, 6, 8);
    report_lost(&mut conn, now, 6, 8);
    let later = now + SYN;
    while conn.poll_transmit(later, &mut buf).is_some() {}
    assert_eq!(conn.stats().packets_retransmitted, 3);
    report_lost(&mut conn, later, 6, 8);
    assert!(
        conn.poll_transmit(later, &mut buf).is_none(),
        "what is on its way is not resent"
    );
    let rtt = conn.rto.rtt().expect("the ACK gave a sample");
    report_lost(&mut conn, later + rtt, 6, 8);
    assert_eq!(*recorder.losses.lock().unwrap(), [3, 0, 0, 3]);
    let samples: Vec<bool> = recorder
        .samples
        .lock()
        .unwrap()
        .iter()
        .map(Option::is_some)
        .collect();
    assert_eq!(
        samples,
        [true, false, false, false],
        "only the first report times the path"
    );
    assert_eq!(
        conn.stats().packets_reported_lost,
        12,
        "the statistic counts reports"
    );
}

#[test]
fn a_loss_report_tells_the_controller_its_longest_gap() {
    // One report lists 6–8 and 10–13: seven lost, four of them in a row. Listed again
    // before anything was resent, they are no new loss and no gap.
    let recorder = TestCc::default();
    let (mut conn, now) = sixteen_sent_four_acknowledged(&recorder);
    let isn = SeqNo::new(5).unwrap();
    let mut words = [0u8; 16];
    let mut len = 0;
    for (a, b) in [(6, 8), (10, 13)] {
        let range = LossRange {
            start: isn.wrapping_add(a),
            end: isn.wrapping_add(b),
        };
        len = LossList::write_range(range, &mut words, len).unwrap();
    }
    let list = LossList::parse(&words[..len]).unwrap();
    feed(&mut conn, now, Control::Nak(list));
    feed(&mut conn, now, Control::Nak(list));
    assert_eq!(*recorder.losses.lock().unwrap(), [7, 0]);
    assert_eq!(*recorder.gaps.lock().unwrap(), [4, 0]);
}

#[test]
fn a_first_report_that_comes_late_goes_twice_when_the_controller_asks() {
    let recorder = TestCc::asking(0, 2);
    let (mut conn, now) = sixteen_sent_four_acknowledged(&recorder);
    // The peer's RTT is 1 ms (the ACK), the sender's own 12 µs: a first report comes within
    // 1.5 ms of the packet, or its own report was lost.
    assert_eq!(resend(&mut conn, now, 6, 8), 3, "on time: one copy each");
    let late = now + Duration::from_micros(1600);
    assert_eq!(resend(&mut conn, late, 10, 11), 4, "late: two copies each");
    let (mut plain, now) = sixteen_sent_four_acknowledged(&TestCc::default());
    let late = now + Duration::from_micros(1600);
    assert_eq!(
        resend(&mut plain, late, 10, 11),
        2,
        "one copy each where the controller does not ask"
    );
}

#[test]
fn a_second_copy_survives_the_end_of_a_batch() {
    // Packet 1 is short (the end of a write), packets 2 and 3 full. Both copies of packet
    // 1's repair fill a batch of its size; packet 2's first copy ends that batch (a longer
    // segment), and must not take the place of its second.
    let first = TestCc::asking(2, 0);
    let (mut conn, now) = established_with(ConnectionConfig {
        congestion: Arc::new(first),
        ..ConnectionConfig::default()
    });
    let mut buf = Vec::new();
    let mut t = now;
    for (bytes, sent) in [(1456 + 100, 2), (2 * 1456, 4)] {
        conn.write(&vec![0u8; bytes]).unwrap();
        while conn.stats().packets_sent < sent {
            t += Duration::from_micros(1);
            conn.poll_transmit(t, &mut buf);
        }
    }
    assert_eq!(resend(&mut conn, t, 1, 2), 4, "two copies each");
}

#[test]
fn a_first_repair_goes_twice_when_the_controller_asks() {
    let first = TestCc::asking(2, 0);
    let (mut conn, now) = sixteen_sent_four_acknowledged(&first);
    assert_eq!(
        resend(&mut conn, now, 6, 8),
        6,
        "reported on time, two copies each"
    );
}

#[test]
fn a_repeat_after_the_peers_rtt_is_acted_on_though_the_senders_own_is_longer() {
    let recorder = TestCc::default();
    let (mut conn, now) = sixteen_sent_four_acknowledged(&recorder);
    let mut buf = Vec::new();
    // The sender timed 12 µs (packet 3 sent at 4 µs, acknowledged at 16 µs); the peer then
    // reports 6 µs, with fresh rates and nothing new acknowledged.
    let ack = FullAck {
        ack_no: AckNo::FIRST.next(),
        next_seq: SeqNo::new(5).unwrap().wrapping_add(4),
        rtt_us: 6,
        rtt_var_us: 1,
        avail_buf: 1000,
        rates: Some(RateReport {
            recv_rate: 1000,
            capacity: 1000,
        }),
    };
    feed(&mut conn, now, Control::Ack(ack));
    report_lost(&mut conn, now, 6, 8);
    let later = now + SYN;
    while conn.poll_transmit(later, &mut buf).is_some() {}
    assert_eq!(conn.stats().packets_retransmitted, 3);
    // Repeated 9 µs after the resend: after the peer's RTT, before the sender's own.
    let repeat = later + Duration::from_micros(9);
    report_lost(&mut conn, repeat, 6, 8);
    while conn.poll_transmit(repeat, &mut buf).is_some() {}
    assert_eq!(conn.stats().packets_retransmitted, 6, "resent again");
}

#[test]
fn without_a_sample_of_its_own_the_sender_waits_the_peers_rtt_before_resending_again() {
    let (mut conn, now) = established(8);
    conn.write(&[0u8; 16 * 1456]).unwrap();
    let mut buf = Vec::new();
    while conn.poll_transmit(now, &mut buf).is_some() {}
    let ack = FullAck {
        ack_no: AckNo::FIRST,
        next_seq: SeqNo::new(5).unwrap(),
        rtt_us: 300_000,
        rtt_var_us: 1000,
        avail_buf: 1000,
        rates: Some(RateReport {
            recv_rate: 1000,
            capacity: 1000,
        }),
    };
    // An ACK that acknowledges nothing (the first packet is missing): no sample, but the
    // peer's estimate of 300 ms.
    feed(&mut conn, now, Control::Ack(ack));
    assert_eq!(conn.rto.rtt(), None);
    let mut resent_after_report = |at: Instant| {
        report_lost(&mut conn, at, 0, 0);
        while conn.poll_transmit(at, &mut buf).is_some() {}
        conn.stats().packets_retransmitted
    };
    let resent = now + SYN;
    assert_eq!(resent_after_report(resent), 1);
    assert_eq!(resent_after_report(resent + Duration::from_millis(200)), 1);
    assert_eq!(resent_after_report(resent + Duration::from_millis(310)), 2);
}

#[test]
fn a_report_keeps_the_holes_it_has_not_seen_resent() {
    let recorder = TestCc::default();
    let (mut conn, t) = sixteen_sent_four_acknowledged(&recorder);
    let mut buf = Vec::new();
    // 6..=8 lost and resent; then a report of 5..=10 comes at once: 6..=8 are on their way.
    report_lost(&mut conn, t, 6, 8);
    let resent = t + SYN;
    while conn.poll_transmit(resent, &mut buf).is_some() {}
    assert_eq!(conn.stats().packets_retransmitted, 3);
    report_lost(&mut conn, resent, 5, 10);
    assert_eq!(
        *recorder.losses.lock().unwrap(),
        [3, 3],
        "5, 9 and 10 are new"
    );
    while conn.poll_transmit(resent + SYN, &mut buf).is_some() {}
    assert_eq!(conn.stats().packets_retransmitted, 6, "5, 9 and 10 only");
}

/// Feeds a loss report of the packets `a..=b` counted from the first one
/// `sixteen_sent_four_acknowledged` sent (sequence number 5).
fn report_lost(conn: &mut Connection, at: Instant, a: u32, b: u32) {
    let isn = SeqNo::new(5).unwrap();
    let range = LossRange {
        start: isn.wrapping_add(a),
        end: isn.wrapping_add(b),
    };
    let mut words = [0u8; 8];
    let len = LossList::write_range(range, &mut words, 0).unwrap();
    feed(
        conn,
        at,
        Control::Nak(LossList::parse(&words[..len]).unwrap()),
    );
}

/// Reports packets `a..=b` lost at `at` and sends what that lets out by `at` + SYN:
/// returns how many packets were retransmitted.
fn resend(conn: &mut Connection, at: Instant, a: u32, b: u32) -> u64 {
    report_lost(conn, at, a, b);
    let before = conn.stats().packets_retransmitted;
    let mut buf = Vec::new();
    while conn.poll_transmit(at + SYN, &mut buf).is_some() {}
    conn.stats().packets_retransmitted - before
}

fn feed(conn: &mut Connection, now: Instant, body: Control<'_>) {
    let bytes = Packet::Control(ControlPacket::new(3, body)).to_vec();
    conn.handle_datagram(now, conn.peer_addr(), &bytes);
}

#[test]
fn losses_before_the_first_ack_do_not_slow_the_sender() {
    // The first-packet race: a UDT4 client drops data that beats the acceptance to it and
    // NAKs it. That must not send the reference controller into its 62.5 ms crawl.
    let (mut conn, now) = established_with(ConnectionConfig {
        congestion: Arc::new(crate::cc::Udt4DaimdFactory),
        ..ConnectionConfig::default()
    });
    conn.write(&[0u8; 64 * 1456]).unwrap();
    let mut buf = Vec::new();
    let now = now + Duration::from_millis(1);
    while conn.poll_transmit(now, &mut buf).is_some() {}
    assert_eq!(
        conn.stats().packets_sent,
        16,
        "the reference's initial window"
    );
    let isn = SeqNo::new(5).unwrap();
    let first = LossRange {
        start: isn,
        end: isn,
    };
    let mut words = [0u8; 8];
    let len = LossList::write_range(first, &mut words, 0).unwrap();
    let nak = LossList::parse(&words[..len]).unwrap();
    feed(&mut conn, now, Control::Nak(nak));
    assert_eq!(
        conn.stats().pacing_period,
        Duration::from_micros(1),
        "still in slow start"
    );
    assert_eq!(
        conn.stats().packets_reported_lost,
        1,
        "but the loss is recorded"
    );
    // After an ACK the receiver is surely up: a loss now is a congestion signal.
    let ack = FullAck {
        ack_no: AckNo::FIRST,
        next_seq: isn.wrapping_add(10),
        rtt_us: 1000,
        rtt_var_us: 100,
        avail_buf: 1000,
        rates: None,
    };
    feed(&mut conn, now + SYN, Control::Ack(ack));
    let later = LossRange {
        start: isn.wrapping_add(12),
        end: isn.wrapping_add(12),
    };
    let len = LossList::write_range(later, &mut words, 0).unwrap();
    let nak = LossList::parse(&words[..len]).unwrap();
    feed(&mut conn, now + SYN, Control::Nak(nak));
    assert!(
        conn.stats().pacing_period > Duration::from_micros(1),
        "slow start ended"
    );
}

/// Data packets `conn` sends when polled at `at` until it has nothing more to send then.
fn data_sent_at(conn: &mut Connection, at: Instant) -> u64 {
    let before = conn.stats().packets_sent;
    let mut buf = Vec::new();
    while conn.poll_transmit(at, &mut buf).is_some() {
        buf.clear();
    }
    conn.stats().packets_sent - before
}

#[test]
fn a_driver_woken_late_sends_what_it_owes_up_to_the_longer_credit() {
    // 12 Mbit/s: a packet of 1500 bytes every millisecond.
    let config = ConnectionConfig {
        max_segments: 64,
        congestion: Arc::new(FixedRateFactory {
            bits_per_second: 12_000_000,
        }),
        ..ConnectionConfig::default()
    };
    let late = Duration::from_millis(10);
    // Data waiting all along: the driver that wakes 10 ms late may send the last 4 ms (half the
    // RTT, 100 ms before any sample, at most MAX_PACING_CREDIT) of what the pacer owed.
    let (mut ready, now) = established_with(config.clone());
    ready.write(&[1; 100_000]).unwrap();
    assert!(data_sent_at(&mut ready, now) > 0);
    let owed = data_sent_at(&mut ready, now + late);
    // Data ran out and came back: the connection waited for it, not for the pacer, and may
    // send the last millisecond only.
    let (mut dry, _) = established_at(config, now);
    dry.write(&[1; 1000]).unwrap();
    assert_eq!(data_sent_at(&mut dry, now), 1);
    dry.write(&[1; 100_000]).unwrap();
    let after_pause = data_sent_at(&mut dry, now + late);
    assert!(
        (4..=6).contains(&owed) && (1..=3).contains(&after_pause),
        "owed {owed}, after a pause {after_pause}"
    );
}

/// The control packets `conn` sends when polled at `at`, with their word 2 (the wait).
fn controls_sent_at(conn: &mut Connection, at: Instant) -> Vec<(u32, String)> {
    let mut sent = Vec::new();
    let mut buf = Vec::new();
    while let Some(t) = conn.poll_transmit(at, &mut buf) {
        if let Ok(Packet::Control(c)) = Packet::parse(&buf[..t.size]) {
            let kind = match c.body {
                Control::LightAck { .. } => "light ACK",
                Control::Ack(_) => "ACK",
                Control::Nak(_) => "NAK",
                Control::Ack2 { .. } => "ACK2",
                _ => "other",
            };
            sent.push((c.timestamp, kind.to_string()));
        }
        buf.clear();
    }
    sent
}

/// Feeds `body` as an answer that waited `wait_ms` at the peer (its word 2).
fn feed_waited(conn: &mut Connection, now: Instant, body: Control<'_>, wait_ms: u64) {
    let mut bytes = Packet::Control(ControlPacket::new(3, body)).to_vec();
    wire::set_answer_wait(&mut bytes, (wait_ms * 1000) as u32);
    conn.handle_datagram(now, conn.peer_addr(), &bytes);
}

#[test]
fn answers_sent_late_say_how_long_they_waited() {
    let (mut conn, now) = established(8);
    let ms = |n: u64| now + Duration::from_millis(n);
    let peer = conn.peer_addr();
    // A short packet is acknowledged at once; sent on time, the ACK waited nothing, and its
    // ACK2 times the path: 100 ms.
    conn.handle_datagram(ms(50), peer, &data_packet(5, &[0; 100]));
    assert_eq!(controls_sent_at(&mut conn, ms(50)), [(0, "ACK".into())]);
    feed_waited(
        &mut conn,
        ms(150),
        Control::Ack2 {
            ack_no: AckNo::FIRST,
        },
        0,
    );
    assert_eq!(conn.rtt.rtt(), Duration::from_millis(100));
    // A short packet after a gap at 200 ms: the ACK and the gap's report that a late driver
    // sends at 203 ms say they waited 3 ms.
    conn.handle_datagram(ms(200), peer, &data_packet(7, &[0; 100]));
    let sent = controls_sent_at(&mut conn, ms(203));
    assert!(sent.contains(&(3000, "ACK".into())), "{sent:?}");
    assert!(sent.contains(&(3000, "NAK".into())), "{sent:?}");
    // The ACK–ACK2 time counts from the ACK's sending, less what the ACK2 waited at the peer:
    // back at 308 ms after 5 ms there, the path is still 100 ms.
    let second = AckNo::FIRST.next();
    feed_waited(&mut conn, ms(308), Control::Ack2 { ack_no: second }, 5);
    assert_eq!(conn.rtt.rtt(), Duration::from_millis(100));
    // The ACK2 a sender sends says how long the ACK waited for it.
    let ack = FullAck {
        ack_no: AckNo::masked(7),
        next_seq: SeqNo::new(5).unwrap(),
        rtt_us: 100_000,
        rtt_var_us: 1_000,
        avail_buf: 1000,
        rates: None,
    };
    feed(&mut conn, ms(310), Control::Ack(ack));
    assert_eq!(
        controls_sent_at(&mut conn, ms(311)),
        [(1000, "ACK2".into())]
    );
}

#[test]
fn a_periodic_ack_sent_late_waited_from_its_deadline_or_a_later_arrival() {
    let (mut conn, now) = established(8);
    let ms = |n: u64| now + Duration::from_millis(n);
    let peer = conn.peer_addr();
    let full = vec![0; conn.payload];
    conn.handle_timeout(ms(10));
    controls_sent_at(&mut conn, ms(10));
    // A full-size packet waits for the periodic ACK, due at 20 ms and sent at 24.
    conn.handle_datagram(ms(15), peer, &data_packet(5, &full));
    conn.handle_timeout(ms(24));
    assert_eq!(controls_sent_at(&mut conn, ms(24)), [(4000, "ACK".into())]);
    // The next deadline is 34 ms; a packet that arrived at 36, read late, is due from then.
    conn.handle_datagram(ms(36), peer, &data_packet(6, &full));
    conn.handle_timeout(ms(38));
    assert_eq!(controls_sent_at(&mut conn, ms(38)), [(2000, "ACK".into())]);
}

#[test]
fn the_wait_an_ack_reports_comes_off_the_senders_rtt_sample_but_not_its_timeout() {
    let (mut conn, now) = established_with(ConnectionConfig::default());
    conn.write(&[0u8; 8 * 1456]).unwrap();
    assert!(data_sent_at(&mut conn, now) >= 4);
    let isn = SeqNo::new(5).unwrap();
    let ack = |n: u32| Control::LightAck {
        next_seq: isn.wrapping_add(n),
    };
    let ms = |n: u64| now + Duration::from_millis(n);
    // First ACK back at 100 ms, none waited: the path's 100 ms.
    feed_waited(&mut conn, ms(100), ack(1), 0);
    assert_eq!(conn.latest_rtt_sample, Some(Duration::from_millis(100)));
    // 106 ms, 5 of them at the peer: 101 ms of path; the timeout keeps all 106.
    feed_waited(&mut conn, ms(106), ack(2), 5);
    assert_eq!(conn.latest_rtt_sample, Some(Duration::from_millis(101)));
    assert!(conn.rto.rtt().unwrap() > Duration::from_millis(100));
    // A wait that would leave less than the least sample leaves that least.
    feed_waited(&mut conn, ms(103), ack(3), 10);
    assert_eq!(conn.latest_rtt_sample, Some(Duration::from_millis(100)));
    // A wait as long as the sample is another implementation's timestamp: ignored.
    feed_waited(&mut conn, ms(104), ack(4), 500);
    assert_eq!(conn.latest_rtt_sample, Some(Duration::from_millis(104)));
}

proptest::proptest! {
    /// Whatever a peer writes in word 2, a sample never grows, never falls under the least
    /// measured before it (nor under itself, where it is the least), and the least is kept.
    #[test]
    fn a_peers_wait_never_lengthens_a_sample_nor_takes_it_under_the_least(
        samples in proptest::collection::vec((0u64..10_000_000, proptest::prelude::any::<u32>()), 1..50)
    ) {
        let mut least = None;
        for (us, wait_us) in samples {
            let measured = Duration::from_micros(us);
            let floor = least.map_or(measured, |l: Duration| l.min(measured));
            let sample = less_wait(measured, Duration::from_micros(wait_us.into()), &mut least);
            proptest::prop_assert!(sample <= measured);
            proptest::prop_assert!(sample >= floor);
            proptest::prop_assert_eq!(least, Some(floor));
        }
    }
}
