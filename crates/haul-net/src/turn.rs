//! One turn of the driver: receive a batch (if this thread reads the socket), dispatch it, run
//! due timers, gather transmits under the lock, then send them without it. The I/O thread takes
//! turns, and so does a reader blocked for data (`crate::wake::ReaderClaim`).

use crate::driver::{Inner, Shared};
use crate::recv_pool::RecvPool;
use crate::socket::{IoScratch, Outgoing, Received, UdpSocket, BATCH};
use bytes::Bytes;
use haul_proto::{Connection, DatagramEvent, Piece};
use std::io;
use std::io::IoSlice;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Longest the I/O thread sleeps without a timer.
pub(crate) const IDLE_POLL: Duration = Duration::from_millis(100);
/// Shortest sleep: deadlines closer than this are served in a burst instead of a wake-up each.
/// At 10 Gbit/s 100 µs is ~85 packets, two GSO batches.
const PACING_QUANTUM: Duration = Duration::from_micros(100);

/// Reading the socket: whoever holds it (behind [`Shared`]'s lock for it) reads the socket,
/// from the receive through the dispatch, so batches are handled in the order they arrived.
#[derive(Default)]
pub(crate) struct SocketReader {
    pub(crate) inbox: Inbox,
    /// The transmits of a reader that takes turns (the I/O thread has an outbox of its own).
    pub(crate) outbox: Outbox,
}

/// What receiving needs between turns.
pub(crate) struct Inbox {
    pool: RecvPool,
    received: Vec<Received>,
    /// Each received message with its bytes.
    datagrams: Vec<(Received, Bytes)>,
    io: IoScratch,
}

impl Default for Inbox {
    fn default() -> Self {
        Self {
            pool: RecvPool::default(),
            received: Vec::with_capacity(BATCH),
            datagrams: Vec::with_capacity(BATCH),
            io: IoScratch::default(),
        }
    }
}

impl Inbox {
    /// Receives what is waiting, without blocking.
    fn receive(&mut self, socket: &UdpSocket) {
        match socket.recv_many(&mut self.pool, &mut self.received, &mut self.io) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.received.clear(),
            Err(e) => {
                // ICMP errors (port unreachable) surface here; the protocol's timers decide
                // when a peer is gone.
                tracing::trace!("recv: {e}");
                self.received.clear();
            }
        }
        // Outside the lock: only small messages are copied here (see RecvPool).
        self.datagrams.clear();
        let pool = &mut self.pool;
        self.datagrams.extend(
            self.received
                .iter()
                .enumerate()
                .map(|(i, r)| (*r, pool.take(i, r.len))),
        );
    }
}

/// What a thread that takes turns keeps between them to send.
#[derive(Default)]
pub(crate) struct Outbox {
    tx: TxQueue,
    io: IoScratch,
    /// The endpoint's answers to datagrams of no connection.
    scratch: Vec<u8>,
}

/// How a turn ended.
pub(crate) struct TurnEnd {
    /// Until the next timer (at least the pacing quantum, at most [`IDLE_POLL`]).
    pub(crate) timeout: Duration,
    /// The endpoint has no connections (with no handle either, the I/O thread may stop).
    pub(crate) no_connections: bool,
    /// Messages received in this turn.
    pub(crate) received: usize,
}

/// One turn: receive (with the `inbox` of the thread that reads the socket), dispatch, timers,
/// gather under the lock; then wake blocked calls and send without it. `by_reader`: the turn
/// is a reader's (it need not wake itself).
pub(crate) fn turn(
    shared: &Shared,
    mut inbox: Option<&mut Inbox>,
    out: &mut Outbox,
    by_reader: bool,
) -> TurnEnd {
    let mut received = 0;
    if let Some(inbox) = inbox.as_deref_mut() {
        inbox.receive(&shared.socket);
        received = inbox.received.len();
    }
    let (timeout, no_connections, notify, round) = {
        let mut guard = shared.lock();
        let inner = &mut *guard;
        inner.round += 1;
        if let Some(inbox) = inbox {
            for (r, message) in &inbox.datagrams {
                let step = r.segment.unwrap_or(message.len()).max(1);
                for start in (0..message.len()).step_by(step) {
                    let range = start..(start + step).min(message.len());
                    dispatch(inner, r.at, r.from, message, range, out);
                }
            }
        }
        let now = Instant::now();
        let mut notify = false;
        for conn in inner.conns.values_mut() {
            if conn.poll_timeout().is_some_and(|t| t <= now) {
                conn.handle_timeout(now);
            }
            out.tx.gather(conn, now);
            // Blocked application calls wait for exactly these events.
            while conn.poll_event().is_some() {
                notify = true;
            }
        }
        reap(inner);
        notify |= !inner.accept_queue.is_empty();
        let no_connections = inner.conns.is_empty();
        let next = inner.conns.values().filter_map(|c| c.poll_timeout()).min();
        let timeout = next.map_or(IDLE_POLL, |t| t.saturating_duration_since(now));
        let round = (!out.tx.transmits.is_empty()).then_some(inner.round);
        if let Some(round) = round {
            shared.sending(round);
        }
        (
            timeout.clamp(PACING_QUANTUM, IDLE_POLL),
            no_connections,
            notify,
            round,
        )
    };
    // After letting go of the lock: a thread woken under it would wait for it at once.
    if notify {
        shared.notify(by_reader);
    }
    if let Some(round) = round {
        out.tx.send(&shared.socket, &mut out.io);
        out.tx.clear();
        shared.sent(round);
    }
    TurnEnd {
        timeout,
        no_connections,
        received,
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

/// Routes one datagram, `message[range]`: to its connection, to the endpoint's answers, or to
/// the accept queue.
fn dispatch(
    inner: &mut Inner,
    now: Instant,
    from: SocketAddr,
    message: &Bytes,
    range: std::ops::Range<usize>,
    out: &mut Outbox,
) {
    match inner
        .endpoint
        .handle(now, from, &message[range.clone()], &mut out.scratch)
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
            let start = out.tx.buf.len();
            out.tx.buf.extend_from_slice(&out.scratch[..t.size]);
            out.tx.push_response(t.destination, start);
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
