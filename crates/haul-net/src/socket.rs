//! The UDP socket: GSO on send and GRO on receive where the kernel has them, one datagram per
//! system call where it does not. Detection happens at run time; a failed GSO send switches the
//! socket to the fallback for good.

use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::io;
use std::mem::{size_of, MaybeUninit};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// Largest UDP payload the socket receives in one call (a GRO batch).
pub const MAX_RECV: usize = 65_535;
/// Largest UDP payload of one send, a GSO batch included (IPv4: 65 535 − 20 − 8).
pub const MAX_SEND: usize = 65_507;
/// Most segments the kernel accepts in one GSO send.
const MAX_GSO_SEGMENTS: usize = 64;

/// How the socket moves packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offloads {
    /// Send a batch of equal-size datagrams in one call (`UDP_SEGMENT`).
    pub gso: bool,
    /// Receive coalesced datagrams in one call (`UDP_GRO`).
    pub gro: bool,
}

/// A UDP socket with batched I/O.
#[derive(Debug)]
pub struct UdpSocket {
    socket: Socket,
    gso: AtomicBool,
    gro: bool,
}

/// One received buffer: a datagram, or several of `segment` bytes each (the last may be short).
#[derive(Debug, Clone, Copy)]
pub struct Received {
    /// Sender.
    pub from: SocketAddr,
    /// Bytes in the buffer.
    pub len: usize,
    /// Size of each coalesced datagram, when GRO merged several.
    pub segment: Option<usize>,
}

impl UdpSocket {
    /// Binds a non-blocking socket. `buffer_bytes` sizes the kernel buffers (see
    /// [`UdpSocket::set_buffers`]); `offloads` says which batching to try.
    pub fn bind(addr: SocketAddr, buffer_bytes: usize, offloads: Offloads) -> io::Result<Self> {
        let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
        if addr.is_ipv6() {
            socket.set_only_v6(false).ok();
        }
        socket.bind(&addr.into())?;
        socket.set_nonblocking(true)?;
        let gro = offloads.gro && set_int_opt(&socket, libc::SOL_UDP, libc::UDP_GRO, 1).is_ok();
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

    /// Sends `data` to `dest`: one datagram, or with `segment` a batch of datagrams of that size.
    pub fn send(&self, dest: SocketAddr, data: &[u8], segment: Option<usize>) -> io::Result<()> {
        let dest = SockAddr::from(dest);
        match segment {
            Some(seg) if seg > 0 && seg < data.len() => {
                if self.gso.load(Ordering::Relaxed) {
                    let per_batch = (MAX_SEND / seg).clamp(1, MAX_GSO_SEGMENTS) * seg;
                    let mut batches = data.chunks(per_batch);
                    match batches
                        .next()
                        .map(|b| self.sendmsg(&dest, b, Some(seg as u16)))
                    {
                        Some(Err(e)) if gso_unsupported(&e) => {
                            tracing::info!(
                                "UDP GSO unavailable ({e}); sending one datagram per call"
                            );
                            self.gso.store(false, Ordering::Relaxed);
                        }
                        Some(Err(e)) => return Err(e),
                        _ => {
                            for batch in batches {
                                self.sendmsg(&dest, batch, Some(seg as u16))?;
                            }
                            return Ok(());
                        }
                    }
                }
                for chunk in data.chunks(seg) {
                    self.sendmsg(&dest, chunk, None)?;
                }
                Ok(())
            }
            _ => self.sendmsg(&dest, data, None),
        }
    }

    fn sendmsg(&self, dest: &SockAddr, data: &[u8], segment: Option<u16>) -> io::Result<()> {
        let mut iov = libc::iovec {
            iov_base: data.as_ptr() as *mut libc::c_void,
            iov_len: data.len(),
        };
        let mut control = [0u64; 4];
        // SAFETY: msghdr is plain data; every pointer set below outlives the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_name = dest.as_ptr() as *mut libc::c_void;
        msg.msg_namelen = dest.len();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if let Some(seg) = segment {
            msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
            // SAFETY: CMSG_SPACE only computes a size.
            msg.msg_controllen = unsafe { libc::CMSG_SPACE(size_of::<u16>() as u32) } as usize;
            // SAFETY: the control buffer is 32 bytes, enough for one cmsghdr with a u16.
            unsafe {
                let cmsg = libc::CMSG_FIRSTHDR(&msg);
                (*cmsg).cmsg_level = libc::SOL_UDP;
                (*cmsg).cmsg_type = libc::UDP_SEGMENT;
                (*cmsg).cmsg_len = libc::CMSG_LEN(size_of::<u16>() as u32) as usize;
                std::ptr::write_unaligned(libc::CMSG_DATA(cmsg) as *mut u16, seg);
            }
        }
        loop {
            // SAFETY: msg is fully initialised and points at live buffers.
            let n = unsafe { libc::sendmsg(self.socket.as_raw_fd(), &msg, 0) };
            if n >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                // A full socket buffer: the packet is lost like any other; the protocol recovers.
                io::ErrorKind::WouldBlock => return Ok(()),
                _ => return Err(e),
            }
        }
    }

    /// Receives one buffer, or `WouldBlock` when nothing is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Received> {
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr() as *mut libc::c_void,
            iov_len: buf.len(),
        };
        let mut name = MaybeUninit::<libc::sockaddr_storage>::zeroed();
        let mut control = [0u64; 8];
        // SAFETY: as in sendmsg; the kernel writes at most the lengths given.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_name = name.as_mut_ptr() as *mut libc::c_void;
        msg.msg_namelen = size_of::<libc::sockaddr_storage>() as u32;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = size_of::<[u64; 8]>();
        let n = loop {
            // SAFETY: msg points at live buffers of the stated sizes.
            let n = unsafe { libc::recvmsg(self.socket.as_raw_fd(), &mut msg, 0) };
            if n >= 0 {
                break n as usize;
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        };
        let mut segment = None;
        // SAFETY: the kernel filled msg_control up to msg_controllen with valid cmsgs.
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_UDP && (*cmsg).cmsg_type == libc::UDP_GRO {
                    let seg = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg) as *const i32);
                    if seg > 0 && (seg as usize) < n {
                        segment = Some(seg as usize);
                    }
                }
                cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
            }
        }
        // SAFETY: recvmsg wrote a socket address of msg_namelen bytes into `name`.
        let addr = unsafe { SockAddr::new(name.assume_init(), msg.msg_namelen) };
        let from = addr
            .as_socket()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "non-IP sender"))?;
        Ok(Received {
            from,
            len: n,
            segment,
        })
    }
}

fn gso_unsupported(e: &io::Error) -> bool {
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
