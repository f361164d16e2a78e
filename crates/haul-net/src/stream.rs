//! A connection as the application sees it: blocking, `Read` + `Write`.

use crate::driver::Shared;
use haul_proto::{CloseReason, Stats, StreamError};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a blocked call sleeps before checking again (it is woken sooner by progress).
const WAIT_SLICE: Duration = Duration::from_millis(50);

/// A reliable byte stream over haul. Dropping it closes it gracefully in the background; call
/// [`Stream::finish`] to wait until the peer has everything.
pub struct Stream {
    shared: Arc<Shared>,
    id: u32,
    peer: SocketAddr,
    read_timeout: Option<Duration>,
}

impl Stream {
    pub(crate) fn new(shared: Arc<Shared>, id: u32, peer: SocketAddr) -> Self {
        Self {
            shared,
            id,
            peer,
            read_timeout: None,
        }
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> SocketAddr {
        self.peer
    }

    /// Fails a read that waits longer than `timeout` with [`io::ErrorKind::TimedOut`].
    pub fn set_read_timeout(&mut self, timeout: Option<Duration>) {
        self.read_timeout = timeout;
    }

    /// Counters and estimates of the connection.
    pub fn stats(&self) -> Stats {
        self.shared
            .lock()
            .conns
            .get(&self.id)
            .map(|c| c.stats())
            .unwrap_or_default()
    }

    /// Closes gracefully and waits until every byte written was acknowledged by the peer.
    pub fn finish(&mut self) -> io::Result<()> {
        let mut inner = self.shared.lock();
        if let Some(conn) = inner.conns.get_mut(&self.id) {
            conn.close(Instant::now());
        }
        self.shared.wake();
        loop {
            match inner.conns.get(&self.id).and_then(|c| c.close_reason()) {
                None => inner = self.shared.wait(inner, WAIT_SLICE),
                Some(CloseReason::LocalClose) | Some(CloseReason::PeerClosed) => return Ok(()),
                Some(reason) => return Err(closed_error(reason)),
            }
        }
    }
}

fn closed_error(reason: CloseReason) -> io::Error {
    let kind = match reason {
        CloseReason::TimedOut | CloseReason::ConnectTimeout => io::ErrorKind::TimedOut,
        CloseReason::Rejected => io::ErrorKind::ConnectionRefused,
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
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let deadline = self.read_timeout.map(|t| Instant::now() + t);
        let mut inner = self.shared.lock();
        loop {
            let Some(conn) = inner.conns.get_mut(&self.id) else {
                return Ok(0);
            };
            match conn.read(buf) {
                Ok(n) => {
                    // Reading frees receive buffer: the next ACK can open the window.
                    self.shared.wake();
                    return Ok(n);
                }
                Err(StreamError::Blocked) => {}
                Err(e) => return Err(to_io(e)),
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "read timed out"));
            }
            inner = self.shared.wait(inner, WAIT_SLICE);
        }
    }
}

impl io::Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut inner = self.shared.lock();
        loop {
            let Some(conn) = inner.conns.get_mut(&self.id) else {
                return Err(io::Error::new(io::ErrorKind::BrokenPipe, "connection gone"));
            };
            match conn.write(buf) {
                Ok(n) => {
                    self.shared.wake();
                    return Ok(n);
                }
                Err(StreamError::Blocked) => self.shared.wake(),
                Err(e) => return Err(to_io(e)),
            }
            inner = self.shared.wait(inner, WAIT_SLICE);
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.shared.wake();
        Ok(())
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Some(conn) = self.shared.lock().conns.get_mut(&self.id) {
            conn.close(Instant::now());
        }
        self.shared.release(self.id);
    }
}
