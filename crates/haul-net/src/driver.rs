//! The endpoint: one socket, its connections, and the I/O thread that drives them.

use crate::recv_pool::RecvPool;
use crate::socket::{IoScratch, Offloads, Outgoing, UdpSocket, BATCH, MAX_SEND};
use crate::stream::Stream;
use bytes::Bytes;
use haul_proto::secure::PresharedKey;
use haul_proto::{CloseReason, Connection, ConnectionConfig, DatagramEvent, EndpointConfig, Piece};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;
use std::io;
use std::io::IoSlice;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Longest the I/O thread sleeps without a timer.
const IDLE_POLL: Duration = Duration::from_millis(100);
/// Shortest sleep: deadlines closer than this are served in a burst instead of a wake-up each.
/// At 10 Gbit/s 100 µs is ~85 packets, two GSO batches.
const PACING_QUANTUM: Duration = Duration::from_micros(100);

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
    pub(crate) cond: Condvar,
    socket: UdpSocket,
    waker: EventFd,
    /// The last [`Inner::round`] whose transmits the kernel has taken.
    sent_round: AtomicU64,
}

pub(crate) struct Inner {
    endpoint: haul_proto::Endpoint,
    /// By local id (ids the endpoint chose: a fast non-keyed hash is safe).
    pub(crate) conns: FxHashMap<u32, Connection>,
    accept_queue: VecDeque<u32>,
    /// Connections whose application handle is gone: removed once drained.
    released: FxHashSet<u32>,
    listen: bool,
    /// The I/O thread's turns under the lock: transmits gathered in turn `n` are sent once
    /// [`Shared::sent_round`] reaches `n`.
    round: u64,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wakes the I/O thread (after the application queued data or closed something).
    pub(crate) fn wake(&self) {
        self.waker.signal();
    }

    /// Lets go of the lock and waits until everything gathered so far (packets the
    /// connections count as sent) is in the kernel's hands: the I/O thread sends without the
    /// lock, a moment after gathering. At most `timeout`.
    pub(crate) fn wait_sent(&self, guard: MutexGuard<'_, Inner>, timeout: Duration) {
        let round = guard.round;
        drop(guard);
        let deadline = Instant::now() + timeout;
        while self.sent_round.load(Ordering::Acquire) < round && Instant::now() < deadline {
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
            }),
            cond: Condvar::new(),
            socket,
            waker: EventFd::new()?,
            sent_round: AtomicU64::new(0),
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
            let (id, conn) = start(&mut inner.endpoint, Instant::now(), peer);
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

/// Transmits gathered under the lock: headers and control packets in `buf`, data payloads as
/// parts of their connections' send buffers (shared, not copied), then sent by one
/// scatter-gather batch after the lock is let go, so that the kernel's copy of the payloads
/// (the only one) runs while the application may write more.
#[derive(Default)]
struct TxQueue {
    buf: Vec<u8>,
    /// Every transmit's pieces, in order.
    pieces: Vec<TxPiece>,
    /// Every transmit, its slices indexing `pieces`.
    transmits: Vec<Outgoing>,
    /// Scratch for one transmit's pieces as the connection gives them.
    gathered: Vec<Piece>,
    /// Send-buffer chunks the payloads are cut from, one reference each for the whole batch.
    chunks: Vec<Bytes>,
}

/// Part of a datagram to send.
enum TxPiece {
    /// `len` bytes at `start` of [`TxQueue::buf`].
    Buf { start: usize, len: usize },
    /// Payload bytes: `len` bytes at `start` of [`TxQueue::chunks`]`[chunk]`.
    Shared {
        chunk: usize,
        start: usize,
        len: usize,
    },
}

impl TxQueue {
    fn clear(&mut self) {
        self.buf.clear();
        self.pieces.clear();
        self.transmits.clear();
        self.chunks.clear();
    }

    /// Appends everything `conn` wants to send now.
    fn gather(&mut self, conn: &mut Connection, now: Instant) {
        loop {
            self.gathered.clear();
            let Some(t) = conn.poll_transmit_gather(now, &mut self.buf, &mut self.gathered) else {
                return;
            };
            let first = self.pieces.len();
            for piece in &self.gathered {
                match *piece {
                    Piece::Buf { start, len } => self.pieces.push(TxPiece::Buf { start, len }),
                    Piece::Sent { offset, len } => {
                        let (chunks, pieces) = (&mut self.chunks, &mut self.pieces);
                        // Always held: the connection cut these bytes a moment ago.
                        conn.sent_payload(offset, len, |chunk, range| {
                            // Consecutive packets come from the same chunk: one reference
                            // for all of them.
                            let held = chunks.last().is_some_and(|c| {
                                c.as_ptr() == chunk.as_ptr() && c.len() == chunk.len()
                            });
                            if !held {
                                chunks.push(chunk.clone());
                            }
                            pieces.push(TxPiece::Shared {
                                chunk: chunks.len() - 1,
                                start: range.start,
                                len: range.len(),
                            });
                        });
                    }
                }
            }
            self.transmits.push(Outgoing {
                dest: t.destination,
                slices: first..self.pieces.len(),
                segment: t.segment_size,
            });
        }
    }

    /// Queues a datagram the endpoint answered itself (its bytes at `start..` of `buf`).
    fn push_response(&mut self, dest: SocketAddr, start: usize) {
        let first = self.pieces.len();
        let len = self.buf.len() - start;
        self.pieces.push(TxPiece::Buf { start, len });
        self.transmits.push(Outgoing {
            dest,
            slices: first..first + 1,
            segment: None,
        });
    }

    /// Sends every gathered transmit.
    fn send(&self, socket: &UdpSocket, io: &mut IoScratch) {
        if self.transmits.is_empty() {
            return;
        }
        let slices: Vec<IoSlice<'_>> = self
            .pieces
            .iter()
            .map(|piece| match piece {
                TxPiece::Buf { start, len } => IoSlice::new(&self.buf[*start..*start + *len]),
                TxPiece::Shared { chunk, start, len } => {
                    IoSlice::new(&self.chunks[*chunk][*start..*start + *len])
                }
            })
            .collect();
        if let Err(e) = socket.send_all(&slices, &self.transmits, io) {
            tracing::debug!("send: {e}");
        }
    }
}

/// The I/O thread: receive a batch, then (under the lock) dispatch it, run timers and gather
/// transmits, then (without it) send them and sleep until the next event.
fn io_loop(shared: Arc<Shared>) {
    let mut pool = RecvPool::default();
    let mut received = Vec::with_capacity(BATCH);
    let mut datagrams: Vec<(SocketAddr, Bytes, Option<usize>)> = Vec::with_capacity(BATCH);
    let mut tx = TxQueue::default();
    let mut scratch = Vec::new();
    let mut io = IoScratch::default();
    loop {
        match shared.socket.recv_many(&mut pool, &mut received, &mut io) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => received.clear(),
            Err(e) => {
                // ICMP errors (port unreachable) surface here; the protocol's timers decide
                // when a peer is gone.
                tracing::trace!("recv: {e}");
                received.clear();
            }
        }
        // Outside the lock: only small messages are copied here (see RecvPool).
        datagrams.clear();
        datagrams.extend(
            received
                .iter()
                .enumerate()
                .map(|(i, r)| (r.from, pool.take(i, r.len), r.segment)),
        );
        let (timeout, exit, round, notify) = {
            let mut guard = shared.lock();
            let inner = &mut *guard;
            inner.round += 1;
            let now = Instant::now();
            for (from, message, segment) in &datagrams {
                let step = segment.unwrap_or(message.len()).max(1);
                for start in (0..message.len()).step_by(step) {
                    let range = start..(start + step).min(message.len());
                    dispatch(inner, now, *from, message, range, &mut scratch, &mut tx);
                }
            }
            let now = Instant::now();
            let mut notify = false;
            for conn in inner.conns.values_mut() {
                if conn.poll_timeout().is_some_and(|t| t <= now) {
                    conn.handle_timeout(now);
                }
                tx.gather(conn, now);
                // Blocked application calls wait for exactly these events.
                while conn.poll_event().is_some() {
                    notify = true;
                }
            }
            reap(inner);
            notify |= !inner.accept_queue.is_empty();
            let exit = Arc::strong_count(&shared) == 1 && inner.conns.is_empty();
            let next = inner.conns.values().filter_map(|c| c.poll_timeout()).min();
            let timeout = next.map_or(IDLE_POLL, |t| t.saturating_duration_since(now));
            (
                timeout.clamp(PACING_QUANTUM, IDLE_POLL),
                exit,
                inner.round,
                notify,
            )
        };
        // After letting go of the lock: a thread woken under it would wait for it at once.
        if notify {
            shared.cond.notify_all();
        }
        tx.send(&shared.socket, &mut io);
        tx.clear();
        shared.sent_round.store(round, Ordering::Release);
        if exit {
            return;
        }
        // More may be waiting already: only sleep when the last receive came back short.
        if received.len() < BATCH {
            poll(shared.socket.raw_fd(), &shared.waker, timeout);
        }
    }
}

/// Routes one datagram, `message[range]`: to its connection, to the endpoint's answers, or to
/// the accept queue.
fn dispatch(
    inner: &mut Inner,
    now: Instant,
    from: SocketAddr,
    message: &Bytes,
    range: std::ops::Range<usize>,
    scratch: &mut Vec<u8>,
    tx: &mut TxQueue,
) {
    match inner
        .endpoint
        .handle(now, from, &message[range.clone()], scratch)
    {
        Some(DatagramEvent::Connection(id)) => {
            if let Some(conn) = inner.conns.get_mut(&id) {
                conn.handle_datagram_in(now, from, message, range);
            }
        }
        Some(DatagramEvent::NewConnection(id, conn)) => {
            inner.conns.insert(id, *conn);
            inner.accept_queue.push_back(id);
        }
        Some(DatagramEvent::Response(t)) => {
            let start = tx.buf.len();
            tx.buf.extend_from_slice(&scratch[..t.size]);
            tx.push_response(t.destination, start);
        }
        None => {}
    }
}

/// Drops connections that ended, sent everything, and have no application handle.
fn reap(inner: &mut Inner) {
    let done: Vec<u32> = inner
        .released
        .iter()
        .copied()
        .filter(|id| inner.conns.get(id).is_none_or(|c| c.is_drained()))
        .collect();
    for id in done {
        inner.released.remove(&id);
        inner.conns.remove(&id);
        inner.endpoint.forget(id);
    }
}

/// Sleeps until the socket is readable, the waker fires, or `timeout` passes (µs precision).
fn poll(socket: i32, waker: &EventFd, timeout: Duration) {
    let mut fds = [
        libc::pollfd {
            fd: socket,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: waker.fd,
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: fds and ts are live for the call; no signal mask is changed.
    unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
    if fds[1].revents & libc::POLLIN != 0 {
        waker.clear();
    }
}

/// A Linux eventfd used to wake the I/O thread.
struct EventFd {
    fd: i32,
}

impl EventFd {
    fn new() -> io::Result<Self> {
        // SAFETY: plain system call.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { fd })
    }

    fn signal(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64.
        unsafe { libc::write(self.fd, &one as *const u64 as *const libc::c_void, 8) };
    }

    fn clear(&self) {
        let mut value: u64 = 0;
        // SAFETY: reads 8 bytes into a live u64.
        unsafe { libc::read(self.fd, &mut value as *mut u64 as *mut libc::c_void, 8) };
    }
}

impl Drop for EventFd {
    fn drop(&mut self) {
        // SAFETY: closes a descriptor this struct owns.
        unsafe { libc::close(self.fd) };
    }
}
