//! Process facts the reports need.

/// CPU time (user + system) this process has used so far, in seconds.
pub fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills a plain struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(usage.ru_utime) + t(usage.ru_stime)
}
