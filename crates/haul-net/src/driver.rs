//! The endpoint: one socket, its connections, and the I/O thread that drives them.

use crate::socket::{wall_clock, Offloads, UdpSocket, BATCH, MAX_SEND};
use crate::stream::Stream;
use crate::turn::{turn, Outbox, SocketReader, IDLE_POLL};
use crate::wake::{poll, IoTurn, ReaderClaim, Waker};
use haul_proto::secure::PresharedKey;
use haul_proto::{CloseReason, Connection, ConnectionConfig, EndpointConfig};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};
use thiserror::Error;

/// How long the I/O thread waits for a reader that holds the socket's receiving state but has
/// not claimed it yet (it does so at once).
const HANDOVER: Duration = Duration::from_micros(20);

/// Settings of an endpoint.
#[derive(Debug, Clone)]
pub struct NetConfig {
    /// Settings of every connection.
    pub connection: ConnectionConfig,
    /// Accept incoming connections.
    pub listen: bool,
    /// Kernel socket buffer size in bytes (should reach the bandwidth-delay product).
    pub socket_buffer: usize,
    /// Batching to try; unsupported offloads fall back to one datagram per call.
    pub offloads: Offloads,
    /// `haul` dialect, listening: keys a client may prove besides the dialect's own;
    /// [`Stream::peer_key`] tells an accepted stream which one it was.
    pub accept_keys: Vec<PresharedKey>,
}

impl Default for NetConfig {
    fn default() -> Self {
        Self {
            connection: ConnectionConfig::default(),
            listen: false,
            socket_buffer: 64 << 20,
            offloads: Offloads {
                gso: true,
                gro: true,
            },
            accept_keys: Vec::new(),
        }
    }
}

impl NetConfig {
    /// The default settings, accepting incoming connections.
    pub fn listener() -> Self {
        Self {
            listen: true,
            ..Self::default()
        }
    }
}

/// An endpoint that accepts connections: [`Endpoint`] bound with [`NetConfig::listener`].
pub struct Listener {
    endpoint: Endpoint,
}

impl Listener {
    /// Binds `addr` with default settings and starts accepting.
    pub fn bind(addr: SocketAddr) -> Result<Self, NetError> {
        Self::bind_with(addr, NetConfig::listener())
    }

    /// Binds `addr` with `config` (its `listen` flag is forced on).
    pub fn bind_with(addr: SocketAddr, config: NetConfig) -> Result<Self, NetError> {
        let config = NetConfig {
            listen: true,
            ..config
        };
        Ok(Self {
            endpoint: Endpoint::bind(addr, config)?,
        })
    }

    /// Waits for the next incoming connection.
    pub fn accept(&self) -> Result<Stream, NetError> {
        self.endpoint.accept()
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.endpoint.local_addr()
    }

    /// The endpoint underneath (it can also open outgoing connections).
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }
}

/// Errors of the driver.
#[derive(Debug, Error)]
pub enum NetError {
    /// The socket failed.
    #[error("UDP socket error: {0}")]
    Io(#[from] io::Error),
    /// The handshake failed.
    #[error("cannot connect to {peer}: {reason}")]
    Connect {
        /// Who we tried to reach.
        peer: SocketAddr,
        /// What happened.
        reason: CloseReason,
    },
    /// `accept` on an endpoint that was not bound with `listen`.
    #[error("this endpoint does not accept connections (bind it with NetConfig::listener())")]
    NotListening,
}

/// State shared by the I/O thread and the application's handles.
pub(crate) struct Shared {
    pub(crate) inner: Mutex<Inner>,
    cond: Condvar,
    pub(crate) socket: UdpSocket,
    /// Wakes the I/O thread.
    waker: Waker,
    /// Reading the socket: held by the thread that does (the I/O thread, or a reader).
    reader: Mutex<SocketReader>,
    /// Whether a reader has the socket, and for how long.
    claim: ReaderClaim,
    /// Wakes a reader that waits on the socket (for events that come from elsewhere).
    reader_waker: Waker,
    /// Turns whose transmits are gathered and not yet in the kernel's hands.
    unsent: Mutex<Vec<u64>>,
}

pub(crate) struct Inner {
    pub(crate) endpoint: haul_proto::Endpoint,
    /// By local id (ids the endpoint chose: a fast non-keyed hash is safe).
    pub(crate) conns: FxHashMap<u32, Connection>,
    pub(crate) accept_queue: VecDeque<u32>,
    /// Connections whose application handle is gone: removed once drained.
    pub(crate) released: FxHashSet<u32>,
    listen: bool,
    /// Turns taken under the lock (by the I/O thread or a reader), numbered.
    pub(crate) round: u64,
    /// Readers waiting on the condition variable for data.
    readers_waiting: usize,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wakes the I/O thread (after the application queued data or closed something).
    pub(crate) fn wake(&self) {
        self.waker.signal();
    }

    /// Wakes every blocked application call (after events), and a reader waiting on the socket
    /// unless the events come from its own turn.
    pub(crate) fn notify(&self, by_reader: bool) {
        self.cond.notify_all();
        if !by_reader && self.claim.driving() {
            self.reader_waker.signal();
        }
    }

    /// Turn `round` gathered transmits (under the lock): [`Shared::wait_sent`] waits for them.
    pub(crate) fn sending(&self, round: u64) {
        self.unsent
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(round);
    }

    /// Turn `round`'s transmits are in the kernel's hands.
    pub(crate) fn sent(&self, round: u64) {
        self.unsent
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|&r| r != round);
    }

    /// Lets go of the lock and waits until everything gathered so far (packets the
    /// connections count as sent) is in the kernel's hands: turns send without the lock, a
    /// moment after gathering. At most `timeout`.
    pub(crate) fn wait_sent(&self, guard: MutexGuard<'_, Inner>, timeout: Duration) {
        let round = guard.round;
        drop(guard);
        let deadline = Instant::now() + timeout;
        let pending = || {
            let unsent = self.unsent.lock().unwrap_or_else(|e| e.into_inner());
            unsent.iter().any(|&r| r <= round)
        };
        while pending() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    /// Waits for the I/O thread to report progress, at most `timeout`.
    pub(crate) fn wait<'a>(
        &self,
        guard: MutexGuard<'a, Inner>,
        timeout: Duration,
    ) -> MutexGuard<'a, Inner> {
        match self.cond.wait_timeout(guard, timeout) {
            Ok((g, _)) => g,
            Err(e) => e.into_inner().0,
        }
    }

    /// A read found nothing (under `guard`): receives for it, reading the socket in this
    /// thread if no other thread does (a turn, then a sleep on the socket if the turn brought
    /// nothing), or else waits for whoever does. Returns for the read to look again; at most
    /// until `deadline`.
    pub(crate) fn wait_readable<'a>(
        &'a self,
        mut guard: MutexGuard<'a, Inner>,
        deadline: Option<Instant>,
    ) -> MutexGuard<'a, Inner> {
        let now = Instant::now();
        let timeout = deadline.map_or(IDLE_POLL, |d| {
            d.saturating_duration_since(now).min(IDLE_POLL)
        });
        let Some(mut reader) = self.try_reader() else {
            guard.readers_waiting += 1;
            let mut guard = self.wait(guard, timeout);
            guard.readers_waiting -= 1;
            return guard;
        };
        self.claim.drive();
        drop(guard);
        let SocketReader { inbox, outbox } = &mut *reader;
        if turn(self, Some(inbox), outbox, true).received == 0 {
            // Timers are the I/O thread's: this thread waits for packets and events only.
            poll(Some(self.socket.raw_fd()), &self.reader_waker, timeout);
            turn(self, Some(inbox), outbox, true);
        }
        self.claim.let_go(Instant::now());
        drop(reader);
        let guard = self.lock();
        if guard.readers_waiting > 0 {
            // One of them reads the socket next, if this reader does not come back.
            self.cond.notify_all();
        }
        guard
    }

    /// The socket's receiving state, unless another thread reads the socket now.
    fn try_reader(&self) -> Option<MutexGuard<'_, SocketReader>> {
        match self.reader.try_lock() {
            Ok(guard) => Some(guard),
            // A panic elsewhere left it between turns: it is still consistent.
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    pub(crate) fn release(&self, id: u32) {
        self.lock().released.insert(id);
        self.wake();
    }
}

/// One UDP socket and its connections. Cheap to share: clone the handles it returns.
pub struct Endpoint {
    shared: Arc<Shared>,
    local: SocketAddr,
}

impl Endpoint {
    /// Binds `addr` (port 0 picks one) and starts the I/O thread.
    pub fn bind(addr: SocketAddr, mut config: NetConfig) -> Result<Self, NetError> {
        let socket = UdpSocket::bind(addr, config.socket_buffer, config.offloads)?;
        // One transmit is one GSO send: it must fit in a UDP datagram.
        config.connection.max_batch_bytes = config.connection.max_batch_bytes.min(MAX_SEND);
        let local = socket.local_addr()?;
        let mut seed = [0u8; 8];
        getrandom::getrandom(&mut seed).map_err(|e| io::Error::other(e.to_string()))?;
        let endpoint = haul_proto::Endpoint::new(
            EndpointConfig {
                connection: config.connection.clone(),
                listen: config.listen,
                seed: u64::from_le_bytes(seed),
                accept_keys: config.accept_keys.clone(),
                wall_clock: Some(wall_clock()),
            },
            Instant::now(),
        );
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner {
                endpoint,
                conns: FxHashMap::default(),
                accept_queue: VecDeque::new(),
                released: FxHashSet::default(),
                listen: config.listen,
                round: 0,
                readers_waiting: 0,
            }),
            cond: Condvar::new(),
            socket,
            waker: Waker::new()?,
            reader: Mutex::new(SocketReader::default()),
            claim: ReaderClaim::new(Instant::now()),
            reader_waker: Waker::new()?,
            unsent: Mutex::new(Vec::new()),
        });
        let io = Arc::clone(&shared);
        std::thread::Builder::new()
            .name(format!("haul-io {local}"))
            .spawn(move || io_loop(io))?;
        tracing::debug!(%local, offloads = ?shared.socket.offloads(), "endpoint bound");
        Ok(Self { shared, local })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Which offloads the socket uses now.
    pub fn offloads(&self) -> Offloads {
        self.shared.socket.offloads()
    }

    /// Connections alive on this endpoint (accepted, connecting, or closing).
    pub fn connection_count(&self) -> usize {
        self.shared.lock().conns.len()
    }

    /// The kernel receive buffer actually granted, in bytes.
    pub fn socket_buffer(&self) -> usize {
        self.shared.socket.recv_buffer()
    }

    /// Connects to a listener and waits for the handshake.
    pub fn connect(&self, peer: SocketAddr) -> Result<Stream, NetError> {
        self.open(peer, haul_proto::Endpoint::connect)
    }

    /// Connects to a peer that calls `rendezvous` towards this endpoint at about the same time.
    pub fn rendezvous(&self, peer: SocketAddr) -> Result<Stream, NetError> {
        self.open(peer, haul_proto::Endpoint::rendezvous)
    }

    /// Creates a connection with `start` and waits for its handshake.
    fn open(
        &self,
        peer: SocketAddr,
        start: fn(&mut haul_proto::Endpoint, Instant, SocketAddr) -> (u32, Connection),
    ) -> Result<Stream, NetError> {
        let id = {
            let mut inner = self.shared.lock();
            let now = Instant::now();
            // The request's key exchange carries the wall clock: read it afresh.
            inner.endpoint.set_wall_clock(now, wall_clock());
            let (id, conn) = start(&mut inner.endpoint, now, peer);
            inner.conns.insert(id, conn);
            id
        };
        self.established(id, peer)
    }

    fn established(&self, id: u32, peer: SocketAddr) -> Result<Stream, NetError> {
        self.shared.wake();
        let mut inner = self.shared.lock();
        loop {
            let conn = &inner.conns[&id];
            // A peer that accepted, sent and closed before this thread looked was connected:
            // what it sent waits to be read, as after a TCP connect.
            if conn.is_connected() || conn.close_reason() == Some(CloseReason::PeerClosed) {
                let key = conn.peer_key().cloned();
                drop(inner);
                return Ok(Stream::new(Arc::clone(&self.shared), id, peer, key));
            }
            if let Some(reason) = conn.close_reason() {
                inner.released.insert(id);
                return Err(NetError::Connect { peer, reason });
            }
            inner = self.shared.wait(inner, IDLE_POLL);
        }
    }

    /// Waits for the next incoming connection.
    pub fn accept(&self) -> Result<Stream, NetError> {
        let mut inner = self.shared.lock();
        if !inner.listen {
            return Err(NetError::NotListening);
        }
        loop {
            if let Some(id) = inner.accept_queue.pop_front() {
                // Requests are checked against the wall clock: keep it from drifting.
                inner.endpoint.set_wall_clock(Instant::now(), wall_clock());
                let conn = &inner.conns[&id];
                let (peer, key) = (conn.peer_addr(), conn.peer_key().cloned());
                drop(inner);
                return Ok(Stream::new(Arc::clone(&self.shared), id, peer, key));
            }
            inner = self.shared.wait(inner, IDLE_POLL);
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        // Stop accepting; live streams keep the I/O thread running until they are done.
        let mut inner = self.shared.lock();
        inner.listen = false;
        inner.endpoint.set_listening(false);
        drop(inner);
        self.shared.wake();
    }
}

/// The I/O thread: takes turns (reading the socket unless a reader does), then sleeps until the
/// next packet, timer or wake-up.
fn io_loop(shared: Arc<Shared>) {
    let mut out = Outbox::default();
    loop {
        let mut reader = if shared.claim.io_may_read(Instant::now()) {
            shared.try_reader()
        } else {
            None
        };
        let end = turn(
            &shared,
            reader.as_mut().map(|r| &mut r.inbox),
            &mut out,
            false,
        );
        let reading = reader.is_some();
        drop(reader);
        // Once the last handle is gone nobody can open another connection.
        if end.no_connections && Arc::strong_count(&shared) == 1 {
            return;
        }
        if reading {
            // More may be waiting already: only sleep when the last receive came back short.
            if end.received < BATCH {
                poll(Some(shared.socket.raw_fd()), &shared.waker, end.timeout);
            }
            continue;
        }
        match shared.claim.io_turn(Instant::now()) {
            // A reader is about to claim the socket.
            IoTurn::Read => poll(None, &shared.waker, HANDOVER),
            IoTurn::LeaveFor(lease) => poll(None, &shared.waker, end.timeout.min(lease)),
        }
    }
}
