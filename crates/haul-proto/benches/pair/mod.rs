//! Two connections back to back in memory on a virtual clock, with a bottleneck between them:
//! the sans-IO core's whole per-packet path — write, cut, gather, parse, receive buffer, read,
//! ACKs, timers — and nothing of the kernel's. The sender paces at a fixed rate just below the
//! bottleneck's (`FixedRate`), so every run reaches the same steady state: no queue, no loss.
//! Shared by the `data_path` benchmark (instructions per packet under callgrind) and the
//! allocation test.

use bytes::Bytes;
use haul_proto::arena::Arena;
use haul_proto::cc::FixedRateFactory;
use haul_proto::{
    Connection, ConnectionConfig, DatagramEvent, Dialect, Endpoint, EndpointConfig, Piece,
    StreamError,
};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One-way delay of the bottleneck.
const DELAY: Duration = Duration::from_millis(1);
/// Its rate in bytes per second (10 Gbit/s).
const RATE: f64 = 1.25e9;
/// The sender's rate in bits per second.
const PACING: u64 = 9_500_000_000;
/// The shortest step of the clock, as `haul-net`'s I/O thread never sleeps for less: each step
/// sends and receives a batch of packets, as a turn of that thread does.
const QUANTUM: Duration = Duration::from_micros(100);
/// Stream bytes per packet of the `udt4` dialect at the default MSS (1500 − IP, UDP and haul
/// headers); the `haul` dialect's packets carry a little less.
pub const PAYLOAD: u64 = 1456;
/// What the sender writes, lent again and again (`Connection::write_bytes`: no copy).
const CHUNK: usize = 1 << 20;

/// A sender and a receiver, connected.
pub struct Pair {
    now: Instant,
    sender: Connection,
    receiver: Connection,
    sender_addr: SocketAddr,
    receiver_addr: SocketAddr,
    /// Datagrams on their way, each direction in the order they are due.
    to_receiver: VecDeque<(Instant, Bytes)>,
    to_sender: VecDeque<(Instant, Bytes)>,
    /// When the bottleneck is free again (sender to receiver; ACKs are not rate-limited).
    link_free: Instant,
    arena: Arena,
    chunk: Bytes,
    buf: Vec<u8>,
    pieces: Vec<Piece>,
    datagram: Vec<u8>,
    /// Stream bytes the receiver has read.
    pub delivered: u64,
}

impl Pair {
    /// Runs the handshake in `dialect` (default settings but the fixed-rate controller).
    pub fn connect(dialect: Dialect) -> Pair {
        let now = Instant::now();
        let sender_addr: SocketAddr = "10.0.0.1:4000".parse().expect("literal");
        let receiver_addr: SocketAddr = "10.0.0.2:9000".parse().expect("literal");
        let endpoint = |listen, seed| {
            Endpoint::new(
                EndpointConfig {
                    connection: ConnectionConfig {
                        dialect: dialect.clone(),
                        congestion: Arc::new(FixedRateFactory {
                            bits_per_second: PACING,
                        }),
                        ..ConnectionConfig::default()
                    },
                    listen,
                    seed,
                    accept_keys: Vec::new(),
                    wall_clock: Some(std::time::Duration::from_secs(1_800_000_000)),
                },
                now,
            )
        };
        let mut listener = endpoint(true, 1);
        let (_, mut sender) = endpoint(false, 2).connect(now, receiver_addr);
        let (mut buf, mut reply) = (Vec::new(), Vec::new());
        let receiver = loop {
            buf.clear();
            sender
                .poll_transmit(now, &mut buf)
                .expect("a handshake to send");
            match listener.handle(now, sender_addr, &buf, &mut reply) {
                Some(DatagramEvent::Response(t)) => {
                    sender.handle_datagram(now, receiver_addr, &reply[..t.size])
                }
                Some(DatagramEvent::NewConnection(_, accepted)) => break *accepted,
                other => panic!("the handshake went wrong: {other:?}"),
            }
        };
        let mut pair = Pair {
            now,
            sender,
            receiver,
            sender_addr,
            receiver_addr,
            to_receiver: VecDeque::new(),
            to_sender: VecDeque::new(),
            link_free: now,
            arena: Arena::new(256 << 10, 64),
            chunk: Bytes::from(vec![0x68; CHUNK]),
            buf: Vec::new(),
            pieces: Vec::new(),
            datagram: Vec::new(),
            delivered: 0,
        };
        while !pair.sender.is_connected() {
            pair.step();
        }
        pair
    }

    /// Data packets the sender has sent (retransmissions included).
    pub fn packets_sent(&self) -> u64 {
        let stats = self.sender.stats();
        stats.packets_sent + stats.packets_retransmitted
    }

    /// Runs until the receiver has read at least `bytes` more.
    pub fn transfer(&mut self, bytes: u64) {
        let goal = self.delivered + bytes;
        while self.delivered < goal {
            self.step();
        }
    }

    /// One turn: write, send, deliver what is due, read, answer, then move the clock to the
    /// next event (at least a [`QUANTUM`] on).
    fn step(&mut self) {
        let now = self.now;
        if self.sender.is_connected() {
            while let Ok(n) = self.sender.write_bytes(&self.chunk) {
                if n < self.chunk.len() {
                    break;
                }
            }
        }
        self.send(true);
        while let Some((_, d)) = due(&mut self.to_receiver, now) {
            self.receiver
                .handle_datagram_bytes(now, self.sender_addr, &d);
        }
        while let Some((_, d)) = due(&mut self.to_sender, now) {
            self.sender
                .handle_datagram_bytes(now, self.receiver_addr, &d);
        }
        loop {
            match self.receiver.read_chunk(usize::MAX) {
                Ok(chunk) if !chunk.is_empty() => self.delivered += chunk.len() as u64,
                Ok(_) | Err(StreamError::Blocked) => break,
                Err(e) => panic!("reading: {e}"),
            }
        }
        self.send(false);
        for conn in [&mut self.sender, &mut self.receiver] {
            if conn.poll_timeout().is_some_and(|t| t <= now) {
                conn.handle_timeout(now);
            }
        }
        let next = [
            self.to_receiver.front().map(|(due, _)| *due),
            self.to_sender.front().map(|(due, _)| *due),
            self.sender.poll_timeout(),
            self.receiver.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min();
        self.now = next.unwrap_or(now).max(now + QUANTUM);
    }

    /// Puts what one side wants to send on the wire, one datagram per segment.
    fn send(&mut self, from_sender: bool) {
        let now = self.now;
        loop {
            self.buf.clear();
            self.pieces.clear();
            let conn = if from_sender {
                &mut self.sender
            } else {
                &mut self.receiver
            };
            let Some(t) = conn.poll_transmit_gather(now, &mut self.buf, &mut self.pieces) else {
                return;
            };
            self.datagram.clear();
            for piece in &self.pieces {
                match *piece {
                    Piece::Buf { start, len } => self
                        .datagram
                        .extend_from_slice(&self.buf[start..start + len]),
                    Piece::Sent { offset, len } => {
                        let datagram = &mut self.datagram;
                        assert!(conn.sent_payload(offset, len, |chunk, range| {
                            datagram.extend_from_slice(&chunk[range]);
                        }));
                    }
                }
            }
            let step = t.segment_size.unwrap_or(self.datagram.len()).max(1);
            for segment in self.datagram.chunks(step) {
                let bytes = self.arena.copy(segment);
                if from_sender {
                    let start = self.link_free.max(now);
                    self.link_free = start + Duration::from_secs_f64(segment.len() as f64 / RATE);
                    self.to_receiver.push_back((self.link_free + DELAY, bytes));
                } else {
                    self.to_sender.push_back((now + DELAY, bytes));
                }
            }
        }
    }
}

/// The first datagram of `queue` if it is due at `now`.
fn due(queue: &mut VecDeque<(Instant, Bytes)>, now: Instant) -> Option<(Instant, Bytes)> {
    if queue.front().is_some_and(|(due, _)| *due <= now) {
        queue.pop_front()
    } else {
        None
    }
}
