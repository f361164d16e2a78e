//! Which `haul`-dialect requests a listener may accept without a cookie: those whose client
//! clock is close to the listener's and whose key exchange it has not seen before.
//!
//! A cookie proves that the client receives at its address; a request that skips it proves only
//! that its sender knows the key. What such a request cannot prove is that it is not a copy of an
//! earlier one, sent again from a forged address. So the first key-exchange message carries the
//! client's clock, the listener refuses one more than [`WINDOW`] away from its own, and it
//! remembers every ephemeral key it accepted for as long as that key's message could still pass
//! the clock check. A refused request is answered with a cookie, as every request was before.
//!
//! Checking a request's key exchange costs a Noise state and a decryption per key the listener
//! holds (about 10 µs each here), and anyone can send requests from any address. So the checks
//! have a budget, [`TRIALS_PER_SECOND`] keys tried; past it, requests that skip the cookie get
//! one too, whose echo proves the client's address before any key is tried.

use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};

/// How far a request's clock may be from the listener's, either way.
pub(crate) const WINDOW: Duration = Duration::from_secs(60);
/// Most key exchanges remembered at once; past it, requests take the cookie's round trip.
const CAPACITY: usize = 65_536;
/// Keys a listener tries per second on requests that skip the cookie: at most a tenth of a core
/// or so. One key allows that many requests a second, a hundred keys a hundred.
pub(crate) const TRIALS_PER_SECOND: u32 = 10_000;

/// The listener's clock and the key exchanges it accepted recently.
#[derive(Debug)]
pub(crate) struct Freshness {
    /// An instant of the endpoint's clock...
    anchor: Instant,
    /// ...and the time since the Unix epoch then.
    unix_at_anchor: Duration,
    seen: HashSet<[u8; 32]>,
    /// When each remembered ephemeral key may be forgotten, oldest first.
    expiries: VecDeque<(Instant, [u8; 32])>,
    /// When the current second of the trial budget began, and the trials spent in it.
    budget_second: Instant,
    trials: u32,
}

impl Freshness {
    /// A clock that read `since_epoch` at `now`.
    pub(crate) fn new(now: Instant, since_epoch: Duration) -> Self {
        Self {
            anchor: now,
            unix_at_anchor: since_epoch,
            seen: HashSet::new(),
            expiries: VecDeque::new(),
            budget_second: now,
            trials: 0,
        }
    }

    /// Whether the budget allows checking a request against `keys` keys; spends them if so.
    pub(crate) fn may_try(&mut self, now: Instant, keys: usize) -> bool {
        if now.saturating_duration_since(self.budget_second) >= Duration::from_secs(1) {
            self.budget_second = now;
            self.trials = 0;
        }
        let keys = u32::try_from(keys).unwrap_or(u32::MAX);
        match self.trials.checked_add(keys) {
            Some(spent) if spent <= TRIALS_PER_SECOND => {
                self.trials = spent;
                true
            }
            _ => false,
        }
    }

    /// Sets the clock again (a monotonic clock and the wall clock drift apart over days).
    pub(crate) fn set_clock(&mut self, now: Instant, since_epoch: Duration) {
        self.anchor = now;
        self.unix_at_anchor = since_epoch;
    }

    /// Milliseconds since the Unix epoch at `now`.
    pub(crate) fn unix_ms(&self, now: Instant) -> u64 {
        // Saturating: the clock comes from the driver, and no value may panic here.
        let unix = if now >= self.anchor {
            self.unix_at_anchor
                .checked_add(now - self.anchor)
                .unwrap_or(Duration::MAX)
        } else {
            self.unix_at_anchor.saturating_sub(self.anchor - now)
        };
        u64::try_from(unix.as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether a request whose client wrote its message at `sent_at_ms` with the ephemeral key
    /// `ephemeral` may be accepted; remembers the key if so.
    pub(crate) fn admit(&mut self, now: Instant, sent_at_ms: u64, ephemeral: &[u8; 32]) -> bool {
        while let Some(&(expiry, key)) = self.expiries.front() {
            if expiry > now {
                break;
            }
            self.seen.remove(&key);
            self.expiries.pop_front();
        }
        let window_ms = WINDOW.as_millis() as u64;
        if self.unix_ms(now).abs_diff(sent_at_ms) > window_ms || self.seen.len() >= CAPACITY {
            return false;
        }
        if !self.seen.insert(*ephemeral) {
            return false;
        }
        // Accepted at `now`, the message was written no earlier than a window ago by our clock,
        // so it passes the clock check for at most two windows more.
        self.expiries.push_back((now + 2 * WINDOW, *ephemeral));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPOCH_NOW: Duration = Duration::from_secs(1_800_000_000);

    #[test]
    fn a_fresh_request_passes_once() {
        let now = Instant::now();
        let mut f = Freshness::new(now, EPOCH_NOW);
        let ms = f.unix_ms(now);
        assert!(f.admit(now, ms, &[1; 32]));
        assert!(!f.admit(now, ms, &[1; 32]), "a copy is refused");
        assert!(f.admit(now, ms, &[2; 32]));
    }

    #[test]
    fn clocks_further_apart_than_the_window_are_refused_either_way() {
        let now = Instant::now();
        let mut f = Freshness::new(now, EPOCH_NOW);
        let ms = f.unix_ms(now);
        let window = WINDOW.as_millis() as u64;
        assert!(!f.admit(now, ms - window - 1, &[1; 32]));
        assert!(!f.admit(now, ms + window + 1, &[2; 32]));
        assert!(f.admit(now, ms - window, &[3; 32]));
        assert!(f.admit(now, ms + window, &[4; 32]));
    }

    #[test]
    fn a_key_is_forgotten_only_once_its_message_is_stale() {
        let start = Instant::now();
        let mut f = Freshness::new(start, EPOCH_NOW);
        let sent = f.unix_ms(start) + WINDOW.as_millis() as u64;
        assert!(f.admit(start, sent, &[1; 32]));
        // Still within the window two windows on, less a millisecond: still remembered.
        let later = start + 2 * WINDOW - Duration::from_millis(1);
        assert!(!f.admit(later, sent, &[1; 32]));
        // Forgotten after that, and by then the clock check refuses the copy anyway.
        let stale = start + 2 * WINDOW + Duration::from_millis(1);
        assert!(!f.admit(stale, sent, &[1; 32]));
        assert!(f.seen.is_empty());
    }

    #[test]
    fn key_trials_stop_at_the_budget_until_the_next_second() {
        let start = Instant::now();
        let mut f = Freshness::new(start, EPOCH_NOW);
        let keys = 100;
        let allowed = (TRIALS_PER_SECOND / keys) as usize;
        let tried = (0..allowed + 5)
            .filter(|_| f.may_try(start, keys as usize))
            .count();
        assert_eq!(tried, allowed);
        assert!(!f.may_try(start + Duration::from_millis(999), 1));
        assert!(f.may_try(start + Duration::from_secs(1), keys as usize));
    }

    #[test]
    fn an_absurd_clock_saturates_instead_of_panicking() {
        let now = Instant::now();
        let mut f = Freshness::new(now, Duration::MAX);
        assert_eq!(f.unix_ms(now + Duration::from_secs(1)), u64::MAX);
        assert!(!f.admit(now + Duration::from_secs(1), 0, &[1; 32]));
    }

    #[test]
    fn the_clock_runs_from_its_anchor() {
        let now = Instant::now();
        let mut f = Freshness::new(now, EPOCH_NOW);
        assert_eq!(f.unix_ms(now + Duration::from_secs(2)), 1_800_000_002_000);
        f.set_clock(now, EPOCH_NOW + Duration::from_secs(10));
        assert_eq!(f.unix_ms(now), 1_800_000_010_000);
    }
}
