//! The endpoint: one socket, its connections, and the I/O thread that drives them.

use crate::socket::{IoScratch, Offloads, Outgoing, UdpSocket, BATCH, MAX_RECV, MAX_SEND};
use crate::stream::Stream;
use haul_proto::{CloseReason, Connection, ConnectionConfig, DatagramEvent, EndpointConfig};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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
    /// Rounds of the I/O loop whose transmits have been handed to the kernel.
    pub(crate) rounds_sent: AtomicU64,
    /// Threads waiting for `rounds_sent` to move (the I/O thread wakes them after each round).
    pub(crate) round_waiters: AtomicUsize,
}

pub(crate) struct Inner {
    endpoint: haul_proto::Endpoint,
    /// By local id (ids the endpoint chose: a fast non-keyed hash is safe).
    pub(crate) conns: FxHashMap<u32, Connection>,
    accept_queue: VecDeque<u32>,
    /// Connections whose application handle is gone: removed once drained.
    released: FxHashSet<u32>,
    listen: bool,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wakes the I/O thread (after the application queued data or closed something).
    pub(crate) fn wake(&self) {
        self.waker.signal();
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
            }),
            cond: Condvar::new(),
            socket,
            waker: EventFd::new()?,
            rounds_sent: AtomicU64::new(0),
            round_waiters: AtomicUsize::new(0),
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
            if conn.is_connected() {
                drop(inner);
                return Ok(Stream::new(Arc::clone(&self.shared), id, peer));
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
                let peer = inner.conns[&id].peer_addr();
                drop(inner);
                return Ok(Stream::new(Arc::clone(&self.shared), id, peer));
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

/// Transmits gathered under the lock, sent after it is released.
#[derive(Default)]
struct TxQueue {
    buf: Vec<u8>,
    out: Vec<Outgoing>,
}

impl TxQueue {
    fn clear(&mut self) {
        self.buf.clear();
        self.out.clear();
    }

    /// Appends everything `conn` wants to send now.
    fn gather(&mut self, conn: &mut Connection, now: Instant) {
        loop {
            let offset = self.buf.len();
            let Some(t) = conn.poll_transmit(now, &mut self.buf) else {
                return;
            };
            self.out.push(Outgoing {
                dest: t.destination,
                offset,
                len: t.size,
                segment: t.segment_size,
            });
        }
    }
}

/// The I/O thread: receive a batch, then (under the lock) dispatch it, run timers and gather
/// transmits, then send them, then sleep until the next event. No system call holds the lock.
fn io_loop(shared: Arc<Shared>) {
    let mut pool = vec![0u8; BATCH * MAX_RECV];
    let mut received = Vec::with_capacity(BATCH);
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
        let (timeout, exit) = {
            let mut guard = shared.lock();
            let inner = &mut *guard;
            let now = Instant::now();
            for (i, r) in received.iter().enumerate() {
                let slot = &pool[i * MAX_RECV..i * MAX_RECV + r.len];
                for datagram in slot.chunks(r.segment.unwrap_or(r.len).max(1)) {
                    dispatch(inner, now, r.from, datagram, &mut scratch, &mut tx);
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
            if notify || !inner.accept_queue.is_empty() {
                shared.cond.notify_all();
            }
            let exit = Arc::strong_count(&shared) == 1 && inner.conns.is_empty();
            let next = inner.conns.values().filter_map(|c| c.poll_timeout()).min();
            let timeout = next.map_or(IDLE_POLL, |t| t.saturating_duration_since(now));
            (timeout.clamp(PACING_QUANTUM, IDLE_POLL), exit)
        };
        if let Err(e) = shared.socket.send_all(&tx.buf, &tx.out, &mut io) {
            tracing::debug!("send: {e}");
        }
        tx.clear();
        // Whoever waits for packets gathered in this round to leave (`Stream::finish`) may go.
        shared.rounds_sent.fetch_add(1, Ordering::Release);
        if shared.round_waiters.load(Ordering::Acquire) > 0 {
            // Taking the lock orders this wake-up after the waiter's check of `rounds_sent`.
            drop(shared.lock());
            shared.cond.notify_all();
        }
        if exit {
            return;
        }
        // More may be waiting already: only sleep when the last receive came back short.
        if received.len() < BATCH {
            poll(shared.socket.raw_fd(), &shared.waker, timeout);
        }
    }
}

fn dispatch(
    inner: &mut Inner,
    now: Instant,
    from: SocketAddr,
    datagram: &[u8],
    scratch: &mut Vec<u8>,
    tx: &mut TxQueue,
) {
    match inner.endpoint.handle(now, from, datagram, scratch) {
        Some(DatagramEvent::Connection(id)) => {
            if let Some(conn) = inner.conns.get_mut(&id) {
                conn.handle_datagram(now, from, datagram);
            }
        }
        Some(DatagramEvent::NewConnection(id, conn)) => {
            inner.conns.insert(id, *conn);
            inner.accept_queue.push_back(id);
        }
        Some(DatagramEvent::Response(t)) => {
            let offset = tx.buf.len();
            tx.buf.extend_from_slice(&scratch[..t.size]);
            tx.out.push(Outgoing {
                dest: t.destination,
                offset,
                len: t.size,
                segment: None,
            });
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
