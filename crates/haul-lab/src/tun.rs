//! A TUN device opened with a virtio-net header and offloads, so the kernel hands over (and
//! accepts) TCP TSO and UDP GSO super-packets instead of one packet per system call.

use crate::LabError;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
const IFF_VNET_HDR: libc::c_short = 0x4000;
const TUN_F_CSUM: libc::c_uint = 0x01;
const TUN_F_TSO4: libc::c_uint = 0x02;
const TUN_F_TSO6: libc::c_uint = 0x04;
const TUN_F_TSO_ECN: libc::c_uint = 0x08;
/// UDP segmentation offload for IPv4 (Linux 6.2; older headers lack it).
const TUN_F_USO4: libc::c_uint = 0x20;
/// UDP segmentation offload for IPv6 (Linux 6.2).
const TUN_F_USO6: libc::c_uint = 0x40;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// An open TUN device.
#[derive(Debug)]
pub struct Tun {
    file: File,
    name: String,
    udp_offload: bool,
}

impl Tun {
    /// Creates the TUN device `name` (non-blocking reads, virtio-net header, TSO and, where the
    /// kernel has it, UDP GSO offload). The device lives as long as this value.
    pub fn create(name: &str) -> Result<Self, LabError> {
        let fail = |what: &str, e: io::Error| LabError::Tun(format!("{what} {name}: {e}"));
        if name.len() >= libc::IFNAMSIZ {
            return Err(LabError::Tun(format!("device name {name} is too long")));
        }
        // SAFETY: a plain open(2) of a NUL-terminated path.
        let fd = unsafe {
            libc::open(
                c"/dev/net/tun".as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(fail("open /dev/net/tun for", io::Error::last_os_error()));
        }
        // SAFETY: fd was just opened and is owned by nothing else.
        let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: IFF_TUN | IFF_NO_PI | IFF_VNET_HDR,
            _pad: [0; 22],
        };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: TUNSETIFF reads and writes an ifreq, which `req` is laid out as.
        if unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF, &mut req) } < 0 {
            return Err(fail("create TUN device", io::Error::last_os_error()));
        }
        let tcp = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN;
        let set = |flags: libc::c_uint| {
            // SAFETY: TUNSETOFFLOAD takes the flags by value.
            unsafe { libc::ioctl(file.as_raw_fd(), TUNSETOFFLOAD, flags as libc::c_ulong) == 0 }
        };
        let udp_offload = set(tcp | TUN_F_USO4 | TUN_F_USO6);
        if !udp_offload && !set(tcp) {
            return Err(fail("enable offloads on", io::Error::last_os_error()));
        }
        Ok(Self {
            file,
            name: name.to_owned(),
            udp_offload,
        })
    }

    /// The device name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether UDP GSO super-packets pass (else the kernel cuts them before the device).
    pub fn udp_offload(&self) -> bool {
        self.udp_offload
    }

    /// Reads one packet (vnet header + IP packet); `Ok(None)` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: buf is valid for writes of its length.
        let n = unsafe { libc::read(self.file.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        }
    }

    /// Writes one packet (vnet header + IP packet) into the device's network stack.
    pub fn send(&self, packet: &[u8]) -> io::Result<()> {
        // SAFETY: packet is valid for reads of its length.
        let n = unsafe { libc::write(self.file.as_raw_fd(), packet.as_ptr().cast(), packet.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Waits until a packet is readable or `timeout` passes (nanosecond resolution).
    pub fn wait_readable(&self, timeout: std::time::Duration) {
        let mut pfd = libc::pollfd {
            fd: self.file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: one valid pollfd, a valid timespec, no signal mask.
        unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
    }
}
