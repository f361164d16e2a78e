//! Data connections of a test: haul streams or kernel TCP, behind one type.

use anyhow::{Context, Result};
use haul_net::Bytes;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;

/// One data connection.
pub enum DataStream {
    /// haul over UDP.
    Haul(haul_net::Stream),
    /// Kernel TCP.
    Tcp(TcpStream),
}

/// What an interval line shows about a connection.
#[derive(Debug, Clone, Copy, Default)]
pub struct Snapshot {
    /// Smoothed RTT, microseconds.
    pub rtt_us: u64,
    /// Retransmitted packets (haul) or segments (TCP) so far.
    pub retransmits: u64,
    /// Congestion window, packets (haul) or segments (TCP).
    pub window: u64,
    /// haul's pacing rate in bits per second (0 for TCP).
    pub pacing_bps: f64,
    /// Payload bytes that have arrived so far on a receiving haul connection, read by the
    /// application or still waiting behind a hole; `None` on a sender, and where only what was
    /// read is known (TCP).
    pub arrived: Option<u64>,
}

/// Reads a connection's statistics from another thread.
pub enum Probe {
    /// A haul connection's monitor, and whether this side receives.
    Haul {
        /// The connection's statistics.
        monitor: haul_net::Monitor,
        /// This side receives the test's data.
        receiving: bool,
    },
    /// A clone of the TCP socket, for `TCP_INFO`.
    Tcp(TcpStream),
}

impl Probe {
    /// The connection's current figures.
    pub fn snapshot(&self) -> Snapshot {
        match self {
            Probe::Haul { monitor, receiving } => {
                let s = monitor.stats();
                let period = s.pacing_period.as_secs_f64();
                Snapshot {
                    rtt_us: s.rtt.as_micros() as u64,
                    retransmits: s.packets_retransmitted,
                    window: s.congestion_window.min(s.flow_window as u32) as u64,
                    pacing_bps: if period > 0.0 {
                        f64::from(s.mss) * 8.0 / period
                    } else {
                        0.0
                    },
                    arrived: receiving.then_some(s.bytes_received),
                }
            }
            Probe::Tcp(t) => tcp_info(t).unwrap_or_default(),
        }
    }
}

fn tcp_info(t: &TcpStream) -> Option<Snapshot> {
    // SAFETY: tcp_info is plain data; getsockopt writes at most `len` bytes.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as u32;
    // SAFETY: valid descriptor and buffer.
    let rc = unsafe {
        libc::getsockopt(
            t.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut info as *mut _ as *mut libc::c_void,
            &mut len,
        )
    };
    (rc == 0).then_some(Snapshot {
        rtt_us: info.tcpi_rtt as u64,
        retransmits: info.tcpi_total_retrans as u64,
        window: info.tcpi_snd_cwnd as u64,
        pacing_bps: 0.0,
        arrived: None,
    })
}

impl DataStream {
    /// A probe for interval lines, on the side that is `receiving` or sending.
    pub fn probe(&self, receiving: bool) -> Result<Probe> {
        Ok(match self {
            DataStream::Haul(s) => Probe::Haul {
                monitor: s.monitor(),
                receiving,
            },
            DataStream::Tcp(t) => Probe::Tcp(t.try_clone().context("cloning a TCP socket")?),
        })
    }

    /// Writes everything. A haul write blocks while the connection holds its window in flight
    /// and its allowance of unsent bytes ([`haul_net::ConnectionConfig::max_unsent_bytes`]
    /// copied, [`haul_net::ConnectionConfig::max_unsent_lent_bytes`] lent), as TCP's autotuned
    /// send buffer follows its window, so that what the sender counts as sent is close to what
    /// has arrived and a timed test ends on time.
    ///
    /// haul takes `buf` without a copy ([`haul_net::Stream::write_bytes`]: the kernel's copy
    /// is the only one, as kernel TCP's), or copies it into its send buffer when `copy`.
    pub fn write_all(&mut self, buf: &Bytes, copy: bool) -> io::Result<()> {
        match self {
            DataStream::Haul(s) if copy => s.write_all(buf),
            DataStream::Haul(s) => s.write_bytes(buf.clone()),
            DataStream::Tcp(t) => t.write_all(buf),
        }
    }

    /// Receives some bytes and drops them, as iperf3 does: kernel TCP reads them into `buf`
    /// (its one copy out of the kernel); haul takes them where they were received
    /// ([`haul_net::Stream::read_chunk`]: its one copy was the kernel's), or with `copy` reads
    /// them into `buf` too. Returns how many; 0 at the end of the stream.
    pub fn receive_some(&mut self, buf: &mut [u8], copy: bool) -> io::Result<usize> {
        match self {
            DataStream::Haul(s) if copy => s.read(buf),
            DataStream::Haul(s) => s.read_chunk(buf.len()).map(|chunk| chunk.len()),
            DataStream::Tcp(t) => t.read(buf),
        }
    }

    /// Ends the sending side and waits until the receiver has everything.
    pub fn finish(&mut self) -> io::Result<()> {
        match self {
            DataStream::Haul(s) => s.finish(),
            DataStream::Tcp(t) => {
                t.shutdown(Shutdown::Write)?;
                // The receiver closes after reading to the end.
                let mut sink = [0u8; 64];
                while t.read(&mut sink)? > 0 {}
                Ok(())
            }
        }
    }
}

/// Applies the TCP options of a test to a socket: congestion control, buffers, pacing cap.
pub fn tune_tcp(
    t: &TcpStream,
    cc: Option<&str>,
    window: Option<u64>,
    rate: Option<u64>,
) -> Result<()> {
    t.set_nodelay(true).ok();
    let fd = t.as_raw_fd();
    if let Some(cc) = cc {
        // SAFETY: passes a live byte string and its length.
        let rc = unsafe {
            libc::setsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_CONGESTION,
                cc.as_ptr() as *const libc::c_void,
                cc.len() as u32,
            )
        };
        if rc != 0 {
            anyhow::bail!(
                "TCP congestion control `{cc}` is not available ({}); see /proc/sys/net/ipv4/tcp_available_congestion_control",
                io::Error::last_os_error()
            );
        }
    }
    if let Some(w) = window {
        let w = w.min(i32::MAX as u64 / 2) as i32;
        for opt in [libc::SO_SNDBUFFORCE, libc::SO_RCVBUFFORCE] {
            set_int(fd, libc::SOL_SOCKET, opt, w);
        }
    }
    if let Some(r) = rate {
        let bytes_per_second = (r / 8).min(u32::MAX as u64) as i32;
        set_int(
            fd,
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            bytes_per_second,
        );
    }
    Ok(())
}

fn set_int(fd: i32, level: i32, name: i32, value: i32) {
    // SAFETY: passes a live i32 and its size.
    unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &value as *const i32 as *const libc::c_void,
            std::mem::size_of::<i32>() as u32,
        )
    };
}
