//! One connection's state machine: handshake, reliable delivery, timers, congestion control.
//!
//! Sans-IO: the driver feeds datagrams with [`Connection::handle_datagram`], asks for packets with
//! [`Connection::poll_transmit`], sleeps until [`Connection::poll_timeout`] and then calls
//! [`Connection::handle_timeout`]. The application uses [`Connection::write`] /
//! [`Connection::read`] (stream mode) or [`Connection::send_msg`] / [`Connection::recv_msg`]
//! (message mode) and watches [`Connection::poll_event`].

mod config;
mod control_queue;
mod estimators;
mod handshake;
mod recv_buf;
mod send_buf;

pub use config::{ConnectionConfig, Dialect};

use crate::arena::Arena;
use crate::cc::{
    AckSample, CcInit, CongestionControl, LossSample, PathEstimate, PathRtt, MAX_REPAIR_COPIES,
};
use crate::ranges::RangeMap;
use crate::secure::{Initiator, OpenError, PresharedKey, Protection};
use crate::seq::{AckNo, MsgNo, SeqNo};
use crate::wire::{
    self, Control, ControlPacket, DataHeader, FullAck, Handshake, LossList, LossRange, MsgInfo,
    Packet, RateReport, SocketType, HEADER_LEN,
};
use bytes::Bytes;
use config::MIN_MSS;
use control_queue::{Answer, ControlQueue};
use estimators::{ArrivalWindow, RtoEstimator, RttEstimator, SendClock, SmoothedRate};
use recv_buf::{RecvBuffer, Stored};
use send_buf::SendBuffer;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// The reference's SYN interval: ACK timer and rate-control period.
const SYN: Duration = Duration::from_millis(10);
/// Smallest retransmission (EXP) interval.
const MIN_EXP: Duration = Duration::from_millis(300);
/// A light ACK goes out every this many data packets.
const LIGHT_ACK_PACKETS: u32 = 64;
/// ACKs remembered for RTT measurement by ACK2.
const ACK_HISTORY: usize = 1024;
/// Most NAK packets sent per ACK tick by the periodic re-NAK.
const MAX_RENAK_PACKETS: usize = 4;
/// Copies of each re-report, back to back (when reports repeat). A hole re-reported has cost a
/// round trip or more already, and a lost re-report costs another; re-reports are few (the
/// repairs that failed: at 10 % loss about a fiftieth of the holes), and each is a small
/// packet on the reverse path. At the end of a start-up on a long path with loss both ways
/// a round trip re-reports about a hundred holes, so with two copies about one a round lost
/// both, and held in-order delivery a round trip more (1 Gbit/s, 600 ms, 10 % both ways,
/// seeds 1–100: 42 → 27 over start-up's budget with three; the simulator's one-flow grid
/// read the same).
const RENAK_COPIES: usize = 3;
/// Previous gaps a gap report repeats (when reports repeat), if still whole and reported less
/// than half a round trip ago: one, or [`LONG_PATH_REPEATED_GAPS`] on a long path.
const REPEATED_GAPS: usize = 1;
/// Previous gaps a gap report repeats once the least ACK–ACK2 RTT is [`LONG_PATH_RTT`] or
/// more: each gap then goes out in three reports, its own and the next two gaps'. A gap whose
/// reports are all lost waits for the re-report, a round trip more; with two reports that was
/// one gap in a hundred at 10 % loss on the reverse path, and such holes held most of the
/// start-ups that ended late in order (1 Gbit/s, 600 ms, 10 % both ways, seeds 1–600: 46 → 33
/// over budget with three). On shorter paths the round trip lost costs less, and the extra
/// range moved runs beside the model of CUBIC (100 ms, seed 2: 29.6 → 24.3 Mbit/s).
const LONG_PATH_REPEATED_GAPS: usize = 2;
/// The least RTT from which a path counts as long for [`LONG_PATH_REPEATED_GAPS`]: the default
/// controller's first start-up also sends extra copies of repairs from there
/// (`REPEAT_FIRST_FROM_RTT`).
const LONG_PATH_RTT: Duration = Duration::from_millis(200);
/// A packet's first loss report comes about a round trip after it was sent (out, and the report
/// back); one that comes more than this many round trips after is a repeat of a report that
/// was lost (the peer repeats after RTT + 4·RTTVar + 10 ms, or once the repair is overdue, two
/// round trips or more after the packet). Its retransmission is then as costly to lose as a
/// repeated one. (A gap found late, behind a pause in sending, reads as late too: a second
/// copy of its first repair costs one packet.) With loss both ways at 1 Gbit/s, 600 ms, 5 %,
/// such holes (a report lost, then the one retransmission) held in-order delivery for two round
/// trips more; counting them as repeats took start-up in order from 71 to 58 seeds over budget
/// of 200 (simulator).
const LATE_REPORT: f64 = 1.5;
/// Pacing credit a connection may bank while the driver sleeps, after a pause of its own
/// (data or window ran out).
const MIN_PACING_CREDIT: Duration = Duration::from_millis(1);
/// Pacing credit a connection that kept data and window may bank while its driver wakes late:
/// half the smoothed RTT, at least [`MIN_PACING_CREDIT`] and at most this (and never under one
/// pacing period). On a busy host (two CPU hogs beside the lab's 100 Mbit/s, 10 ms link) the
/// driver wakes milliseconds late; what it owes goes at once, and time past the credit is lost.
/// Lost time lowered what the flow delivered, and its estimate followed, round after round
/// (docs/journal/congestion.md, "Pacing credit for a late driver"). A burst of half a round
/// trip fits the 1-BDP buffer it would have found empty.
const MAX_PACING_CREDIT: Duration = Duration::from_millis(4);
/// Longest probe train a controller may ask for (`CongestionControl::probe_train`): its gaps
/// are paid in one step after it, which must not overflow.
const MAX_PROBE_TRAIN: u64 = 256;
/// Copies of the shutdown packet (it is never retransmitted).
const SHUTDOWN_COPIES: usize = 3;
/// How long a peer's shutdown waits for an ACK of the last packets sent. The reference lets
/// its application read the last bytes (and close) before its receive thread sends the ACK
/// that made them readable, so that ACK can follow the shutdown; a busy host may hold the
/// thread for a scheduler's slice.
const PEER_SHUTDOWN_GRACE: Duration = Duration::from_millis(100);
/// Datagrams are decrypted into blocks of this size, of which this many (512 MiB) are kept for
/// reuse: the plain packets wait in them until the application reads them.
const OPEN_ARENA_BYTES: usize = 256 << 10;
const OPEN_ARENA_KEEP: usize = 2048;
/// Most data datagrams a connecting client keeps until the acceptance arrives.
const MAX_EARLY_DATA: usize = 256;

/// Where the connection came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Client,
    Server,
    Rendezvous,
}

/// Handshake progress before the connection is up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Client: waiting for the cookie (0) or for the acceptance (cookie known).
    Connecting { cookie: u32 },
    /// Rendezvous: sending type 0, or type −1 once the peer's request was seen.
    Rendezvous { answering: bool },
    /// Data may flow.
    Connected,
    /// Finished; see the reason.
    Closed(CloseReason),
}

/// Why a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum CloseReason {
    /// The application closed it.
    #[error("closed locally")]
    LocalClose,
    /// The peer sent a shutdown.
    #[error("closed by the peer")]
    PeerClosed,
    /// Nothing was heard from the peer within the idle timeout.
    #[error("peer silent for longer than the idle timeout")]
    TimedOut,
    /// The handshake did not complete in time.
    #[error("no answer to the connection request")]
    ConnectTimeout,
    /// The peer rejected the handshake (version or socket-type mismatch).
    #[error("connection rejected by the peer")]
    Rejected,
    /// The peer reported an error code.
    #[error("peer reported error {0}")]
    PeerError(u32),
    /// The key exchange failed: the two ends hold different keys (or it was tampered with).
    #[error("authentication failed: the peer holds a different key")]
    AuthFailed,
    /// A listener answered but never took up the key exchange: it speaks only `udt4`.
    #[error("the peer answered but never completed the key exchange (a UDT4-only peer? it needs the udt4 dialect)")]
    KeyExchangeUnanswered,
    /// What was asked is not available in this dialect.
    #[error("rendezvous is not available in the haul dialect yet (use the udt4 dialect)")]
    Unsupported,
}

/// Something the application should know about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The handshake completed.
    Connected,
    /// Data (or a message) can be read.
    Readable,
    /// A quarter of the send buffer is free again after a write could not complete.
    Writable,
    /// Everything written so far has been acknowledged by the peer.
    Flushed,
    /// The connection ended.
    Closed(CloseReason),
}

/// Why a read or write could not proceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum StreamError {
    /// Nothing can be done now; wait for an event.
    #[error("operation would block")]
    Blocked,
    /// The handshake has not completed.
    #[error("not connected yet")]
    NotConnected,
    /// The connection ended.
    #[error("connection closed: {0}")]
    Closed(CloseReason),
    /// The call does not fit the connection's socket type.
    #[error("operation not supported in this socket mode")]
    WrongMode,
    /// A message larger than the send buffer can never be sent.
    #[error("message larger than the send buffer")]
    MessageTooLarge,
}

/// A datagram (or a batch of equal-size datagrams for UDP GSO) ready to be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit {
    /// Where to send it.
    pub destination: SocketAddr,
    /// Bytes written into the caller's buffer.
    pub size: usize,
    /// With several packets: the size of each (the last may be shorter).
    pub segment_size: Option<usize>,
}

/// One piece of a transmit gathered by [`Connection::poll_transmit_gather`], in wire order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// `len` bytes at `start` of the caller's buffer.
    Buf {
        /// Offset in the buffer.
        start: usize,
        /// Length.
        len: usize,
    },
    /// `len` bytes of the connection's send buffer from stream offset `offset`; read them with
    /// [`Connection::sent_payload`] before the connection changes.
    Sent {
        /// Stream offset of the first byte.
        offset: u64,
        /// Length.
        len: usize,
    },
}

/// Counters and estimates of one connection.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    /// Smoothed RTT.
    pub rtt: Duration,
    /// RTT variance.
    pub rtt_var: Duration,
    /// Current pacing period between data packets.
    pub pacing_period: Duration,
    /// Congestion window, packets.
    pub congestion_window: u32,
    /// Maximum segment size agreed with the peer: the bytes of a full data packet on the wire,
    /// IP and UDP headers included (the window and the pacing period count such packets).
    pub mss: u32,
    /// Flow window offered by the peer, packets.
    pub flow_window: u64,
    /// Delivery rate the peer reports, packets per second.
    pub delivery_rate: u32,
    /// Link capacity the peer estimates, packets per second.
    pub link_capacity: u32,
    /// Data packets sent, first transmissions.
    pub packets_sent: u64,
    /// Data packets retransmitted.
    pub packets_retransmitted: u64,
    /// Payload bytes sent, first transmissions.
    pub bytes_sent: u64,
    /// Bytes written by the application and not yet acknowledged by the peer.
    pub bytes_buffered: u64,
    /// Data packets received, duplicates included.
    pub packets_received: u64,
    /// Payload bytes delivered into the receive buffer (no duplicates).
    pub bytes_received: u64,
    /// Duplicate data packets received.
    pub packets_duplicate: u64,
    /// Packets found missing by this receiver.
    pub packets_lost: u64,
    /// Packets the peer reported missing.
    pub packets_reported_lost: u64,
    /// Messages dropped (TTL) by this sender.
    pub messages_dropped: u64,
    /// NAK packets sent.
    pub naks_sent: u64,
    /// ACK packets sent (light ACKs included).
    pub acks_sent: u64,
    /// Datagrams ignored as malformed or inconsistent.
    pub packets_invalid: u64,
    /// `haul` dialect: datagrams that failed authentication (altered, forged, other key).
    pub packets_forged: u64,
    /// `haul` dialect: authentic datagrams received a second time, dropped.
    pub packets_replayed: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
}

/// Receiver-side state of one range of missing packets.
#[derive(Debug, Clone, Copy)]
struct Missing {
    last_reported: Instant,
}

/// A data packet picked to go next.
#[derive(Debug, Clone, Copy)]
struct Outgoing {
    seq: u64,
    retransmit: bool,
    /// Copies still to go, this one included (the controller asked for more than one of this
    /// repair): the next is queued once this one is sent, so that a batch this one does not
    /// fit cannot drop it.
    copies: u8,
}

/// One connection of the `udt4` dialect.
#[derive(Debug)]
pub struct Connection {
    config: ConnectionConfig,
    role: Role,
    phase: Phase,
    local_id: u32,
    peer_id: u32,
    peer_addr: SocketAddr,
    /// When this socket opened (data packet timestamps count from here).
    epoch: Instant,

    // Handshake.
    local_isn: SeqNo,
    peer_isn: SeqNo,
    next_handshake: Instant,
    handshake_deadline: Instant,
    /// The server's acceptance, re-sent to a repeated request.
    stored_reply: Option<Handshake>,
    /// `haul` dialect: the key-exchange message our handshakes carry (client: the first, sent
    /// with every cookie echo; server: the second, sent with every acceptance).
    key_message: Vec<u8>,
    /// `haul` dialect, client: the key exchange of the cookie echo, waiting for the acceptance.
    initiator: Option<Box<Initiator>>,
    /// `haul` dialect, client: the key exchange sent with the request itself, waiting for an
    /// acceptance that skipped the cookie (its cookie field is 0).
    request_initiator: Option<Box<Initiator>>,
    /// Client: requests sent so far.
    requests_sent: u32,
    /// `haul` dialect: the keys, once agreed. Every datagram but a handshake goes through them.
    protection: Option<Box<Protection>>,
    /// `haul` dialect, server: the pre-shared key the client proved (one of the listener's).
    proved_key: Option<PresharedKey>,
    /// Where datagrams are decrypted (an arena: plain packets are split off it).
    open_arena: Arena,
    mss: u32,
    payload: usize,
    /// The peer's receive buffer in packets, from its handshake (ours until then).
    peer_window: u64,

    // Sending side.
    send: SendBuffer,
    snd_loss: RangeMap<()>,
    /// Packets in `snd_loss` whose first loss report came late (see [`LATE_REPORT`]).
    snd_late: RangeMap<()>,
    flow_window: u64,
    cc: Option<Box<dyn CongestionControl>>,
    /// The least RTT of the endpoint's connections to the same host (see
    /// [`ConnectionConfig::share_path_rtt`]), until the controller is built and takes it.
    path_rtt: Option<Arc<PathRtt>>,
    next_send: Instant,
    /// The pacer, not the window or the data, last held this connection back: a driver that
    /// wakes after its deadline was held by its host (see [`MAX_PACING_CREDIT`]).
    held_by_pacer: bool,
    recv_rate: SmoothedRate,
    capacity: SmoothedRate,
    last_ack2: Option<(AckNo, Instant)>,
    /// Last time the peer showed progress (ACK advance or NAK); the EXP timer counts from here.
    last_progress: Instant,
    /// The sender's own RTT measurement, for the EXP timer.
    rto: RtoEstimator,
    /// The newest of those samples less the peer's wait, handed to the controller with the next
    /// full ACK.
    latest_rtt_sample: Option<Duration>,
    /// The least of those samples as measured (with the peer's wait; see [`less_wait`]).
    least_rtt_sample: Option<Duration>,
    /// What the last full ACK acknowledged. Light ACKs release the send buffer too, but only full
    /// ACKs carry RTT and rates, so the controller counts progress from one full ACK to the next
    /// (and a close waits for one: see [`Connection::is_flushed`]).
    full_ack_point: u64,
    /// Whether any ACK arrived yet (the receiver is surely established).
    acked_once: bool,
    /// Client only: data that arrived before the server's acceptance, replayed once connected.
    early_data: Vec<Vec<u8>>,
    exp_count: u32,
    closing: bool,
    /// The peer shut down with packets of ours unacknowledged: until this instant the
    /// connection sends nothing and waits only for an ACK of them.
    peer_shutdown_deadline: Option<Instant>,
    write_blocked: bool,
    /// The packet to send next, ahead of the loss list: one picked for a batch it did not fit
    /// (larger than the batch's segment size), or the next copy of a repair.
    deferred: Option<Outgoing>,

    // Receiving side.
    recv: RecvBuffer,
    rcv_max: u64,
    rcv_loss: RangeMap<Missing>,
    /// When the newest new data that arrived was sent (for repairs that are overdue).
    send_clock: SendClock,
    /// The smallest RTT of the ACK–ACK2 exchanges.
    rcv_min_rtt: Option<Duration>,
    /// The last gaps reported on arrival and when, newest first (up to
    /// [`LONG_PATH_REPEATED_GAPS`]), reported again with the next ones.
    last_gaps: VecDeque<(u64, u64, Instant)>,
    rcv_last_ack: u64,
    rcv_last_ack2: u64,
    last_full_ack: Instant,
    ack_no: AckNo,
    ack_history: VecDeque<(AckNo, u64, Instant)>,
    arrivals: ArrivalWindow,
    packets_since_ack: u32,
    /// Data packets since the last full ACK (with rates) went out.
    packets_since_full_ack: u32,
    light_acks: u32,
    next_ack: Instant,
    /// When the newest data packet arrived (the kernel's stamp, where the driver has one).
    last_data_arrival: Option<Instant>,
    readable_signalled: bool,

    // Shared.
    /// The path's RTT: as a receiver, smoothed from ACK→ACK2 samples; as a sender, the estimate
    /// the peer's receiver last reported (adopted, not smoothed again). Both ends measure the
    /// same path, so a connection sending both ways keeps one estimate.
    rtt: RttEstimator,
    last_heard: Instant,
    last_sent: Instant,
    control: ControlQueue,
    scratch: Vec<u8>,
    /// Ranges the periodic re-NAK found due (kept to reuse its allocation).
    renak_due: Vec<(u64, u64)>,
    events: VecDeque<Event>,
    stats: Stats,
}

impl Connection {
    fn new(
        now: Instant,
        role: Role,
        phase: Phase,
        ids: (u32, u32),
        peer_addr: SocketAddr,
        isns: (SeqNo, SeqNo),
        config: ConnectionConfig,
    ) -> Self {
        let (local_id, peer_id) = ids;
        let (local_isn, peer_isn) = isns;
        let payload = config.payload_for(config.mss);
        let message_mode = config.socket_type == SocketType::Datagram;
        let deadline = now
            + match role {
                Role::Rendezvous => config.rendezvous_timeout,
                _ => config.connect_timeout,
            };
        Self {
            send: SendBuffer::new(local_isn.start(), config.send_buffer_bytes, message_mode),
            recv: RecvBuffer::new(peer_isn.start(), config.recv_slots(payload), payload),
            mss: config.mss,
            payload,
            peer_window: config.recv_slots(payload) as u64,
            role,
            phase,
            local_id,
            peer_id,
            peer_addr,
            epoch: now,
            local_isn,
            peer_isn,
            next_handshake: now,
            handshake_deadline: deadline,
            stored_reply: None,
            key_message: Vec::new(),
            initiator: None,
            request_initiator: None,
            requests_sent: 0,
            protection: None,
            proved_key: None,
            open_arena: Arena::new(OPEN_ARENA_BYTES, OPEN_ARENA_KEEP),
            snd_loss: RangeMap::new(),
            snd_late: RangeMap::new(),
            flow_window: 2,
            cc: None,
            path_rtt: None,
            next_send: now,
            held_by_pacer: false,
            recv_rate: SmoothedRate::new(16),
            capacity: SmoothedRate::new(1),
            last_ack2: None,
            last_progress: now,
            rto: RtoEstimator::default(),
            latest_rtt_sample: None,
            least_rtt_sample: None,
            full_ack_point: local_isn.start(),
            acked_once: false,
            early_data: Vec::new(),
            exp_count: 1,
            closing: false,
            peer_shutdown_deadline: None,
            write_blocked: false,
            deferred: None,
            rcv_max: peer_isn.start(),
            rcv_loss: RangeMap::new(),
            send_clock: SendClock::new(now),
            rcv_min_rtt: None,
            last_gaps: VecDeque::with_capacity(LONG_PATH_REPEATED_GAPS),
            rcv_last_ack: peer_isn.start(),
            rcv_last_ack2: peer_isn.start(),
            last_full_ack: now,
            ack_no: AckNo::masked(0),
            ack_history: VecDeque::with_capacity(ACK_HISTORY),
            arrivals: ArrivalWindow::default(),
            packets_since_ack: 0,
            packets_since_full_ack: 0,
            light_acks: 1,
            next_ack: now + SYN,
            last_data_arrival: None,
            readable_signalled: false,
            rtt: RttEstimator::default(),
            last_heard: now,
            last_sent: now,
            control: ControlQueue::default(),
            scratch: Vec::new(),
            renak_due: Vec::new(),
            events: VecDeque::new(),
            stats: Stats::default(),
            config,
        }
    }

    /// This socket's id (the destination id peers put in their packets).
    pub fn local_id(&self) -> u32 {
        self.local_id
    }

    /// The peer's socket id (0 until the handshake says).
    pub fn peer_id(&self) -> u32 {
        self.peer_id
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> SocketAddr {
        self.peer_addr
    }

    /// Shares `path` with the endpoint's other connections to the same host (see
    /// [`ConnectionConfig::share_path_rtt`]): the controller takes it, at once if it is built
    /// (an accepted connection builds it with the handshake, before the endpoint hands the
    /// path over), or else as it is built. Until session 71 an accepted connection kept it and
    /// its controller never saw it: a server's connections to one host (`haul perf -R -P 4`)
    /// each ran alone.
    pub(crate) fn share_path_rtt(&mut self, path: Arc<PathRtt>) {
        match &mut self.cc {
            Some(cc) => cc.share_path_rtt(path),
            None => self.path_rtt = Some(path),
        }
    }

    /// Whether this connection's config asks it to share its host's least RTT.
    pub(crate) fn shares_path_rtt(&self) -> bool {
        self.config.share_path_rtt
    }

    /// The least RTT this connection shares, if it shares one.
    #[cfg(test)]
    pub(crate) fn shared_path_rtt(&self) -> Option<&Arc<PathRtt>> {
        self.path_rtt.as_ref()
    }

    /// `haul` dialect: the pre-shared key this connection was established with; for a
    /// connection a listener accepted, the one of its keys the client proved it holds
    /// ([`crate::EndpointConfig::accept_keys`]). `None` in the `udt4` dialect.
    pub fn peer_key(&self) -> Option<&PresharedKey> {
        match &self.config.dialect {
            Dialect::Udt4 => None,
            Dialect::Haul(key) => Some(self.proved_key.as_ref().unwrap_or(key)),
        }
    }

    /// Whether the handshake completed and the connection has not ended.
    pub fn is_connected(&self) -> bool {
        self.phase == Phase::Connected
    }

    /// Why the connection ended, once it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        match self.phase {
            Phase::Closed(r) => Some(r),
            _ => None,
        }
    }

    /// Whether the connection ended and has nothing left to transmit.
    pub fn is_drained(&self) -> bool {
        self.close_reason().is_some() && self.control.is_empty()
    }

    /// Payload bytes per data packet, as negotiated.
    pub fn payload_size(&self) -> usize {
        self.payload
    }

    /// Counters and estimates.
    pub fn stats(&self) -> Stats {
        let mut s = self.stats;
        s.rtt = self.rtt.rtt();
        s.rtt_var = self.rtt.var();
        s.flow_window = self.flow_window;
        s.mss = self.mss;
        s.delivery_rate = self.recv_rate.get();
        s.link_capacity = self.capacity.get();
        s.bytes_buffered = self.unacknowledged_bytes() as u64;
        if let Some(cc) = &self.cc {
            s.pacing_period = cc.pacing_period();
            s.congestion_window = cc.window();
        }
        s
    }

    /// Name of the congestion controller, once connected.
    pub fn congestion_controller(&self) -> Option<&'static str> {
        self.cc.as_ref().map(|cc| cc.name())
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    // ---------------------------------------------------------------- application side

    fn writable_state(&self) -> Result<(), StreamError> {
        match self.phase {
            Phase::Closed(r) => Err(StreamError::Closed(r)),
            _ if self.closing => Err(StreamError::Closed(CloseReason::LocalClose)),
            // Data written before the handshake completes is queued.
            _ => Ok(()),
        }
    }

    /// Queues stream bytes; returns how many were taken, or [`StreamError::Blocked`] if none fit.
    pub fn write(&mut self, data: &[u8]) -> Result<usize, StreamError> {
        let limit = self.config.max_unsent_bytes;
        self.write_with(data.len(), limit, |send, n| send.write_stream(&data[..n]))
    }

    /// Queues stream bytes the caller owns without copying them (short ones are copied);
    /// returns how many were taken, or [`StreamError::Blocked`] if none fit. Give it what is
    /// not taken again, as `data.slice(n..)`.
    pub fn write_bytes(&mut self, data: &Bytes) -> Result<usize, StreamError> {
        let limit = self.config.max_unsent_lent_bytes;
        self.write_with(data.len(), limit, |send, n| {
            send.write_bytes(&data.slice(..n))
        })
    }

    /// Queues up to `len` stream bytes with `put(send buffer, bytes allowed)`, while fewer
    /// than `max_unsent` bytes wait for their first transmission.
    fn write_with(
        &mut self,
        len: usize,
        max_unsent: usize,
        put: impl FnOnce(&mut SendBuffer, usize) -> usize,
    ) -> Result<usize, StreamError> {
        self.writable_state()?;
        if self.config.socket_type != SocketType::Stream {
            return Err(StreamError::WrongMode);
        }
        if len == 0 {
            return Ok(0);
        }
        let room = max_unsent.max(1).saturating_sub(self.send.unsent());
        let n = put(&mut self.send, len.min(room));
        if n < len {
            self.write_blocked = true;
        }
        if n == 0 {
            return Err(StreamError::Blocked);
        }
        Ok(n)
    }

    /// Queues one message whole. `ttl`: drop it instead of retransmitting once it is this old.
    /// `in_order`: deliver only after every earlier message.
    pub fn send_msg(
        &mut self,
        now: Instant,
        data: &[u8],
        ttl: Option<Duration>,
        in_order: bool,
    ) -> Result<(), StreamError> {
        self.writable_state()?;
        if self.config.socket_type != SocketType::Datagram {
            return Err(StreamError::WrongMode);
        }
        // A message must fit in half the peer's receive buffer, or it could never complete.
        let max = self
            .send
            .capacity()
            .min(self.peer_window as usize / 2 * self.payload);
        if data.is_empty() || data.len() > max {
            return Err(StreamError::MessageTooLarge);
        }
        if self.send.unsent() >= self.config.max_unsent_bytes
            || !self
                .send
                .write_message(data, in_order, ttl.map(|t| now + t))
        {
            self.write_blocked = true;
            return Err(StreamError::Blocked);
        }
        Ok(())
    }

    /// Reads stream bytes. `Ok(0)` means the peer closed and everything was read.
    pub fn read(&mut self, out: &mut [u8]) -> Result<usize, StreamError> {
        if self.config.socket_type != SocketType::Stream {
            return Err(StreamError::WrongMode);
        }
        self.readable_signalled = false;
        let n = self.recv.read_stream(self.ack_point(), out);
        if n > 0 || out.is_empty() {
            return Ok(n);
        }
        self.end_of_data()
    }

    /// Takes up to `max` stream bytes without copying them (the rest of one packet at most;
    /// slices of the received datagrams when they came through
    /// [`Connection::handle_datagram_bytes`]). An empty chunk means the peer closed and
    /// everything was read.
    pub fn read_chunk(&mut self, max: usize) -> Result<Bytes, StreamError> {
        if self.config.socket_type != SocketType::Stream {
            return Err(StreamError::WrongMode);
        }
        self.readable_signalled = false;
        if let Some(chunk) = self.recv.read_chunk(self.ack_point(), max) {
            return Ok(chunk);
        }
        if max == 0 {
            return Ok(Bytes::new());
        }
        self.end_of_data().map(|_| Bytes::new())
    }

    /// Reads one message into `out` (truncated if `out` is short) and returns its length.
    pub fn recv_msg(&mut self, out: &mut [u8]) -> Result<usize, StreamError> {
        if self.config.socket_type != SocketType::Datagram {
            return Err(StreamError::WrongMode);
        }
        self.readable_signalled = false;
        match self.recv.read_message(self.rcv_max, out) {
            Some(n) => Ok(n),
            None => self.end_of_data(),
        }
    }

    /// What an empty read means now.
    fn end_of_data(&self) -> Result<usize, StreamError> {
        match self.phase {
            Phase::Closed(CloseReason::PeerClosed | CloseReason::LocalClose) => Ok(0),
            Phase::Closed(r) => Err(StreamError::Closed(r)),
            Phase::Connected => Err(StreamError::Blocked),
            _ => Err(StreamError::NotConnected),
        }
    }

    /// Whether a read would return data now.
    pub fn is_readable(&self) -> bool {
        match self.config.socket_type {
            SocketType::Stream => self.recv.has_stream_data(self.ack_point()),
            SocketType::Datagram => self.recv.read_seq() < self.rcv_max,
        }
    }

    /// Bytes that can be written now.
    pub fn writable_bytes(&self) -> usize {
        self.send.free_space()
    }

    /// Whether written data waits to be sent for the first time (a driver that sleeps without a
    /// pacing deadline must be woken when this turns true).
    pub fn has_unsent_data(&self) -> bool {
        self.send.has_unsent()
    }

    /// Bytes written that have not been sent even once.
    pub fn unsent_bytes(&self) -> usize {
        self.send.unsent()
    }

    /// Whether everything written has been acknowledged by the peer, the last of it by a full
    /// ACK. A light ACK releases packets here, but a UDT4 receiver makes data readable only
    /// when it sends a full ACK (up to 10 ms later): a shutdown sent in between makes the
    /// reference library report a broken connection with that data unread.
    pub fn is_flushed(&self) -> bool {
        self.send.is_empty() && self.full_ack_point >= self.send.next_seq()
    }

    /// Bytes written that the peer has not acknowledged yet (by a light or a full ACK), unsent
    /// ones included. Once the peer has closed, zero is as much as can be known of delivery: a
    /// peer may close as soon as its application has what it wants, and its last full ACK can be
    /// lost on the way.
    pub fn unacknowledged_bytes(&self) -> usize {
        self.send.capacity() - self.send.free_space()
    }

    /// Closes gracefully: queued data is delivered first, then a shutdown is sent.
    pub fn close(&mut self, now: Instant) {
        match self.phase {
            Phase::Closed(_) => {}
            Phase::Connected => {
                self.closing = true;
                self.finish_close_if_flushed(now);
            }
            _ => self.set_closed(CloseReason::LocalClose),
        }
    }

    /// Ends the connection at once, telling the peer, and discards unsent data.
    pub fn abort(&mut self) {
        if self.phase == Phase::Connected {
            self.queue_shutdown();
        }
        if self.close_reason().is_none() {
            self.set_closed(CloseReason::LocalClose);
        }
    }

    fn finish_close_if_flushed(&mut self, _now: Instant) {
        if self.closing && self.is_flushed() && self.phase == Phase::Connected {
            self.queue_shutdown();
            self.set_closed(CloseReason::LocalClose);
        }
    }

    fn queue_shutdown(&mut self) {
        for _ in 0..SHUTDOWN_COPIES {
            self.queue_control(self.peer_id, Control::Shutdown);
        }
    }

    fn set_closed(&mut self, reason: CloseReason) {
        if self.close_reason().is_none() {
            tracing::debug!(id = self.local_id, %reason, "connection closed");
            self.phase = Phase::Closed(reason);
            self.events.push_back(Event::Closed(reason));
        }
    }

    // ---------------------------------------------------------------- input

    /// Processes one datagram from `from` (already routed here by the endpoint).
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, bytes: &[u8]) {
        self.receive(now, from, bytes, None)
    }

    /// Like [`Connection::handle_datagram`], for a driver that received the datagram into
    /// [`Bytes`]: stream payloads in the clear stay where they are (the receive buffer keeps
    /// slices of `datagram`) and [`Connection::read_chunk`] hands them on without a copy.
    pub fn handle_datagram_bytes(&mut self, now: Instant, from: SocketAddr, datagram: &Bytes) {
        self.handle_datagram_in(now, from, datagram, 0..datagram.len())
    }

    /// Like [`Connection::handle_datagram_bytes`] for one datagram, `message[range]`, of a
    /// message that holds several (a GRO batch): the receive buffer keeps slices of `message`,
    /// with no slice of the datagram made first (a reference count each, per packet). A range
    /// outside `message` is ignored, like any datagram that is not a packet.
    pub fn handle_datagram_in(
        &mut self,
        now: Instant,
        from: SocketAddr,
        message: &Bytes,
        range: std::ops::Range<usize>,
    ) {
        if let Some(datagram) = message.get(range) {
            self.receive(now, from, datagram, Some(message));
        }
    }

    fn receive(&mut self, now: Instant, from: SocketAddr, bytes: &[u8], owner: Option<&Bytes>) {
        if from != self.peer_addr || self.close_reason().is_some() {
            return;
        }
        if self.config.dialect == Dialect::Udt4 {
            return self.handle_plain(now, bytes, owner);
        }
        if wire::is_handshake(bytes) {
            // Handshakes travel in the clear; what they carry is checked by the key exchange,
            // and once connected they can only make a server repeat its acceptance.
            let (packet, key_message) = wire::split_handshake(bytes);
            match Packet::parse(packet) {
                Ok(Packet::Control(ControlPacket {
                    body: Control::Handshake(h),
                    ..
                })) => self.on_handshake(now, &h, key_message),
                _ => self.stats.packets_invalid += 1,
            }
            return;
        }
        let Some(protection) = self.protection.as_mut() else {
            // Sent by a server that accepted us before its acceptance got here: keep it for
            // when the keys are known.
            self.keep_early(bytes);
            return;
        };
        match protection.open(bytes, self.open_arena.room(bytes.len())) {
            // Opened into the arena: the receive buffer keeps slices of it, no further copy.
            Ok(packet) => self.handle_plain(now, &packet, Some(&packet)),
            Err(OpenError::Forged) => self.stats.packets_forged += 1,
            Err(OpenError::Replayed) => self.stats.packets_replayed += 1,
        }
    }

    fn keep_early(&mut self, bytes: &[u8]) {
        if matches!(self.phase, Phase::Connecting { .. }) && self.early_data.len() < MAX_EARLY_DATA
        {
            self.early_data.push(bytes.to_vec());
        }
    }

    /// Processes a datagram in the clear (`udt4`) or opened (`haul`).
    fn handle_plain(&mut self, now: Instant, bytes: &[u8], owner: Option<&Bytes>) {
        let packet = match Packet::parse(bytes) {
            Ok(p) => p,
            Err(e) => {
                tracing::trace!(error = %e, "ignoring malformed datagram");
                self.stats.packets_invalid += 1;
                return;
            }
        };
        match packet {
            Packet::Data(d) => {
                if self.phase == Phase::Connected {
                    self.heard(now);
                    self.on_data(now, d.header, d.payload, owner);
                } else {
                    // The server sent right after accepting and its acceptance is still on the
                    // way (or lost): keep the data rather than make the server retransmit it.
                    self.keep_early(bytes);
                }
            }
            Packet::Control(c) => {
                if let Control::Handshake(h) = c.body {
                    self.on_handshake(now, &h, &[]);
                } else if self.phase == Phase::Connected {
                    self.heard(now);
                    self.on_control(now, c.body, Duration::from_micros(c.timestamp.into()));
                }
            }
        }
    }

    fn heard(&mut self, now: Instant) {
        self.last_heard = now;
    }

    /// The handshake completed: negotiate, build the controller, start the timers.
    fn establish(&mut self, now: Instant, peer: &Handshake) {
        self.mss = peer.mss.min(self.config.mss).max(MIN_MSS);
        let payload = self.config.payload_for(self.mss);
        if payload != self.payload {
            // Slots sized for the negotiated packets, as many as the byte cap allows.
            self.payload = payload;
            let slots = self.config.recv_slots(payload);
            self.recv = RecvBuffer::new(self.recv.read_seq(), slots, payload);
        }
        self.flow_window = peer.flow_window.max(2) as u64;
        self.peer_window = self.flow_window;
        let mut cc = self.config.congestion.build(&CcInit {
            now,
            mss: self.mss,
            isn: self.local_isn.start(),
            peer_flow_window: peer.flow_window.max(2),
        });
        if let Some(path) = self.path_rtt.take() {
            cc.share_path_rtt(path);
        }
        self.cc = Some(cc);
        self.phase = Phase::Connected;
        self.last_heard = now;
        self.last_progress = now;
        self.last_full_ack = now;
        self.next_ack = now + SYN;
        self.next_send = now;
        self.events.push_back(Event::Connected);
        tracing::debug!(
            id = self.local_id,
            peer = self.peer_id,
            mss = self.mss,
            "connected"
        );
        for datagram in std::mem::take(&mut self.early_data) {
            self.handle_datagram(now, self.peer_addr, &datagram);
        }
    }

    fn on_data(&mut self, now: Instant, header: DataHeader, payload: &[u8], owner: Option<&Bytes>) {
        self.stats.packets_received += 1;
        self.last_data_arrival = Some(now);
        self.arrivals
            .on_arrival(now, header.seq.value(), header.timestamp);
        self.packets_since_ack += 1;
        self.packets_since_full_ack = self.packets_since_full_ack.saturating_add(1);
        let Some(seq) = header.seq.extend(self.rcv_max) else {
            self.stats.packets_invalid += 1;
            return;
        };
        if payload.len() > self.payload {
            self.stats.packets_invalid += 1;
            return;
        }
        self.send_clock
            .on_arrival(now, header.timestamp, seq >= self.rcv_max);
        match self.recv.insert(seq, header.msg, payload, owner) {
            Stored::New => {}
            Stored::Duplicate => {
                self.stats.packets_duplicate += 1;
                return;
            }
            Stored::NoRoom => return,
        }
        self.stats.bytes_received += payload.len() as u64;
        if seq > self.rcv_max {
            let (first, last) = (self.rcv_max, seq - 1);
            self.stats.packets_lost +=
                self.rcv_loss
                    .insert(first, last, Missing { last_reported: now });
            self.report_gap(now, first, last);
        }
        if seq >= self.rcv_max {
            self.rcv_max = seq + 1;
        } else {
            self.rcv_loss.remove(seq);
        }
        if payload.len() < self.payload {
            // A short packet (often the last of a burst): acknowledge at once.
            self.send_ack(now, false, now);
        } else if self.packets_since_ack >= LIGHT_ACK_PACKETS * self.light_acks {
            self.send_ack(now, true, now);
            self.light_acks += 1;
        }
        if !self.readable_signalled && self.is_readable() {
            self.readable_signalled = true;
            self.events.push_back(Event::Readable);
        }
    }

    /// Acts on a control packet; `wait` is its word 2, in an answer how long it waited at the
    /// peer (see [`wire::set_answer_wait`]).
    fn on_control(&mut self, now: Instant, body: Control<'_>, wait: Duration) {
        match body {
            Control::Handshake(_) => {}
            Control::KeepAlive | Control::CongestionWarning | Control::User { .. } => {}
            Control::LightAck { next_seq } => self.on_light_ack(now, next_seq, wait),
            Control::Ack(ack) => self.on_ack(now, &ack, wait),
            Control::Nak(list) => self.on_nak(now, list, wait),
            Control::Ack2 { ack_no } => self.on_ack2(now, ack_no, wait),
            Control::Shutdown => self.on_shutdown(now),
            Control::DropRequest {
                msg_word,
                first,
                last,
            } => self.on_drop_request(now, MsgInfo::from_word(msg_word).number, first, last),
            Control::PeerError { code } => self.set_closed(CloseReason::PeerError(code)),
        }
        self.forget_pacer_unless_ready();
    }

    /// A connection whose window or data ran out waits for them, not for the pacer: when it may
    /// send again, it banks no more than [`MIN_PACING_CREDIT`]. Only a control packet (an ACK
    /// that shrinks the window) can take readiness away between two sends; a sending round
    /// sets the flag itself, and a retransmission timeout leaves data to send.
    fn forget_pacer_unless_ready(&mut self) {
        if !self.has_data_to_send() {
            self.held_by_pacer = false;
        }
    }

    /// The peer closes. With everything sent but the last packets unacknowledged, their ACK
    /// may still be behind the shutdown: wait [`PEER_SHUTDOWN_GRACE`] for it.
    fn on_shutdown(&mut self, now: Instant) {
        let in_flight = self.send.next_seq() > self.send.first_seq();
        if in_flight && !self.send.has_unsent() {
            self.peer_shutdown_deadline
                .get_or_insert(now + PEER_SHUTDOWN_GRACE);
        } else {
            self.set_closed(CloseReason::PeerClosed);
        }
    }

    /// Extends an acknowledged sequence number; `None` if it acknowledges what was never sent.
    fn extend_ack(&self, seq: SeqNo) -> Option<u64> {
        let ext = seq.extend(self.send.first_seq())?;
        let valid = ext <= self.send.next_seq();
        if !valid {
            tracing::debug!(
                id = self.local_id,
                ack = seq.value(),
                "ACK beyond what was sent"
            );
        }
        valid.then_some(ext)
    }

    /// Releases acknowledged packets and returns how many. The newest of them gives an RTT
    /// sample, unless it was retransmitted (an ACK cannot tell which copy it answers), less the
    /// `wait` the ACK reports (the retransmission timer keeps it: see [`less_wait`]).
    fn acknowledge(&mut self, now: Instant, ext: u64, wait: Duration) -> u64 {
        let newest = ext.checked_sub(1).and_then(|s| self.send.packet(s));
        // If the ACK was waiting on a retransmitted packet it sat behind a hole: the time to it
        // measures the hole, not the path.
        let stalled = self
            .send
            .packet(self.send.first_seq())
            .and_then(|p| p.last_sent)
            .is_some_and(|(_, retransmitted)| retransmitted);
        if let (Some((sent, false)), false) = (newest.and_then(|p| p.last_sent), stalled) {
            if ext > self.send.first_seq() {
                let sample = now.saturating_duration_since(sent);
                self.rto.update(sample);
                self.latest_rtt_sample = Some(less_wait(sample, wait, &mut self.least_rtt_sample));
            }
        }
        let released = self.send.ack(ext);
        if released > 0 {
            self.snd_loss.remove_below(ext);
            self.snd_late.remove_below(ext);
            self.last_progress = now;
            self.exp_count = 1;
            self.signal_writable();
            if self.is_flushed() {
                self.events.push_back(Event::Flushed);
            }
            self.finish_close_if_flushed(now);
            if self.peer_shutdown_deadline.is_some() && self.send.is_empty() {
                self.set_closed(CloseReason::PeerClosed);
            }
        }
        released
    }

    /// Low-water marks: wakes a blocked writer once a quarter of the send buffer is free and
    /// at most half the unsent allowance is used, not on every ACK or transmission (each
    /// wake-up costs more than the copy it enables).
    fn signal_writable(&mut self) {
        if self.write_blocked
            && self.send.free_space() >= self.send.capacity() / 4
            && self.send.unsent() <= self.config.max_unsent_bytes / 2
        {
            self.write_blocked = false;
            self.events.push_back(Event::Writable);
        }
    }

    fn on_light_ack(&mut self, now: Instant, next_seq: SeqNo, wait: Duration) {
        self.acked_once = true;
        let Some(ext) = self.extend_ack(next_seq) else {
            self.stats.packets_invalid += 1;
            return;
        };
        let advanced = ext.saturating_sub(self.send.first_seq());
        self.flow_window = self.flow_window.saturating_sub(advanced).max(2);
        self.acknowledge(now, ext, wait);
    }

    fn on_ack(&mut self, now: Instant, ack: &FullAck, wait: Duration) {
        self.acked_once = true;
        let Some(ext) = self.extend_ack(ack.next_seq) else {
            self.stats.packets_invalid += 1;
            return;
        };
        // Answer with an ACK2 (at most one per SYN unless the same ACK repeats).
        let due = match self.last_ack2 {
            Some((no, at)) => no == ack.ack_no || now.saturating_duration_since(at) > SYN,
            None => true,
        };
        if due {
            self.queue_answer(Control::Ack2 { ack_no: ack.ack_no }, now);
            self.last_ack2 = Some((ack.ack_no, now));
        }
        if ext >= self.send.first_seq() {
            self.flow_window = ack.avail_buf.max(2) as u64;
        }
        let newly_acked = ext.saturating_sub(self.full_ack_point);
        self.full_ack_point = self.full_ack_point.max(ext);
        let released = self.acknowledge(now, ext, wait);
        if released == 0 && newly_acked > 0 && self.is_flushed() {
            // Light ACKs released the last packets; only this full ACK lets the peer read them.
            self.events.push_back(Event::Flushed);
            self.finish_close_if_flushed(now);
        }
        // A repeated ACK still carries fresh rates (the receiver reports while it waits for a
        // hole to fill); the controller gets it with nothing newly acknowledged.
        if newly_acked == 0 && ack.rates.is_none() {
            return;
        }
        self.rtt.adopt(ack.rtt_us, ack.rtt_var_us);
        if let Some(r) = ack.rates {
            self.recv_rate.update(r.recv_rate);
            self.capacity.update(r.capacity);
        }
        let sample = AckSample {
            ack_seq: ext,
            newly_acked,
            delivery_rate: ack.rates.map(|r| r.recv_rate).filter(|r| *r > 0),
            link_capacity: ack.rates.map(|r| r.capacity).filter(|c| *c > 0),
            rtt_sample: self.latest_rtt_sample.take(),
            reported_rtt: Duration::from_micros(ack.rtt_us as u64),
            path: self.path_estimate(),
        };
        if let Some(cc) = self.cc.as_mut() {
            cc.on_ack(now, &sample);
        }
    }

    fn path_estimate(&self) -> PathEstimate {
        PathEstimate {
            rtt: self.rtt.rtt(),
            rtt_var: self.rtt.var(),
            recv_rate: self.recv_rate.get(),
            capacity: self.capacity.get(),
            largest_sent: self.send.next_seq().saturating_sub(1),
            retransmitted: self.stats.packets_retransmitted,
        }
    }

    fn on_nak(&mut self, now: Instant, list: LossList<'_>, wait: Duration) {
        let first_unacked = self.send.first_seq();
        let next = self.send.next_seq();
        // Validate the whole report before acting on any of it.
        let mut first_lost = None;
        let mut count = 0u64;
        for range in list.iter() {
            let Some(start) = range.start.extend(first_unacked) else {
                self.stats.packets_invalid += 1;
                return;
            };
            let span = range.start.offset_to(range.end);
            if span < 0 || start + span as u64 >= next {
                self.stats.packets_invalid += 1;
                return;
            }
            let end = start + span as u64;
            first_lost.get_or_insert(start);
            count += end - start + 1;
        }
        let mut rtt_sample: Option<Duration> = None;
        let mut newly_lost = 0;
        let mut longest_gap = 0;
        for range in list.iter() {
            let start = range.start.extend(first_unacked).unwrap_or(0);
            let end = start + range.start.offset_to(range.end) as u64;
            let added = if end >= first_unacked {
                self.insert_lost(now, start.max(first_unacked), end)
            } else {
                0
            };
            newly_lost += added;
            longest_gap = longest_gap.max(added);
            // The receiver reports a gap the moment the packet after it arrives: the time since
            // that packet left is a round trip that no hole delays. Not so a re-report (the
            // gap's first packet was retransmitted already): it comes on the receiver's timer.
            // Nor a repeat of what is listed for retransmission already (re-reports go three
            // times, and a gap rides again with the next): its time is the repeat's, and two such
            // in a row would read as a queue.
            let first_report = added > 0
                && self
                    .send
                    .packet(start)
                    .and_then(|p| p.last_sent)
                    .is_some_and(|(_, retransmitted)| !retransmitted);
            let after = self.send.packet(end + 1).and_then(|p| p.last_sent);
            if let Some((sent, false)) = after.filter(|_| first_report) {
                let raw = now.saturating_duration_since(sent);
                let sample = less_wait(raw, wait, &mut self.least_rtt_sample);
                rtt_sample = Some(rtt_sample.map_or(sample, |m| m.min(sample)));
            }
        }
        self.stats.packets_reported_lost += count;
        tracing::trace!(id = self.local_id, count, "NAK");
        self.last_progress = now;
        self.exp_count = 1;
        if !self.acked_once {
            // Before the receiver's first ACK a loss is the handshake race (data sent right
            // after accepting reaches a peer that is not connected yet), not congestion:
            // retransmit, but do not slow down (the reference would crawl for seconds).
            return;
        }
        let sample = LossSample {
            first_lost: first_lost.unwrap_or(first_unacked),
            lost: newly_lost,
            longest_gap,
            rtt_sample,
            path: self.path_estimate(),
        };
        if let Some(cc) = self.cc.as_mut() {
            cc.on_loss(now, &sample);
        }
    }

    /// Adds `start..=end` to the retransmission list, but for packets resent less than an RTT
    /// ago: those are on their way, and the report (the receiver repeats its holes, with the next
    /// gap and on a timer) cannot know of them. Marks packets whose first report came late (see
    /// [`LATE_REPORT`]). Returns how many it added.
    fn insert_lost(&mut self, now: Instant, start: u64, end: u64) -> u64 {
        // The RTT is the smaller of the sender's smoothed one and the peer's (`self.rtt`: what
        // the peer's ACKs report, or on a connection that also receives, our own ACK–ACK2
        // samples). A haul peer's timer repeats a hole its RTT + 4·RTTVar + 10 ms after
        // reporting it, and reports an RTT no larger than that; a sender whose own was longer
        // (its samples wait on the ACK timer, or one early sample stood for seconds of lossy
        // start-up: every ACK waits behind a hole) ignored the repeat, and the hole waited a
        // timeout more. Under heavy loss the sender may have no sample of its own at all; the
        // peer's estimate stands in.
        let peer = self.rtt.rtt();
        let own = self.rto.rtt();
        let in_flight = own.map_or(peer, |own| own.min(peer));
        // A packet never resent and sent longer ago than a first report takes, by the longer of
        // the two RTTs once the sender has measured its own (the peer's may be its start value),
        // had its first report lost.
        let late = own.map(|own| own.max(peer).mul_f64(LATE_REPORT));
        let mut added = 0;
        let mut run = None;
        for seq in start..=end {
            let last_sent = self.send.packet(seq).and_then(|p| p.last_sent);
            let ago = last_sent.map(|(at, resent)| (now.saturating_duration_since(at), resent));
            if let (Some((ago, false)), Some(late)) = (ago, late) {
                if ago > late {
                    tracing::trace!(seq, "first reported late: its first report was lost");
                    self.snd_late.insert(seq, seq, ());
                }
            }
            let resent_lately = ago.is_some_and(|(ago, resent)| resent && ago < in_flight);
            match (resent_lately, run) {
                (true, Some(first)) => {
                    added += self.snd_loss.insert(first, seq - 1, ());
                    run = None;
                }
                (false, None) => run = Some(seq),
                _ => {}
            }
        }
        if let Some(first) = run {
            added += self.snd_loss.insert(first, end, ());
        }
        added
    }

    /// Times the ACK–ACK2 exchange from the ACK's sending, less the `wait` the ACK2 reports; the
    /// least RTT (for repairs that are overdue, and long paths) is the least measured.
    fn on_ack2(&mut self, now: Instant, ack_no: AckNo, wait: Duration) {
        let Some(pos) = self.ack_history.iter().position(|(n, _, _)| *n == ack_no) else {
            return;
        };
        let (_, seq, sent) = self.ack_history[pos];
        self.ack_history.drain(..=pos);
        let measured = now.saturating_duration_since(sent);
        if measured.as_micros() > 0 {
            let sample = less_wait(measured, wait, &mut self.rcv_min_rtt);
            self.rtt
                .update(sample.as_micros().min(u32::MAX as u128) as u32);
        }
        if seq > self.rcv_last_ack2 {
            self.rcv_last_ack2 = seq;
        }
    }

    fn on_drop_request(&mut self, now: Instant, number: MsgNo, first: SeqNo, last: SeqNo) {
        // A byte stream cannot skip bytes: only message mode honours drop requests.
        if self.config.socket_type == SocketType::Stream {
            self.stats.packets_invalid += 1;
            return;
        }
        let Some(f) = first.extend(self.rcv_max) else {
            return;
        };
        let span = first.offset_to(last);
        if span < 0 || span as u64 >= self.config.recv_buffer_packets as u64 {
            self.stats.packets_invalid += 1;
            return;
        }
        let l = f + span as u64;
        if l < self.recv.read_seq() || !self.recv.in_window(f.max(self.recv.read_seq())) {
            return;
        }
        self.recv.drop_message(f, l, number);
        self.rcv_loss.remove_range(f, l);
        if f > self.rcv_max {
            let gap = Missing { last_reported: now };
            self.rcv_loss.insert(self.rcv_max, f - 1, gap);
        }
        if l >= self.rcv_max {
            self.rcv_max = l + 1;
        }
    }

    // ---------------------------------------------------------------- receiver reports

    /// Next sequence number expected in order: everything before it has arrived (or was dropped).
    fn ack_point(&self) -> u64 {
        self.rcv_loss.first().unwrap_or(self.rcv_max)
    }

    /// Queues an ACK (a light one: the next expected sequence only) that was due at `due`.
    fn send_ack(&mut self, now: Instant, light: bool, due: Instant) {
        let ack = self.ack_point();
        // Data arrived since the last full ACK: its rates are news even if the ACK number is not
        // (behind a hole the cumulative ACK stalls while packets keep arriving).
        let fresh = !light && self.packets_since_full_ack > 0;
        if ack == self.rcv_last_ack2 && !fresh {
            return;
        }
        let wire_seq = SeqNo::from_extended(ack);
        if light {
            self.queue_answer(Control::LightAck { next_seq: wire_seq }, due);
            self.stats.acks_sent += 1;
            return;
        }
        if ack > self.rcv_last_ack {
            self.rcv_last_ack = ack;
        } else if ack < self.rcv_last_ack
            || (!fresh && now.saturating_duration_since(self.last_full_ack) < self.rtt.rto())
        {
            return;
        }
        self.ack_no = self.ack_no.next();
        let full = now.saturating_duration_since(self.last_full_ack) > SYN;
        let rates = full.then(|| RateReport {
            recv_rate: self.arrivals.report_rate(now),
            capacity: self.arrivals.capacity(),
        });
        if full {
            self.last_full_ack = now;
            self.packets_since_full_ack = 0;
        }
        let body = FullAck {
            ack_no: self.ack_no,
            next_seq: wire_seq,
            rtt_us: self.rtt.current_us(),
            rtt_var_us: self.rtt.var_us(),
            avail_buf: self.recv.available(ack).clamp(2, u32::MAX as u64) as u32,
            rates,
        };
        self.queue_answer(Control::Ack(body), due);
        self.stats.acks_sent += 1;
        if self.ack_history.len() == ACK_HISTORY {
            self.ack_history.pop_front();
        }
        self.ack_history.push_back((self.ack_no, ack, now));
    }

    /// Reports a gap the moment the packet after it arrives, with the previous gap (the previous
    /// two on a long path, [`LONG_PATH_REPEATED_GAPS`]) if reports repeat and those are still
    /// missing and were reported less than half a round trip ago: a lost report then costs the
    /// spacing of two gaps, not the re-report timer's RTO and a round trip more. (Later, the
    /// sender may have resent them more than its RTT ago, and would take a copy for a new loss.)
    fn report_gap(&mut self, now: Instant, first: u64, last: u64) {
        let fresh = self.rtt.rtt() / 2;
        let long_path = self.rcv_min_rtt.is_some_and(|rtt| rtt >= LONG_PATH_RTT);
        let repeats = if long_path {
            LONG_PATH_REPEATED_GAPS
        } else {
            REPEATED_GAPS
        };
        // The new gap first: a UDT4 sender reads a report's first range as where the loss is
        // (a new congestion period or not).
        let mut ranges = [(first, last); LONG_PATH_REPEATED_GAPS + 1];
        let mut count = 1;
        if self.config.repeat_loss_reports {
            for &(a, b, at) in self.last_gaps.iter().take(repeats) {
                if now.saturating_duration_since(at) < fresh && self.rcv_loss.contains_range(a, b) {
                    ranges[count] = (a, b);
                    count += 1;
                }
            }
        }
        self.last_gaps.truncate(LONG_PATH_REPEATED_GAPS - 1);
        self.last_gaps.push_front((first, last, now));
        self.send_nak(&ranges[..count], 1, Some(now));
    }

    /// Sends NAKs for the given inclusive extended ranges, split to fit packets, each packet
    /// `copies` times back to back; a gap's first report answers the arrival at `arrival`.
    fn send_nak(&mut self, ranges: &[(u64, u64)], copies: usize, arrival: Option<Instant>) {
        let mut body = std::mem::take(&mut self.scratch);
        body.clear();
        body.resize(self.payload.max(8), 0);
        let mut len = 0;
        for &(start, end) in ranges {
            let range = LossRange {
                start: SeqNo::from_extended(start),
                end: SeqNo::from_extended(end),
            };
            if len + LossList::range_len(range) > body.len() {
                self.queue_nak_body(&body[..len], copies, arrival);
                len = 0;
            }
            len = LossList::write_range(range, &mut body, len).unwrap_or(len);
        }
        if len > 0 {
            self.queue_nak_body(&body[..len], copies, arrival);
        }
        self.scratch = body;
    }

    fn queue_nak_body(&mut self, words: &[u8], copies: usize, arrival: Option<Instant>) {
        if let Ok(list) = LossList::parse(words) {
            let packet = ControlPacket::new(self.peer_id, Control::Nak(list));
            let answer = arrival.map(|due| Answer { due, ack_no: None });
            for _ in 0..copies {
                self.control.push(&packet, answer);
                self.stats.naks_sent += 1;
            }
        }
    }

    /// Re-reports, in [`RENAK_COPIES`] copies, missing packets whose last report is older than an
    /// RTO, or whose repair is overdue (see [`Self::overdue_before`]) and whose last report is
    /// older than the smoothed RTT: a haul sender ignores a repeat of what it resent less than
    /// the smaller of its RTT and ours ago (`insert_lost`), and the overdue reading comes early
    /// where the clocks drift apart (a sender's clock that runs fast reads a standing queue as
    /// none).
    fn renak(&mut self, now: Instant) {
        let interval = self.rtt.rto() + SYN;
        let (overdue_before, rtt) = (self.overdue_before(), self.rtt.rtt());
        let per_packet = self.payload / 8;
        let limit = per_packet.max(1) * MAX_RENAK_PACKETS;
        let mut due = std::mem::take(&mut self.renak_due);
        due.clear();
        for (start, end, missing) in self.rcv_loss.iter_mut() {
            if due.len() >= limit {
                break;
            }
            let since = now.saturating_duration_since(missing.last_reported);
            let overdue =
                overdue_before.is_some_and(|t| missing.last_reported <= t) && since >= rtt;
            if overdue || since >= interval {
                missing.last_reported = now;
                due.push((start, end));
            }
        }
        if !due.is_empty() {
            self.send_nak(&due, RENAK_COPIES, None);
        }
        self.renak_due = due;
    }

    /// Holes reported at or before this time have overdue repairs: new data that left the sender
    /// after the report reached it has arrived (the report's time plus the smallest RTT, and
    /// [`SYN`] or a sixteenth of it for the sender's turn, jitter and reordering), and a sender
    /// resends before it sends new data. The timer waits RTT + 4·RTTVar + 10 ms instead; on a
    /// long lossy path in start-up, where the RTT swings, that is a tenth of a second or more
    /// per lost repair.
    fn overdue_before(&self) -> Option<Instant> {
        let min_rtt = self.rcv_min_rtt?;
        let margin = SYN.max(min_rtt / 16);
        self.send_clock.newest_sent()?.checked_sub(min_rtt + margin)
    }

    // ---------------------------------------------------------------- output

    fn queue_control(&mut self, dest: u32, body: Control<'_>) {
        self.control.push(&ControlPacket::new(dest, body), None);
    }

    /// Queues an answer to an arrival (an ACK, a gap's first NAK, an ACK2) that was due at
    /// `due`: its sending writes how long it waited since (see [`wire::set_answer_wait`]).
    fn queue_answer(&mut self, body: Control<'_>, due: Instant) {
        let ack_no = match &body {
            Control::Ack(ack) => Some(ack.ack_no),
            _ => None,
        };
        let packet = ControlPacket::new(self.peer_id, body);
        self.control.push(&packet, Some(Answer { due, ack_no }));
    }

    /// A full ACK went out: its ACK–ACK2 time counts from now, not from when it was queued (a
    /// driver that ran late sends it later; the simulator, never).
    fn full_ack_sent(&mut self, now: Instant, ack_no: AckNo) {
        if let Some(entry) = self
            .ack_history
            .iter_mut()
            .rev()
            .find(|(n, _, _)| *n == ack_no)
        {
            entry.2 = now;
        }
    }

    /// Appends the next datagram (or GSO batch) to `buf`; [`Transmit::size`] counts the bytes
    /// appended. A driver can gather many transmits in one buffer and send them together.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        self.next_transmit(now, buf, None)
    }

    /// Like [`Connection::poll_transmit`], without copying payloads where the dialect allows
    /// (plain `udt4`): `buf` receives the headers, `pieces` the transmit's parts in wire order,
    /// and [`Transmit::size`] counts every byte of them. The driver hands the pieces to the
    /// kernel as one scatter-gather send, reading [`Piece::Sent`] with
    /// [`Connection::sent_payload`] (the send buffer's own memory, no copy) before it lets an ACK
    /// release them.
    pub fn poll_transmit_gather(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        pieces: &mut Vec<Piece>,
    ) -> Option<Transmit> {
        let start = buf.len();
        let first = pieces.len();
        let t = self.next_transmit(now, buf, Some(pieces))?;
        if pieces.len() == first {
            pieces.push(Piece::Buf {
                start,
                len: buf.len() - start,
            });
        }
        Some(t)
    }

    /// The send-buffer bytes of a [`Piece::Sent`]: calls `f` with each chunk of the send buffer
    /// that holds part of them and that part's range in it, in order (one to three parts), so
    /// that a driver can keep one reference per chunk (no copy) for a whole batch of packets
    /// cut from it and send them after letting go of the connection. False, and no call, when
    /// they are no longer held (acknowledged since the piece was gathered).
    pub fn sent_payload(
        &self,
        offset: u64,
        len: usize,
        f: impl FnMut(&Bytes, std::ops::Range<usize>),
    ) -> bool {
        self.send.for_each_part(offset, len, f)
    }

    fn next_transmit(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        pieces: Option<&mut Vec<Piece>>,
    ) -> Option<Transmit> {
        let start = buf.len();
        if let Some(answer) = self.control.pop_into(now, buf) {
            if let Some(ack_no) = answer.and_then(|a| a.ack_no) {
                self.full_ack_sent(now, ack_no);
            }
            if let Some(protection) = self.protection.as_mut() {
                if !wire::is_handshake(&buf[start..]) {
                    protection.seal(buf, start);
                }
            }
            self.last_sent = now;
            return Some(self.single(buf.len() - start));
        }
        match self.phase {
            Phase::Connecting { .. } | Phase::Rendezvous { .. } if now >= self.next_handshake => {
                Some(self.handshake_transmit(now, buf))
            }
            Phase::Connected => self.transmit_data(now, buf, pieces),
            _ => None,
        }
    }

    fn single(&self, size: usize) -> Transmit {
        Transmit {
            destination: self.peer_addr,
            size,
            segment_size: None,
        }
    }

    /// Whether a data packet could go out now if the pacer allowed it.
    fn has_data_to_send(&self) -> bool {
        if !self.snd_loss.is_empty() || self.deferred.is_some() {
            return true;
        }
        let in_flight = self.send.next_seq() - self.send.first_seq();
        let window = self
            .cc
            .as_ref()
            .map_or(2, |cc| cc.window() as u64)
            .min(self.flow_window);
        self.send.has_unsent() && in_flight < window
    }

    /// Sends data packets within the pacer's allowance: copied into `buf` behind their headers,
    /// or (plain dialect, `pieces` given) left in the send buffer and listed in `pieces`.
    fn transmit_data(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        mut pieces: Option<&mut Vec<Piece>>,
    ) -> Option<Transmit> {
        if now < self.next_send {
            return None;
        }
        let cc = self.cc.as_ref()?;
        let (period, train) = (
            cc.pacing_period(),
            cc.probe_train().clamp(1, MAX_PROBE_TRAIN),
        );
        let credit = if self.held_by_pacer {
            (self.rtt.rtt() / 2).clamp(MIN_PACING_CREDIT, MAX_PACING_CREDIT)
        } else {
            MIN_PACING_CREDIT
        }
        .max(period);
        if let Some(floor) = now.checked_sub(credit) {
            self.next_send = self.next_send.max(floor);
        }
        let overhead = self.config.dialect.overhead();
        let packet_len = HEADER_LEN + self.payload + overhead;
        let max_segments = self
            .config
            .max_segments
            .min(self.config.max_batch_bytes / packet_len)
            .max(1);
        let mut total = 0;
        let mut segment = 0;
        let mut count = 0;
        while count < max_segments && self.next_send <= now {
            let Some(next) = self.next_packet_to_send(now) else {
                break;
            };
            let Outgoing {
                seq, retransmit, ..
            } = next;
            let Some(packet) = self.send.packet(seq).copied() else {
                continue;
            };
            // GSO: every segment but the last has the first one's size.
            let size = HEADER_LEN + packet.len() + overhead;
            if count > 0 && size > segment {
                self.deferred = Some(next);
                break;
            }
            let header = DataHeader {
                seq: SeqNo::from_extended(seq),
                msg: packet.msg,
                timestamp: now.saturating_duration_since(self.epoch).as_micros() as u32,
                dest: self.peer_id,
            };
            let start = buf.len();
            buf.extend_from_slice(&header.to_bytes());
            let len = match (pieces.as_deref_mut(), self.protection.as_mut()) {
                (Some(pieces), None) => {
                    pieces.push(Piece::Buf {
                        start,
                        len: HEADER_LEN,
                    });
                    pieces.push(Piece::Sent {
                        offset: packet.offset(),
                        len: packet.len(),
                    });
                    packet.len()
                }
                (_, protection) => {
                    let len = self.send.append_payload(&packet, buf);
                    if let Some(protection) = protection {
                        protection.seal(buf, start);
                    }
                    len
                }
            };
            total += size;
            self.send.mark_sent(seq, now, retransmit);
            if next.copies > 1 {
                self.deferred = Some(Outgoing {
                    copies: next.copies - 1,
                    ..next
                });
            }
            if retransmit {
                self.stats.packets_retransmitted += 1;
            } else {
                self.stats.packets_sent += 1;
                self.stats.bytes_sent += len as u64;
                if seq == self.send.first_seq() {
                    // Nothing was outstanding: the retransmission timer starts now, and the
                    // controller learns the sender was idle.
                    self.last_progress = now;
                    if let Some(cc) = self.cc.as_mut() {
                        cc.on_idle_restart(now, now.saturating_duration_since(self.last_sent));
                    }
                }
            }
            count += 1;
            // Probe trains (the reference's pair, every 16th packet with the next) leave back
            // to back; the gaps they skip are paid after them.
            let position = seq % train.max(16);
            if position + 1 == train {
                self.next_send += period * train as u32;
            } else if position + 1 > train {
                self.next_send += period;
            }
            if count == 1 {
                segment = size;
            }
            if size < segment {
                break;
            }
        }
        if self.deferred.is_none() && self.snd_loss.is_empty() && !self.send.has_unsent() {
            if let Some(cc) = self.cc.as_mut() {
                cc.on_app_limited(now);
            }
        }
        self.held_by_pacer = self.has_data_to_send();
        if count == 0 {
            return None;
        }
        self.signal_writable();
        self.last_sent = now;
        Some(Transmit {
            destination: self.peer_addr,
            size: total,
            segment_size: (count > 1).then_some(segment),
        })
    }

    /// Picks the next packet: retransmissions first, then new data within the window.
    fn next_packet_to_send(&mut self, now: Instant) -> Option<Outgoing> {
        // Nothing, not even a retransmission, goes to a peer that shut down.
        if self.peer_shutdown_deadline.is_some() {
            return None;
        }
        if let Some(deferred) = self.deferred.take() {
            return Some(deferred);
        }
        while let Some(seq) = self.snd_loss.pop_first() {
            let Some(packet) = self.send.packet(seq) else {
                continue;
            };
            if packet.deadline.is_some_and(|d| now >= d) {
                self.drop_expired_message(seq);
                continue;
            }
            // Reported missing again after a retransmission, or first reported late (the first
            // report was lost, and the peer's timer or overdue rule repeated it): the hole has
            // cost a round trip already. The controller may ask for more copies, back to back,
            // of such a repair or (in start-up on a long path) of any.
            let again = self.snd_late.remove(seq)
                || packet
                    .last_sent
                    .is_some_and(|(_, retransmitted)| retransmitted);
            let copies = self
                .cc
                .as_ref()
                .map_or(1, |cc| cc.repair_copies(again).clamp(1, MAX_REPAIR_COPIES));
            return Some(Outgoing {
                seq,
                retransmit: true,
                copies,
            });
        }
        if !self.has_data_to_send() {
            return None;
        }
        let seq = self.send.cut_packet(self.payload)?;
        Some(Outgoing {
            seq,
            retransmit: false,
            copies: 1,
        })
    }

    fn drop_expired_message(&mut self, seq: u64) {
        if let Some((first, last, msg)) = self.send.drop_message(seq) {
            self.snd_loss.remove_range(first, last);
            self.snd_late.remove_range(first, last);
            self.stats.messages_dropped += 1;
            self.queue_control(
                self.peer_id,
                Control::DropRequest {
                    msg_word: msg.to_word(),
                    first: SeqNo::from_extended(first),
                    last: SeqNo::from_extended(last),
                },
            );
        }
    }

    // ---------------------------------------------------------------- timers

    /// Retransmission (EXP) interval: max(n·(RTO + SYN), n·300 ms), the RTO measured by this
    /// sender (1 s before the first sample), n the consecutive expiries (at most 16).
    fn exp_interval(&self) -> Duration {
        let n = self.exp_count.min(16);
        (self.rto.rto() + SYN).max(MIN_EXP) * n
    }

    /// When [`Connection::handle_timeout`] should be called next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.phase {
            Phase::Closed(_) => None,
            Phase::Connecting { .. } | Phase::Rendezvous { .. } => {
                Some(self.next_handshake.min(self.handshake_deadline))
            }
            Phase::Connected if self.peer_shutdown_deadline.is_some() => {
                self.peer_shutdown_deadline
            }
            Phase::Connected => {
                let mut t = self
                    .next_ack
                    .min(self.last_heard + self.config.idle_timeout)
                    .min(self.last_sent + self.config.keepalive_interval);
                if self.send.next_seq() > self.send.first_seq() {
                    t = t.min(self.last_progress + self.exp_interval());
                }
                if self.has_data_to_send() {
                    t = t.min(self.next_send);
                }
                Some(t)
            }
        }
    }

    /// Runs whatever timers are due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        match self.phase {
            Phase::Closed(_) => {}
            Phase::Connecting { cookie } if now >= self.handshake_deadline => {
                // A listener that answered with a cookie but never the key exchange is most
                // likely a UDT4 one: it drops handshakes longer than 48 bytes without a word.
                let reason = if cookie != 0 && self.config.dialect != Dialect::Udt4 {
                    CloseReason::KeyExchangeUnanswered
                } else {
                    CloseReason::ConnectTimeout
                };
                self.set_closed(reason);
            }
            Phase::Rendezvous { .. } if now >= self.handshake_deadline => {
                self.set_closed(CloseReason::ConnectTimeout);
            }
            Phase::Connecting { .. } | Phase::Rendezvous { .. } => {}
            Phase::Connected => self.connected_timers(now),
        }
    }

    fn connected_timers(&mut self, now: Instant) {
        if let Some(deadline) = self.peer_shutdown_deadline {
            if now >= deadline {
                self.set_closed(CloseReason::PeerClosed);
            }
            return;
        }
        if now >= self.last_heard + self.config.idle_timeout {
            self.set_closed(CloseReason::TimedOut);
            return;
        }
        if now >= self.next_ack {
            // Due at its deadline, or at the newest arrival if that came later (a driver that ran
            // late read it since): the rest is the driver's lateness, which the ACK reports.
            let due = self
                .last_data_arrival
                .map_or(self.next_ack, |arrival| arrival.max(self.next_ack))
                .min(now);
            self.send_ack(now, false, due);
            if self.config.repeat_loss_reports {
                self.renak(now);
            }
            self.next_ack = now + SYN;
            self.packets_since_ack = 0;
            self.light_acks = 1;
        }
        let outstanding = self.send.next_seq() > self.send.first_seq();
        if outstanding && now >= self.last_progress + self.exp_interval() {
            // Nothing acknowledged for a whole RTO: go back to the oldest unacknowledged packet.
            if self.snd_loss.is_empty() {
                let (first, next) = (self.send.first_seq(), self.send.next_seq());
                self.snd_loss.insert(first, next - 1, ());
            }
            self.stats.timeouts += 1;
            tracing::debug!(
                id = self.local_id,
                unacked = self.send.next_seq() - self.send.first_seq(),
                n = self.exp_count,
                flow = self.flow_window,
                "retransmission timeout"
            );
            let path = self.path_estimate();
            if let Some(cc) = self.cc.as_mut() {
                cc.on_timeout(now, &path);
            }
            self.exp_count += 1;
            self.last_progress = now;
        }
        if now >= self.last_sent + self.config.keepalive_interval {
            self.queue_control(self.peer_id, Control::KeepAlive);
        }
    }
}

/// An RTT sample less the `wait` its answer reports (how long the peer held it: a busy peer's
/// driver runs late, and its lateness would read as a queue), but not below `least`, the least
/// sample measured, which it updates with this one. A wait as long as the sample is no wait but
/// another UDT implementation's timestamp, and is ignored; a reference peer reports none.
fn less_wait(measured: Duration, wait: Duration, least: &mut Option<Duration>) -> Duration {
    let floor = least.map_or(measured, |l| l.min(measured));
    *least = Some(floor);
    if wait >= measured {
        return measured;
    }
    (measured - wait).max(floor)
}

#[cfg(test)]
mod tests;
