//! A simulated host for the integration tests: one endpoint, its connections, and a small
//! application that writes a deterministic byte stream and hashes what it reads.

#![allow(dead_code)] // each test file uses a different part of the harness

pub mod cubic;

use haul_proto::seq::SeqNo;
use haul_proto::{
    Connection, ConnectionConfig, DatagramEvent, Endpoint, EndpointConfig, Event, StreamError,
    Transmit,
};
use haul_sim::{Node, Outgoing};
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};
use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// The simulated hosts' wall clock when they are made: every host reads the same.
pub const WALL_CLOCK: Duration = Duration::from_secs(1_800_000_000);

/// Writes `total` pseudo-random bytes (from `seed`) and hashes them.
pub struct Source {
    rng: SmallRng,
    remaining: u64,
    chunk: Vec<u8>,
    offset: usize,
    pub hasher: blake3::Hasher,
    /// Close the connection once everything is written.
    pub close_when_done: bool,
}

impl Source {
    pub fn new(seed: u64, total: u64) -> Self {
        Self {
            rng: SmallRng::seed_from_u64(seed),
            remaining: total,
            chunk: Vec::new(),
            offset: 0,
            hasher: blake3::Hasher::new(),
            close_when_done: true,
        }
    }

    /// Writes as much as the connection takes; closes at the end if asked.
    fn pump(&mut self, conn: &mut Connection, now: Instant) {
        loop {
            if self.offset == self.chunk.len() {
                if self.remaining == 0 {
                    if self.close_when_done {
                        conn.close(now);
                        self.close_when_done = false;
                    }
                    return;
                }
                let n = self.remaining.min(64 << 10) as usize;
                self.chunk.resize(n, 0);
                self.rng.fill_bytes(&mut self.chunk);
                self.hasher.update(&self.chunk);
                self.remaining -= n as u64;
                self.offset = 0;
            }
            match conn.write(&self.chunk[self.offset..]) {
                Ok(n) => self.offset += n,
                Err(_) => return,
            }
        }
    }

    pub fn done(&self) -> bool {
        self.remaining == 0 && self.offset == self.chunk.len()
    }
}

/// Reads everything and hashes it.
#[derive(Default)]
pub struct Sink {
    pub hasher: blake3::Hasher,
    pub bytes: u64,
    pub eof: bool,
    buf: Vec<u8>,
}

impl Sink {
    fn pump(&mut self, conn: &mut Connection) {
        self.buf.resize(256 << 10, 0);
        loop {
            match conn.read(&mut self.buf) {
                Ok(0) => {
                    self.eof = true;
                    return;
                }
                Ok(n) => {
                    self.hasher.update(&self.buf[..n]);
                    self.bytes += n as u64;
                }
                Err(_) => return,
            }
        }
    }
}

/// One simulated machine.
pub struct Host {
    pub endpoint: Endpoint,
    pub conns: BTreeMap<u32, Connection>,
    pub accepted: Vec<u32>,
    pub events: Vec<(u32, Event)>,
    responses: VecDeque<(Transmit, Vec<u8>)>,
    scratch: Vec<u8>,
    /// Stream written on every connection of this host (clients and accepted ones).
    pub source: Option<Source>,
    /// Stream read from every connection of this host.
    pub sink: Sink,
    /// Whether to run the stream application (message tests drive connections themselves).
    pub auto_app: bool,
    /// Every datagram this host received, when set (for replay tests).
    pub tap: Option<Tap>,
    /// When the host was made: log lines carry the simulated time since (see [`log_from_env`]).
    start: Instant,
}

/// Datagrams a host received, shared with whoever replays them.
pub type Tap = std::rc::Rc<std::cell::RefCell<Vec<Vec<u8>>>>;

impl Host {
    pub fn new(config: ConnectionConfig, listen: bool, seed: u64, now: Instant) -> Self {
        let endpoint = Endpoint::new(
            EndpointConfig {
                connection: config,
                listen,
                seed,
                accept_keys: Vec::new(),
                wall_clock: Some(WALL_CLOCK),
            },
            now,
        );
        Self {
            endpoint,
            conns: BTreeMap::new(),
            accepted: Vec::new(),
            events: Vec::new(),
            responses: VecDeque::new(),
            scratch: Vec::new(),
            source: None,
            sink: Sink::default(),
            auto_app: true,
            tap: None,
            start: now,
        }
    }

    pub fn connect(&mut self, now: Instant, peer: SocketAddr) -> u32 {
        let (id, conn) = self.endpoint.connect(now, peer);
        self.conns.insert(id, conn);
        id
    }

    pub fn connect_with(
        &mut self,
        now: Instant,
        peer: SocketAddr,
        config: ConnectionConfig,
    ) -> u32 {
        let (id, conn) = self.endpoint.connect_with(now, peer, config);
        self.conns.insert(id, conn);
        id
    }

    pub fn connect_with_isn(&mut self, now: Instant, peer: SocketAddr, isn: SeqNo) -> u32 {
        let (id, conn) = self.endpoint.connect_with_isn(now, peer, isn);
        self.conns.insert(id, conn);
        id
    }

    pub fn rendezvous(&mut self, now: Instant, peer: SocketAddr) -> u32 {
        let (id, conn) = self.endpoint.rendezvous(now, peer);
        self.conns.insert(id, conn);
        id
    }

    /// The only connection (client side, or the single accepted one).
    pub fn conn(&mut self) -> &mut Connection {
        self.conns.values_mut().next().expect("a connection")
    }

    pub fn closed(&self) -> bool {
        !self.conns.is_empty() && self.conns.values().all(|c| c.close_reason().is_some())
    }

    fn app(&mut self, now: Instant) {
        for (&id, conn) in self.conns.iter_mut() {
            while let Some(ev) = conn.poll_event() {
                self.events.push((id, ev));
            }
            if !self.auto_app {
                continue;
            }
            if let Some(src) = self.source.as_mut() {
                if conn.is_connected() {
                    src.pump(conn, now);
                }
            }
            self.sink.pump(conn);
        }
    }
}

impl Node for Host {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        if let Some(tap) = &self.tap {
            tap.borrow_mut().push(data.to_vec());
        }
        match self.endpoint.handle(now, from, data, &mut self.scratch) {
            Some(DatagramEvent::Connection(id)) => {
                if let Some(conn) = self.conns.get_mut(&id) {
                    let _span = conn_span(id, now - self.start).entered();
                    conn.handle_datagram(now, from, data);
                }
            }
            Some(DatagramEvent::NewConnection(id, conn)) => {
                self.conns.insert(id, *conn);
                self.accepted.push(id);
            }
            Some(DatagramEvent::Response(t)) => {
                self.responses
                    .push_back((t, self.scratch[..t.size].to_vec()));
            }
            None => {}
        }
        self.app(now);
    }

    fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Outgoing> {
        buf.clear();
        if let Some((t, bytes)) = self.responses.pop_front() {
            buf.extend_from_slice(&bytes);
            return Some(Outgoing {
                destination: t.destination,
                segment_size: None,
            });
        }
        for (&id, conn) in self.conns.iter_mut() {
            let _span = conn_span(id, now - self.start).entered();
            if let Some(t) = conn.poll_transmit(now, buf) {
                return Some(Outgoing {
                    destination: t.destination,
                    segment_size: t.segment_size,
                });
            }
        }
        None
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.conns.values().filter_map(|c| c.poll_timeout()).min()
    }

    fn handle_timeout(&mut self, now: Instant) {
        for (&id, conn) in self.conns.iter_mut() {
            if conn.poll_timeout().is_some_and(|t| t <= now) {
                let _span = conn_span(id, now - self.start).entered();
                conn.handle_timeout(now);
            }
        }
        self.app(now);
    }
}

/// The span a connection's log lines carry: its id and the simulated time (seconds).
fn conn_span(id: u32, since_start: std::time::Duration) -> tracing::Span {
    tracing::debug_span!("conn", id, t = since_start.as_secs_f64())
}

/// Prints the protocol's log lines to stderr when `HAUL_LOG` holds a filter (for example
/// `HAUL_LOG=haul_proto::cc=debug`), each with its connection and simulated time.
pub fn log_from_env() {
    if let Ok(filter) = std::env::var("HAUL_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .without_time()
            .try_init();
    }
}

pub fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// Whether a stream error means "try later".
pub fn is_blocked(e: &StreamError) -> bool {
    matches!(e, StreamError::Blocked)
}
