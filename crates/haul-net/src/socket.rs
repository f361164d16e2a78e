//! The UDP socket: batched I/O with `sendmmsg`/`recvmmsg`, where each message may itself be a
//! batch of equal-size datagrams (UDP GSO on send, GRO on receive). Offloads are detected at run
//! time; a GSO send the kernel refuses switches the socket to one datagram per message for good.

use crate::recv_pool::RecvPool;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::io;
use std::io::IoSlice;
use std::mem::size_of;
use std::net::SocketAddr;
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Largest UDP payload of one receive, a GRO batch included.
pub const MAX_RECV: usize = 65_535;
/// Largest UDP payload of one send, a GSO batch included (IPv4: 65 535 − 20 − 8).
pub const MAX_SEND: usize = 65_507;
/// Most segments the kernel accepts in one GSO send.
const MAX_GSO_SEGMENTS: usize = 64;
/// Messages per `sendmmsg`/`recvmmsg` call.
pub const BATCH: usize = 64;
/// Control-message space per message: a GRO segment size (an i32) and a receive time stamp
/// (a `timespec`), each with its header, aligned.
const CMSG_SPACE: usize = 64;

/// How the socket moves packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offloads {
    /// Send a batch of equal-size datagrams as one message (`UDP_SEGMENT`).
    pub gso: bool,
    /// Receive coalesced datagrams as one message (`UDP_GRO`).
    pub gro: bool,
}

/// One received message: a datagram, or several of `segment` bytes each (the last may be short).
/// Message `i` of a batch is in slot `i` of the [`RecvPool`].
#[derive(Debug, Clone, Copy)]
pub struct Received {
    /// Sender.
    pub from: SocketAddr,
    /// Bytes in the message's slot.
    pub len: usize,
    /// Size of each coalesced datagram, when GRO merged several.
    pub segment: Option<usize>,
    /// When it arrived: the kernel's receive stamp (`SO_TIMESTAMPNS`) where there is a
    /// plausible one, else when it was read. Arrivals read in one batch keep their own times,
    /// which a receiver's capacity estimate needs (see `haul_proto`'s packet trains).
    pub at: Instant,
}

/// One message to send: the bytes of some consecutive slices, joined in order.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// Destination.
    pub dest: SocketAddr,
    /// Which of the slices given to [`UdpSocket::send_all`] hold its bytes.
    pub slices: Range<usize>,
    /// With several datagrams: the size of each (the last may be shorter).
    pub segment: Option<usize>,
}

/// A UDP socket with batched I/O.
#[derive(Debug)]
pub struct UdpSocket {
    socket: Socket,
    gso: AtomicBool,
    gro: bool,
}

impl UdpSocket {
    /// Binds a non-blocking socket, sizes its buffers and enables what `offloads` asks for.
    pub fn bind(addr: SocketAddr, buffer_bytes: usize, offloads: Offloads) -> io::Result<Self> {
        let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
        if addr.is_ipv6() {
            socket.set_only_v6(false).ok();
        }
        socket.bind(&addr.into())?;
        socket.set_nonblocking(true)?;
        let gro = offloads.gro && set_int_opt(&socket, libc::SOL_UDP, libc::UDP_GRO, 1).is_ok();
        // Best effort: without stamps, messages count as received when they are read (so do
        // the first ones after the kernel is first asked: it turns stamping on a moment later).
        let _ = set_int_opt(&socket, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1);
        let udp = Self {
            socket,
            gso: AtomicBool::new(offloads.gso),
            gro,
        };
        udp.set_buffers(buffer_bytes);
        Ok(udp)
    }

    /// Sizes the send and receive buffers: forced past `rmem_max`/`wmem_max` when privileged,
    /// otherwise as large as allowed, with a warning naming the sysctl to raise.
    pub fn set_buffers(&self, bytes: usize) {
        let want = bytes.min(i32::MAX as usize / 2) as i32;
        for (force, plain, name, sysctl) in [
            (
                libc::SO_RCVBUFFORCE,
                libc::SO_RCVBUF,
                "receive",
                "net.core.rmem_max",
            ),
            (
                libc::SO_SNDBUFFORCE,
                libc::SO_SNDBUF,
                "send",
                "net.core.wmem_max",
            ),
        ] {
            if set_int_opt(&self.socket, libc::SOL_SOCKET, force, want).is_ok() {
                continue;
            }
            let _ = set_int_opt(&self.socket, libc::SOL_SOCKET, plain, want);
            let got = get_int_opt(&self.socket, libc::SOL_SOCKET, plain).unwrap_or(0) / 2;
            if (got as usize) < bytes {
                tracing::warn!(
                    "UDP {name} buffer is {got} bytes, below the {bytes} wanted: raise {sysctl} \
                     (sysctl -w {sysctl}={bytes}) or run as root"
                );
            }
        }
    }

    /// The kernel's receive buffer size in bytes.
    pub fn recv_buffer(&self) -> usize {
        self.socket.recv_buffer_size().unwrap_or(0)
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket
            .local_addr()?
            .as_socket()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not an IP socket"))
    }

    /// The raw descriptor, for polling.
    pub fn raw_fd(&self) -> i32 {
        self.socket.as_raw_fd()
    }

    /// Which offloads are in use now.
    pub fn offloads(&self) -> Offloads {
        Offloads {
            gso: self.gso.load(Ordering::Relaxed),
            gro: self.gro,
        }
    }

    /// Sends every message of `out` (their bytes in `slices`, gathered by the kernel without a
    /// copy here), as few system calls as the kernel allows. A full socket buffer drops what
    /// does not fit, as a router would; the protocol recovers.
    pub fn send_all(
        &self,
        slices: &[IoSlice<'_>],
        out: &[Outgoing],
        scratch: &mut IoScratch,
    ) -> io::Result<()> {
        let IoScratch {
            messages,
            send_iovs,
            mmsg,
        } = scratch;
        messages.clear();
        send_iovs.clear();
        // Entry i is slices[i]; cuts of them are appended after.
        send_iovs.extend(slices.iter().map(|s| libc::iovec {
            iov_base: s.as_ptr() as *mut libc::c_void,
            iov_len: s.len(),
        }));
        let gso = self.gso.load(Ordering::Relaxed);
        for o in out {
            let dest = SockAddr::from(o.dest);
            let len: usize = slices[o.slices.clone()].iter().map(|s| s.len()).sum();
            match o.segment {
                Some(seg) if seg > 0 && seg < len && gso => {
                    let per_batch = (MAX_SEND / seg).clamp(1, MAX_GSO_SEGMENTS) * seg;
                    if len <= per_batch {
                        messages.push(Message::new(&dest, o.slices.clone(), Some(seg as u16)));
                    } else {
                        cut(send_iovs, o.slices.clone(), per_batch, |iov, n| {
                            let segment = (n > seg).then_some(seg as u16);
                            messages.push(Message::new(&dest, iov, segment));
                        });
                    }
                }
                Some(seg) if seg > 0 => cut(send_iovs, o.slices.clone(), seg, |iov, _| {
                    messages.push(Message::new(&dest, iov, None))
                }),
                _ => messages.push(Message::new(&dest, o.slices.clone(), None)),
            }
        }
        let mut sent = 0;
        while sent < messages.len() {
            let end = (sent + BATCH).min(messages.len());
            match self.sendmmsg(&messages[sent..end], send_iovs, mmsg) {
                Ok(n) => sent += n.max(1),
                Err(e) if gso_refused(&e) && messages[sent].segment.is_some() => {
                    tracing::info!("UDP GSO refused ({e}); sending one datagram per message");
                    self.gso.store(false, Ordering::Relaxed);
                    let rest: Vec<Message> = messages.drain(sent..).collect();
                    for m in rest {
                        let seg = m.segment.map_or(usize::MAX, usize::from);
                        cut(send_iovs, m.iov.clone(), seg, |iov, _| {
                            messages.push(Message::new(&m.addr, iov, None))
                        });
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn sendmmsg(
        &self,
        messages: &[Message],
        iovs: &mut [libc::iovec],
        bufs: &mut MmsgBuffers,
    ) -> io::Result<usize> {
        // Every vector gets its final length before any pointer into it is taken.
        bufs.controls.clear();
        bufs.controls.resize(messages.len(), [0u64; CMSG_SPACE / 8]);
        bufs.headers.clear();
        for (i, m) in messages.iter().enumerate() {
            // SAFETY: mmsghdr is plain data; every pointer set below outlives the call.
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            h.msg_hdr.msg_name = m.addr.as_ptr() as *mut libc::c_void;
            h.msg_hdr.msg_namelen = m.addr.len();
            h.msg_hdr.msg_iov = iovs[m.iov.clone()].as_mut_ptr();
            h.msg_hdr.msg_iovlen = m.iov.len();
            if let Some(seg) = m.segment {
                h.msg_hdr.msg_control = bufs.controls[i].as_mut_ptr() as *mut libc::c_void;
                // SAFETY: CMSG_SPACE only computes a size.
                h.msg_hdr.msg_controllen =
                    unsafe { libc::CMSG_SPACE(size_of::<u16>() as u32) } as usize;
                // SAFETY: the control buffer holds one cmsghdr with a u16.
                unsafe {
                    let cmsg = libc::CMSG_FIRSTHDR(&h.msg_hdr);
                    (*cmsg).cmsg_level = libc::SOL_UDP;
                    (*cmsg).cmsg_type = libc::UDP_SEGMENT;
                    (*cmsg).cmsg_len = libc::CMSG_LEN(size_of::<u16>() as u32) as usize;
                    std::ptr::write_unaligned(libc::CMSG_DATA(cmsg) as *mut u16, seg);
                }
            }
            bufs.headers.push(h);
        }
        loop {
            // SAFETY: headers point at live iovecs, addresses and control buffers.
            let n = unsafe {
                libc::sendmmsg(
                    self.socket.as_raw_fd(),
                    bufs.headers.as_mut_ptr(),
                    bufs.headers.len() as u32,
                    0,
                )
            };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Receives up to `BATCH` messages into `pool` with one system call; take each with
    /// [`RecvPool::take`]. Returns `WouldBlock` when nothing is waiting.
    pub fn recv_many(
        &self,
        pool: &mut RecvPool,
        out: &mut Vec<Received>,
        scratch: &mut IoScratch,
    ) -> io::Result<()> {
        out.clear();
        let bufs = &mut scratch.mmsg;
        // Every vector gets its final length before any pointer into it is taken.
        bufs.iovs.clear();
        bufs.iovs.extend(pool.iovecs());
        let slots = bufs.iovs.len();
        // SAFETY: sockaddr_storage is plain data.
        bufs.names.resize(slots, unsafe { std::mem::zeroed() });
        bufs.controls.clear();
        bufs.controls.resize(slots, [0u64; CMSG_SPACE / 8]);
        bufs.headers.clear();
        for i in 0..slots {
            // SAFETY: as above; the pointers outlive the call.
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            h.msg_hdr.msg_name = &mut bufs.names[i] as *mut _ as *mut libc::c_void;
            h.msg_hdr.msg_namelen = size_of::<libc::sockaddr_storage>() as u32;
            h.msg_hdr.msg_iov = &mut bufs.iovs[i];
            h.msg_hdr.msg_iovlen = 1;
            h.msg_hdr.msg_control = bufs.controls[i].as_mut_ptr() as *mut libc::c_void;
            h.msg_hdr.msg_controllen = CMSG_SPACE;
            bufs.headers.push(h);
        }
        let n = loop {
            // SAFETY: headers describe live buffers of the stated sizes.
            let n = unsafe {
                libc::recvmmsg(
                    self.socket.as_raw_fd(),
                    bufs.headers.as_mut_ptr(),
                    slots as u32,
                    0,
                    std::ptr::null_mut(),
                )
            };
            if n >= 0 {
                break n as usize;
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        };
        let clock = ArrivalClock::read();
        for (i, h) in bufs.headers.iter().enumerate().take(n) {
            let len = h.msg_len as usize;
            let (segment, stamp) = control(&h.msg_hdr);
            let segment = segment.filter(|&s| s < len);
            // SAFETY: the kernel wrote a socket address of msg_namelen bytes.
            let addr = unsafe { SockAddr::new(bufs.names[i], h.msg_hdr.msg_namelen) };
            if let Some(from) = addr.as_socket() {
                out.push(Received {
                    from,
                    len,
                    segment,
                    at: clock.arrival(stamp),
                });
            }
        }
        Ok(())
    }
}

/// Oldest kernel stamp taken as an arrival time; an older one (the wall clock stepped) counts
/// the message as received when it was read.
const MAX_STAMP_AGE: Duration = Duration::from_secs(1);

/// The time since the Unix epoch (zero if the system clock is set before it).
pub(crate) fn wall_clock() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// The monotonic clock and the wall clock read together, to turn the kernel's receive stamps
/// (wall clock) into arrival instants.
struct ArrivalClock {
    now: Instant,
    wall: Duration,
}

impl ArrivalClock {
    fn read() -> Self {
        Self {
            now: Instant::now(),
            wall: wall_clock(),
        }
    }

    /// When a message stamped `stamp` arrived: `now` less the stamp's age, or `now` without
    /// a plausible stamp (none, from the future, or older than [`MAX_STAMP_AGE`]).
    fn arrival(&self, stamp: Option<Duration>) -> Instant {
        stamp
            .and_then(|s| self.wall.checked_sub(s))
            .filter(|&age| age <= MAX_STAMP_AGE)
            .and_then(|age| self.now.checked_sub(age))
            .unwrap_or(self.now)
    }
}

/// Buffers reused by every `sendmmsg`/`recvmmsg` call, so that the I/O path allocates nothing
/// once warm. Used by one thread at a time.
#[derive(Default)]
pub struct IoScratch {
    messages: Vec<Message>,
    /// The slices being sent, then cuts of them where a message spans part of one.
    send_iovs: Vec<libc::iovec>,
    mmsg: MmsgBuffers,
}

// SAFETY: the raw pointers in these buffers are written afresh before every system call and
// read only during it, by the thread that makes the call: moving the buffers to another thread
// between calls (a reader that takes the socket's turn) moves no live borrow.
unsafe impl Send for IoScratch {}

#[derive(Default)]
struct MmsgBuffers {
    iovs: Vec<libc::iovec>,
    controls: Vec<[u64; CMSG_SPACE / 8]>,
    headers: Vec<libc::mmsghdr>,
    names: Vec<libc::sockaddr_storage>,
}

/// What the kernel attached to a received message: the GRO segment size and the receive time
/// stamp, if any.
fn control(msg: &libc::msghdr) -> (Option<usize>, Option<Duration>) {
    let (mut segment, mut stamp) = (None, None);
    // SAFETY: the kernel filled msg_control up to msg_controllen with valid cmsgs.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(msg);
        while !cmsg.is_null() {
            let data = libc::CMSG_DATA(cmsg);
            match ((*cmsg).cmsg_level, (*cmsg).cmsg_type) {
                (libc::SOL_UDP, libc::UDP_GRO) => {
                    let seg = std::ptr::read_unaligned(data as *const i32);
                    segment = (seg > 0).then_some(seg as usize);
                }
                (libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS) => {
                    let t = std::ptr::read_unaligned(data as *const libc::timespec);
                    stamp = (t.tv_sec >= 0 && (0..1_000_000_000).contains(&t.tv_nsec))
                        .then(|| Duration::new(t.tv_sec as u64, t.tv_nsec as u32));
                }
                _ => {}
            }
            cmsg = libc::CMSG_NXTHDR(msg, cmsg);
        }
    }
    (segment, stamp)
}

/// One message prepared for `sendmmsg`: its bytes are the iovecs `iov` of the send scratch.
struct Message {
    addr: SockAddr,
    iov: Range<usize>,
    segment: Option<u16>,
}

impl Message {
    fn new(addr: &SockAddr, iov: Range<usize>, segment: Option<u16>) -> Self {
        Self {
            addr: addr.clone(),
            iov,
            segment,
        }
    }
}

/// Cuts the bytes of iovecs `src` into runs of `size` bytes (the last may be shorter), appending
/// the run's iovecs to `iovs` (splitting an iovec where a run ends inside it) and calling
/// `run(range, bytes)` for each.
fn cut(
    iovs: &mut Vec<libc::iovec>,
    src: Range<usize>,
    size: usize,
    mut run: impl FnMut(Range<usize>, usize),
) {
    let size = size.max(1);
    let mut start = iovs.len();
    let mut filled = 0;
    for i in src {
        let (mut base, mut left) = (iovs[i].iov_base as *mut u8, iovs[i].iov_len);
        while left > 0 {
            let take = left.min(size - filled);
            iovs.push(libc::iovec {
                iov_base: base as *mut libc::c_void,
                iov_len: take,
            });
            // SAFETY: take <= left, so the pointer stays inside (or one past) the slice.
            base = unsafe { base.add(take) };
            left -= take;
            filled += take;
            if filled == size {
                run(start..iovs.len(), filled);
                start = iovs.len();
                filled = 0;
            }
        }
    }
    if filled > 0 {
        run(start..iovs.len(), filled);
    }
}

fn gso_refused(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EIO) | Some(libc::EINVAL) | Some(libc::EOPNOTSUPP) | Some(libc::ENOPROTOOPT)
    )
}

fn set_int_opt(s: &Socket, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: passes a pointer to a live i32 and its size.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            level,
            name,
            &value as *const i32 as *const libc::c_void,
            size_of::<i32>() as u32,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn get_int_opt(s: &Socket, level: i32, name: i32) -> io::Result<i32> {
    let mut value: i32 = 0;
    let mut len = size_of::<i32>() as u32;
    // SAFETY: passes a pointer to a live i32 and its size.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            level,
            name,
            &mut value as *mut i32 as *mut libc::c_void,
            &mut len,
        )
    };
    if rc == 0 {
        Ok(value)
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(offloads: Offloads) -> (UdpSocket, UdpSocket) {
        let a = UdpSocket::bind("127.0.0.1:0".parse().unwrap(), 4 << 20, offloads).unwrap();
        let b = UdpSocket::bind("127.0.0.1:0".parse().unwrap(), 4 << 20, offloads).unwrap();
        (a, b)
    }

    /// Sends 3 batches (100 datagrams of 1000 bytes + a 10-byte one, 2 single datagrams) and
    /// checks every datagram arrives intact, however the kernel groups them.
    fn batches_arrive_intact(offloads: Offloads) {
        let (a, b) = pair(offloads);
        let dest = b.local_addr().unwrap();
        let mut buf = Vec::new();
        for i in 0..100u32 {
            buf.extend(std::iter::repeat_n(i as u8, 1000));
        }
        buf.extend_from_slice(&[0xAB; 10]);
        let singles = buf.len();
        buf.extend_from_slice(b"one");
        buf.extend_from_slice(b"two!");
        // The datagrams of 1000 are given in uneven slices, as a gathered transmit is (header,
        // then payload, sometimes in two parts), so cuts fall inside slices too.
        let mut slices = Vec::new();
        let mut at = 0;
        for (i, len) in [16, 984, 1, 999, 1500, 500].into_iter().cycle().enumerate() {
            let end = (at + len + i % 3).min(singles);
            slices.push(IoSlice::new(&buf[at..end]));
            at = end;
            if at == singles {
                break;
            }
        }
        let runs = slices.len();
        slices.push(IoSlice::new(&buf[singles..singles + 3]));
        slices.push(IoSlice::new(&buf[singles + 3..]));
        let out = [
            Outgoing {
                dest,
                slices: 0..runs,
                segment: Some(1000),
            },
            Outgoing {
                dest,
                slices: runs..runs + 1,
                segment: None,
            },
            Outgoing {
                dest,
                slices: runs + 1..runs + 2,
                segment: None,
            },
        ];
        let mut scratch = IoScratch::default();
        a.send_all(&slices, &out, &mut scratch).unwrap();
        let mut pool = RecvPool::default();
        let mut got: Vec<Vec<u8>> = Vec::new();
        let mut received = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while got.len() < 103 && std::time::Instant::now() < deadline {
            match b.recv_many(&mut pool, &mut received, &mut scratch) {
                Ok(()) => {
                    for (i, r) in received.iter().enumerate() {
                        let slot = pool.take(i, r.len);
                        for d in slot.chunks(r.segment.unwrap_or(r.len).max(1)) {
                            got.push(d.to_vec());
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::yield_now(),
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(got.len(), 103);
        for (i, d) in got.iter().take(100).enumerate() {
            assert_eq!(d, &vec![i as u8; 1000]);
        }
        assert_eq!(got[100], vec![0xAB; 10]);
        assert_eq!(got[101], b"one");
        assert_eq!(got[102], b"two!");
    }

    #[test]
    fn arrivals_are_timed_by_the_kernel_not_by_the_reader() {
        let (a, b) = pair(Offloads {
            gso: true,
            gro: true,
        });
        let dest = b.local_addr().unwrap();
        let out = [Outgoing {
            dest,
            slices: 0..1,
            segment: None,
        }];
        let mut scratch = IoScratch::default();
        let (mut pool, mut received) = (RecvPool::default(), Vec::new());
        // The kernel turns stamping on for the host a moment after the first socket asks (a
        // deferred switch); until then the stamp is taken when the message is read. So a few
        // tries.
        let mut seen = Vec::new();
        for _ in 0..10 {
            a.send_all(&[IoSlice::new(b"stamped")], &out, &mut scratch)
                .unwrap();
            let sent = Instant::now();
            // Read late: the arrival time is still about when it was sent.
            std::thread::sleep(Duration::from_millis(100));
            b.recv_many(&mut pool, &mut received, &mut scratch).unwrap();
            let read = Instant::now();
            assert_eq!(received.len(), 1);
            let at = received[0].at;
            if at < sent + Duration::from_millis(50) && read - at >= Duration::from_millis(50) {
                return;
            }
            seen.push((at.saturating_duration_since(sent), read - at));
        }
        panic!("(arrival after sending, read after arriving) in every try: {seen:?}");
    }

    #[test]
    fn implausible_stamps_count_as_read_now() {
        let clock = ArrivalClock::read();
        let ago = |d: Duration| Some(clock.wall - d);
        assert_eq!(clock.arrival(None), clock.now);
        assert_eq!(
            clock.arrival(Some(clock.wall + Duration::from_secs(1))),
            clock.now
        );
        assert_eq!(clock.arrival(ago(Duration::from_secs(5))), clock.now);
        let ms = Duration::from_millis(3);
        assert_eq!(clock.arrival(ago(ms)), clock.now - ms);
    }

    #[test]
    fn gso_and_gro_batches_arrive_intact() {
        batches_arrive_intact(Offloads {
            gso: true,
            gro: true,
        });
    }

    #[test]
    fn mmsg_fallback_batches_arrive_intact() {
        let offloads = Offloads {
            gso: false,
            gro: false,
        };
        let (a, _) = pair(offloads);
        assert_eq!(a.offloads(), offloads);
        batches_arrive_intact(offloads);
    }
}
