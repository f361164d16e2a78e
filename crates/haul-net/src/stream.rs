//! A connection as the application sees it: blocking, `Read` + `Write`.

use crate::driver::Shared;
use crate::driver::{Endpoint, NetConfig, NetError};
use bytes::{Buf, Bytes};
use haul_proto::secure::PresharedKey;
use haul_proto::{CloseReason, Connection, Stats, StreamError};
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a blocked call sleeps before checking again (it is woken sooner by progress).
const WAIT_SLICE: Duration = Duration::from_millis(50);
/// Longest `finish` waits for the I/O thread to hand gathered packets to the kernel (it takes
/// microseconds; the bound only guards against a thread that is gone).
const SEND_GRACE: Duration = Duration::from_secs(1);
/// Most bytes `read_chunk` takes per lock acquisition (a chunk is one packet).
const TAKE_BYTES: usize = 1 << 20;
/// Most bytes copied per lock acquisition, so the I/O thread is never held up long.
const COPY_SLICE: usize = 256 << 10;

/// A reliable byte stream over haul. Dropping the last handle to it closes it gracefully in the
/// background; call [`Stream::finish`] to wait until the peer has everything.
pub struct Stream {
    handle: Arc<Handle>,
    shared: Arc<Shared>,
    id: u32,
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
    /// Chunks [`Stream::read_chunk`] took from the connection in one go and has not handed out
    /// yet (this handle's: reads through it return them first).
    taken: VecDeque<Bytes>,
}

/// The connection behind every clone of a [`Stream`]; closes it when the last one goes.
struct Handle {
    shared: Arc<Shared>,
    id: u32,
    peer: SocketAddr,
    peer_key: Option<PresharedKey>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        if let Some(conn) = self.shared.lock().conns.get_mut(&self.id) {
            conn.close(Instant::now());
        }
        self.shared.release(self.id);
    }
}

impl Stream {
    pub(crate) fn new(
        shared: Arc<Shared>,
        id: u32,
        peer: SocketAddr,
        peer_key: Option<PresharedKey>,
    ) -> Self {
        Self {
            handle: Arc::new(Handle {
                shared: Arc::clone(&shared),
                id,
                peer,
                peer_key,
            }),
            shared,
            id,
            read_timeout: None,
            write_timeout: None,
            taken: VecDeque::new(),
        }
    }

    /// Another handle to the same connection, e.g. to read in one thread and write in another.
    /// The connection closes when the last handle is dropped.
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(Stream {
            handle: Arc::clone(&self.handle),
            shared: Arc::clone(&self.shared),
            id: self.id,
            read_timeout: self.read_timeout,
            write_timeout: self.write_timeout,
            taken: VecDeque::new(),
        })
    }

    /// Waits until everything written so far was acknowledged by the peer, without closing. If
    /// the peer closes first, succeeds only if it had acknowledged every byte.
    pub fn wait_flushed(&self) -> io::Result<()> {
        let mut inner = self.shared.lock();
        loop {
            let Some(conn) = inner.conns.get(&self.id) else {
                return Err(io::Error::new(io::ErrorKind::BrokenPipe, "connection gone"));
            };
            if conn.is_flushed() {
                return Ok(());
            }
            match conn.close_reason() {
                Some(CloseReason::PeerClosed) => return acknowledged_before_peer_closed(conn),
                Some(reason) => return Err(closed_error(reason)),
                None => {}
            }
            inner = self.shared.wait(inner, WAIT_SLICE);
        }
    }

    /// Connects to a listener from a new endpoint on an ephemeral port, with default settings.
    pub fn connect(peer: SocketAddr) -> Result<Stream, NetError> {
        let local = if peer.is_ipv6() {
            "[::]:0"
        } else {
            "0.0.0.0:0"
        };
        let endpoint = Endpoint::bind(
            local.parse().expect("literal address"),
            NetConfig::default(),
        )?;
        endpoint.connect(peer)
    }

    /// Rendezvous from `local` with a peer doing the same towards this address (for peers that
    /// both sit behind NATs or firewalls that only let answers in).
    pub fn rendezvous(local: SocketAddr, peer: SocketAddr) -> Result<Stream, NetError> {
        let endpoint = Endpoint::bind(local, NetConfig::default())?;
        endpoint.rendezvous(peer)
    }

    /// Fails a write that waits longer than `timeout` for buffer space with
    /// [`io::ErrorKind::TimedOut`].
    pub fn set_write_timeout(&mut self, timeout: Option<Duration>) {
        self.write_timeout = timeout;
    }

    /// Starts a graceful close: what was written is still delivered, reads still work, further
    /// writes fail. [`Stream::finish`] does the same and waits for the peer to have everything.
    pub fn shutdown(&mut self) {
        if let Some(conn) = self.shared.lock().conns.get_mut(&self.id) {
            conn.close(Instant::now());
        }
        self.shared.wake();
    }

    /// Sends one message (message mode: bind the endpoint with a `Datagram` socket type).
    /// `ttl`: drop it rather than retransmit once it is this old; `in_order`: deliver it only
    /// after every earlier message.
    pub fn send_msg(
        &mut self,
        msg: &[u8],
        ttl: Option<Duration>,
        in_order: bool,
    ) -> io::Result<()> {
        let shared = &self.shared;
        self.blocking(self.write_timeout, Call::SendMsg, gone_for_writes, |conn| {
            let was_idle = !conn.has_unsent_data();
            conn.send_msg(Instant::now(), msg, ttl, in_order)?;
            if was_idle {
                shared.wake();
            }
            Ok(())
        })
    }

    /// Reads the next stream bytes without copying them: up to `max` bytes, the rest of one
    /// packet at most, in the memory they were received into (`Read::read` copies them into
    /// the caller's buffer instead). An empty chunk means the peer closed and everything was
    /// read (or `max` is 0, as `read` into an empty buffer); blocks like `read` (and honours
    /// its timeout). Example: the crate documentation.
    pub fn read_chunk(&mut self, max: usize) -> io::Result<Bytes> {
        if max == 0 {
            return Ok(Bytes::new());
        }
        if self.taken.is_empty() {
            // One packet per chunk: take up to TAKE_BYTES of them per hold of the lock.
            let mut taken = std::mem::take(&mut self.taken);
            let result = self.blocking(
                self.read_timeout,
                Call::Read,
                || Ok(()),
                |conn| {
                    let mut bytes = 0;
                    while bytes < TAKE_BYTES {
                        match conn.read_chunk(usize::MAX) {
                            Ok(chunk) if !chunk.is_empty() => {
                                bytes += chunk.len();
                                taken.push_back(chunk);
                            }
                            // The end of the stream: an empty chunk, once those before are out.
                            Ok(_) if bytes == 0 => return Ok(()),
                            Err(e) if bytes == 0 => return Err(e),
                            _ => break,
                        }
                    }
                    Ok(())
                },
            );
            self.taken = taken;
            result?;
        }
        let Some(mut chunk) = self.taken.pop_front() else {
            return Ok(Bytes::new());
        };
        if chunk.len() > max {
            self.taken.push_front(chunk.split_off(max));
        }
        Ok(chunk)
    }

    /// Writes all of `data` without copying it: the send buffer keeps `data`'s memory (a
    /// reference count) until the peer acknowledges it, and the kernel reads it from there
    /// (`Write::write` copies into the send buffer instead; chunks under 64 KiB are copied
    /// here too). Blocks like `write_all`. Example: the crate documentation.
    pub fn write_bytes(&mut self, mut data: Bytes) -> io::Result<()> {
        while !data.is_empty() {
            let n = self.queue(|conn| conn.write_bytes(&data))?;
            data = data.slice(n..);
        }
        Ok(())
    }

    /// Runs a write on the connection until it takes something, and wakes the I/O thread if
    /// the connection had nothing to send (a busy one already has a pacing deadline there).
    fn queue(
        &self,
        mut write: impl FnMut(&mut Connection) -> Result<usize, StreamError>,
    ) -> io::Result<usize> {
        let shared = &self.shared;
        self.blocking(self.write_timeout, Call::Write, gone_for_writes, |conn| {
            let was_idle = !conn.has_unsent_data();
            let n = write(conn)?;
            if was_idle {
                shared.wake();
            }
            Ok(n)
        })
    }

    /// Receives one message into `buf` (truncated if `buf` is short) and returns its length;
    /// 0 once the peer closed and every message was read.
    pub fn recv_msg(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.blocking(
            self.read_timeout,
            Call::RecvMsg,
            || Ok(0),
            |conn| conn.recv_msg(buf),
        )
    }

    /// Runs `op` on the connection until it stops answering `Blocked`, sleeping in between
    /// (woken by the events of whoever drives the endpoint; a read waiting for data receives
    /// for itself if no other thread does: `Shared::wait_readable`); `TimedOut` after
    /// `timeout`; `gone()` once the connection no longer exists.
    fn blocking<T>(
        &self,
        timeout: Option<Duration>,
        call: Call,
        gone: fn() -> io::Result<T>,
        mut op: impl FnMut(&mut Connection) -> Result<T, StreamError>,
    ) -> io::Result<T> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut inner = self.shared.lock();
        loop {
            let Some(conn) = inner.conns.get_mut(&self.id) else {
                return gone();
            };
            match op(conn) {
                Err(StreamError::Blocked) => {}
                other => return other.map_err(to_io),
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("{} timed out", call.name()),
                ));
            }
            inner = if matches!(call, Call::Read | Call::RecvMsg) {
                self.shared.wait_readable(inner, deadline)
            } else {
                self.shared.wait(inner, WAIT_SLICE)
            };
        }
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> SocketAddr {
        self.handle.peer
    }

    /// `haul` dialect: the pre-shared key this connection was established with. For a stream a
    /// listener accepted, which of its keys ([`crate::NetConfig::accept_keys`]) the client
    /// proved it holds; `None` in the `udt4` dialect.
    pub fn peer_key(&self) -> Option<&PresharedKey> {
        self.handle.peer_key.as_ref()
    }

    /// Fails a read that waits longer than `timeout` with [`io::ErrorKind::TimedOut`].
    pub fn set_read_timeout(&mut self, timeout: Option<Duration>) {
        self.read_timeout = timeout;
    }

    /// Counters and estimates of the connection.
    pub fn stats(&self) -> Stats {
        self.monitor().stats()
    }

    /// A handle that reads this connection's statistics from another thread.
    pub fn monitor(&self) -> Monitor {
        Monitor {
            shared: Arc::clone(&self.shared),
            id: self.id,
        }
    }

    /// Closes gracefully and waits until every byte written was acknowledged by the peer. If the
    /// peer closes first, succeeds only if it had acknowledged every byte.
    pub fn finish(&mut self) -> io::Result<()> {
        let mut inner = self.shared.lock();
        if let Some(conn) = inner.conns.get_mut(&self.id) {
            conn.close(Instant::now());
        }
        self.shared.wake();
        // Done when closed *and* the shutdown packets it queued are drained and sent: a
        // process that exits right after `finish` must not take its goodbye with it (the peer
        // would wait out its idle timeout). Drained means gathered by the I/O thread, which
        // sends a moment later without the lock: wait for that too.
        loop {
            let state = inner
                .conns
                .get(&self.id)
                .map(|c| (c.close_reason(), c.is_drained()));
            match state {
                Some((Some(CloseReason::LocalClose), true)) => {
                    self.shared.wait_sent(inner, SEND_GRACE);
                    return Ok(());
                }
                Some((Some(CloseReason::PeerClosed), true)) => {
                    let conn = inner.conns.get(&self.id).expect("looked up just now");
                    let result = acknowledged_before_peer_closed(conn);
                    self.shared.wait_sent(inner, SEND_GRACE);
                    return result;
                }
                Some((Some(reason), _))
                    if !matches!(reason, CloseReason::LocalClose | CloseReason::PeerClosed) =>
                {
                    return Err(closed_error(reason))
                }
                _ => inner = self.shared.wait(inner, WAIT_SLICE),
            }
        }
    }
}

/// A blocking call of a [`Stream`].
#[derive(Clone, Copy)]
enum Call {
    Read,
    RecvMsg,
    Write,
    SendMsg,
}

impl Call {
    fn name(self) -> &'static str {
        match self {
            Call::Read => "read",
            Call::RecvMsg => "recv_msg",
            Call::Write => "write",
            Call::SendMsg => "send_msg",
        }
    }
}

/// Reads a connection's statistics without owning the stream.
#[derive(Clone)]
pub struct Monitor {
    shared: Arc<Shared>,
    id: u32,
}

impl Monitor {
    /// Counters and estimates of the connection (zero once it is gone).
    pub fn stats(&self) -> Stats {
        self.shared
            .lock()
            .conns
            .get(&self.id)
            .map(|c| c.stats())
            .unwrap_or_default()
    }
}

fn gone_for_writes<T>() -> io::Result<T> {
    Err(io::Error::new(io::ErrorKind::BrokenPipe, "connection gone"))
}

/// A wait for delivery that the peer's close ended: delivered if the peer acknowledged every
/// byte before it closed.
fn acknowledged_before_peer_closed(conn: &Connection) -> io::Result<()> {
    match conn.unacknowledged_bytes() {
        0 => Ok(()),
        n => Err(io::Error::new(
            io::ErrorKind::BrokenPipe,
            format!("closed by the peer before it acknowledged the last {n} bytes"),
        )),
    }
}

fn closed_error(reason: CloseReason) -> io::Error {
    let kind = match reason {
        CloseReason::TimedOut
        | CloseReason::ConnectTimeout
        | CloseReason::KeyExchangeUnanswered => io::ErrorKind::TimedOut,
        CloseReason::Rejected => io::ErrorKind::ConnectionRefused,
        CloseReason::AuthFailed => io::ErrorKind::PermissionDenied,
        CloseReason::Unsupported => io::ErrorKind::Unsupported,
        CloseReason::PeerError(_) => io::ErrorKind::ConnectionReset,
        CloseReason::LocalClose | CloseReason::PeerClosed => io::ErrorKind::BrokenPipe,
    };
    io::Error::new(kind, reason)
}

fn to_io(e: StreamError) -> io::Error {
    match e {
        StreamError::Closed(r) => closed_error(r),
        other => io::Error::other(other),
    }
}

impl io::Read for Stream {
    /// Reads what has arrived: one copy, from the memory the datagrams were received into
    /// ([`Stream::read_chunk`] takes that memory without a copy).
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.taken.is_empty() {
            // What `read_chunk` took already comes first.
            let mut filled = 0;
            while let Some(chunk) = self.taken.front_mut() {
                let n = chunk.len().min(buf.len() - filled);
                buf[filled..filled + n].copy_from_slice(&chunk[..n]);
                chunk.advance(n);
                filled += n;
                if !chunk.is_empty() {
                    break;
                }
                self.taken.pop_front();
            }
            return Ok(filled);
        }
        // Freed buffer space reaches the sender with the next periodic ACK.
        let len = buf.len().min(COPY_SLICE);
        self.blocking(
            self.read_timeout,
            Call::Read,
            || Ok(0),
            |conn| conn.read(&mut buf[..len]),
        )
    }
}

impl io::Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let chunk = &buf[..buf.len().min(COPY_SLICE)];
        self.queue(|conn| conn.write(chunk))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.shared.wake();
        Ok(())
    }
}
