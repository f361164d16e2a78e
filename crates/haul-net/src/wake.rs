//! Sleeping and waking: the eventfds that wake a thread, `ppoll`, and the claim by which a
//! reader blocked for data reads the socket itself while the I/O thread stays off it.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long the socket stays a reader's after it took what it waited for: the application
/// usually asks for more within microseconds, and the I/O thread takes the socket back only
/// once this has passed without a reader (it looks at most this late).
pub(crate) const LEASE: Duration = Duration::from_micros(250);

/// Who reads the socket. A reader whose read blocked receives, dispatches and acknowledges in
/// its own thread, as a kernel TCP reader does its own receive processing: the data it waits
/// for then wakes it straight from the kernel, with no hand-off from the I/O thread (two
/// context switches per batch, and a scheduler that may put the reader on the sending
/// thread's core). Between its reads the socket stays the reader's for [`LEASE`]; the I/O
/// thread, meanwhile, only runs timers and sends.
pub(crate) struct ReaderClaim {
    epoch: Instant,
    /// Nanoseconds since `epoch` until which the socket is a reader's; [`DRIVING`] while a
    /// reader is reading it; 0 when no reader has claimed it.
    until: AtomicU64,
}

/// [`ReaderClaim::until`] while a reader reads the socket (it lets go with a lease).
const DRIVING: u64 = u64::MAX;

/// What the I/O thread may do with the socket now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IoTurn {
    /// Read it: no reader holds it.
    Read,
    /// Leave it to a reader until this much later, then look again.
    LeaveFor(Duration),
}

/// How long the I/O thread leaves the socket to a reader that is reading it now before it looks
/// again. The reader does not wake it when it lets go (that cost two context switches per
/// read that found nothing): a reader that stops reading leaves the socket unread for at
/// most this plus [`LEASE`].
const RECHECK: Duration = Duration::from_millis(1);

impl ReaderClaim {
    pub(crate) fn new(now: Instant) -> Self {
        Self {
            epoch: now,
            until: AtomicU64::new(0),
        }
    }

    fn nanos(&self, at: Instant) -> u64 {
        // Never 0 (no claim) nor DRIVING for a real instant.
        (at.saturating_duration_since(self.epoch).as_nanos() as u64).clamp(1, DRIVING - 1)
    }

    /// A reader starts reading the socket (it holds the receiving state).
    pub(crate) fn drive(&self) {
        self.until.store(DRIVING, Ordering::Relaxed);
    }

    /// The reader stops reading the socket at `now`; the socket stays its own for [`LEASE`].
    pub(crate) fn let_go(&self, now: Instant) {
        self.until.store(self.nanos(now + LEASE), Ordering::Relaxed);
    }

    /// True if the I/O thread may read the socket at `now` (no reader holds it).
    pub(crate) fn io_may_read(&self, now: Instant) -> bool {
        self.until.load(Ordering::Relaxed) <= self.nanos(now)
    }

    /// What the I/O thread may do at `now`, before it sleeps.
    pub(crate) fn io_turn(&self, now: Instant) -> IoTurn {
        let until = self.until.load(Ordering::Relaxed);
        let now = self.nanos(now);
        if until == DRIVING {
            IoTurn::LeaveFor(RECHECK)
        } else if until > now {
            IoTurn::LeaveFor(Duration::from_nanos(until - now))
        } else {
            IoTurn::Read
        }
    }

    /// True while a reader reads the socket (events for it must wake it: [`Waker`]).
    pub(crate) fn driving(&self) -> bool {
        self.until.load(Ordering::Relaxed) == DRIVING
    }
}

/// Sleeps until `socket` (if any) is readable, the waker fires, or `timeout` passes (µs
/// precision).
pub(crate) fn poll(socket: Option<i32>, waker: &Waker, timeout: Duration) {
    let mut fds = [
        libc::pollfd {
            fd: waker.fd,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            // A negative descriptor is ignored.
            fd: socket.unwrap_or(-1),
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
    if fds[0].revents & libc::POLLIN != 0 {
        waker.clear();
    }
}

/// A Linux eventfd used to wake a thread sleeping in [`poll`].
pub(crate) struct Waker {
    fd: i32,
}

impl Waker {
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: plain system call.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { fd })
    }

    pub(crate) fn signal(&self) {
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

impl Drop for Waker {
    fn drop(&mut self) {
        // SAFETY: closes a descriptor this struct owns.
        unsafe { libc::close(self.fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_io_thread_reads_until_a_reader_claims_the_socket() {
        let t0 = Instant::now();
        let claim = ReaderClaim::new(t0);
        assert_eq!(claim.io_turn(t0), IoTurn::Read);
        claim.drive();
        assert!(claim.driving());
        assert_eq!(claim.io_turn(t0), IoTurn::LeaveFor(RECHECK));
    }

    #[test]
    fn a_reader_that_lets_go_keeps_a_lease() {
        let t0 = Instant::now();
        let claim = ReaderClaim::new(t0);
        claim.drive();
        claim.let_go(t0);
        assert!(!claim.driving());
        let later = t0 + Duration::from_micros(100);
        assert_eq!(
            claim.io_turn(later),
            IoTurn::LeaveFor(LEASE - Duration::from_micros(100))
        );
        assert_eq!(claim.io_turn(t0 + LEASE), IoTurn::Read);
    }
}
