//! Congestion control: one small interface, controllers chosen per connection by a factory.
//!
//! A controller sees samples (ACKs with RTT and delivery rate, loss reports, timeouts) and answers
//! with two numbers: the pacing period between packets and the window of packets in flight.
//! Controllers are pure: time arrives as an argument.

mod daimd;
mod fixed;
mod model;

pub use daimd::{Udt4Daimd, Udt4DaimdFactory};
pub use fixed::{FixedRate, FixedRateFactory};
pub use model::{ModelRate, ModelRateFactory, Policy};

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The most copies of one retransmission a controller may ask for
/// ([`CongestionControl::repair_copies`]).
pub const MAX_REPAIR_COPIES: u8 = 4;

/// The link capacity a receiver reports before it has timed a packet pair, packets per second:
/// the UDT4 reference starts its window of pair gaps full of 1 ms, and haul's receiver does the
/// same. A report of it says nothing of the link.
pub(crate) const STARTING_CAPACITY: u32 = 1_000;

/// Probe trains a haul receiver times before its capacity report comes from trains, not pairs.
/// Each averages the gaps of all its packets, so a few say more than eight pairs; three, so that
/// one odd train (a receiver that read its tail late) is outvoted.
pub(crate) const FIRST_TRAINS: usize = 3;

/// What a controller is told when its connection starts sending.
#[derive(Debug, Clone, Copy)]
pub struct CcInit {
    /// When the connection was established.
    pub now: Instant,
    /// Maximum segment size in bytes, IP and UDP headers included.
    pub mss: u32,
    /// Extended initial sequence number of the sending direction.
    pub isn: u64,
    /// The peer's flow window from the handshake, in packets.
    pub peer_flow_window: u32,
}

/// The sender's current view of the path, passed with every sample.
#[derive(Debug, Clone, Copy)]
pub struct PathEstimate {
    /// Smoothed RTT.
    pub rtt: Duration,
    /// Smoothed RTT variance.
    pub rtt_var: Duration,
    /// Smoothed receive rate reported by the peer, packets per second.
    pub recv_rate: u32,
    /// Smoothed link capacity reported by the peer, packets per second.
    pub capacity: u32,
    /// Extended sequence number of the last packet sent.
    pub largest_sent: u64,
    /// Data packets retransmitted so far.
    pub retransmitted: u64,
}

/// A full or medium ACK, after the sender has folded its numbers into its estimates.
#[derive(Debug, Clone, Copy)]
pub struct AckSample {
    /// Extended sequence number the receiver expects next.
    pub ack_seq: u64,
    /// Packets newly acknowledged by this ACK.
    pub newly_acked: u64,
    /// The receive rate this ACK reports, packets per second, unsmoothed (full ACKs only).
    pub delivery_rate: Option<u32>,
    /// The link capacity this ACK reports (the receiver's packet pairs), packets per second,
    /// unsmoothed (full ACKs only).
    pub link_capacity: Option<u32>,
    /// Time from sending the newest packet this ACK covers to the ACK (never a retransmitted one).
    /// Its minimum is the path's RTT; single samples include time the ACK waited behind a hole.
    pub rtt_sample: Option<Duration>,
    /// The receiver's RTT (ACK to ACK2), as this ACK reports it: blind to holes, and the ACK2
    /// crosses the forward bottleneck, so it rises with a standing queue.
    pub reported_rtt: Duration,
    /// The path as the sender now sees it.
    pub path: PathEstimate,
}

/// A loss report (NAK) from the receiver.
#[derive(Debug, Clone, Copy)]
pub struct LossSample {
    /// Extended sequence number of the first lost packet in the report.
    pub first_lost: u64,
    /// Packets the report adds to the retransmission list: each is the loss of a packet's last
    /// copy. The receiver repeats a hole on a timer until it fills. A repeat of a hole not yet
    /// resent does not count again (counting those read a starved flow's loss rate as 100 %),
    /// nor does a repeat of one resent less than a smoothed RTT ago (that copy is on its way).
    pub lost: u64,
    /// The most of those from one gap the report lists (a run of consecutive packets).
    pub longest_gap: u64,
    /// Time from sending the packet that followed a reported gap (never a retransmitted one) to
    /// this report: a round trip, plus however long the report waited if it repeats an older one.
    pub rtt_sample: Option<Duration>,
    /// The path as the sender now sees it.
    pub path: PathEstimate,
}

/// The least RTT that an endpoint's connections to one host have measured, and when: a
/// connection that starts into a queue the others keep learns the path's RTT from one that
/// measured it before the queue (ensemble sharing, as RFC 9040 describes it for TCP). The
/// endpoint hands the same one to every connection to that host address (see
/// [`crate::ConnectionConfig::share_path_rtt`]); each controller decides what to offer and what
/// to believe ([`CongestionControl::share_path_rtt`]).
///
/// It also carries a call for a base-RTT check that every connection sharing it answers at
/// once ([`PathRtt::call_check`]), the connections' bandwidth estimates
/// ([`PathRtt::publish_estimate`]), so that together they need not ask more than the link, and
/// the joins of newcomers that take a share of what the others hold ([`PathRtt::announce_join`]).
#[derive(Debug, Default)]
pub struct PathRtt {
    least: Mutex<Option<(Duration, Instant)>>,
    check_called: Mutex<Option<Instant>>,
    estimates: Mutex<Vec<PublishedEstimate>>,
    joins: Mutex<Vec<Join>>,
}

/// One connection's bandwidth estimate, as it publishes it on a [`PathRtt`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The connection that publishes it (its initial sequence number).
    pub connection: u64,
    /// The estimate, packets per second.
    pub packets_per_second: f64,
    /// The link capacity its peer reports, packets per second, if known.
    pub link_capacity: Option<f64>,
    /// The connection is still starting up: its estimate is no rate it holds.
    pub starting: bool,
}

/// An [`Estimate`] and when it was published.
#[derive(Debug, Clone, Copy)]
struct PublishedEstimate {
    estimate: Estimate,
    at: Instant,
}

/// Whether something done at `at` was done no longer than `lifetime` before `now`.
fn fresh(at: Instant, now: Instant, lifetime: Duration) -> bool {
    now.saturating_duration_since(at) <= lifetime
}

/// What the connections sharing a [`PathRtt`] estimate together (see
/// [`PathRtt::estimates_within`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SharedEstimates {
    /// Their estimates added up, packets per second.
    pub sum: f64,
    /// Their squares added up.
    pub squares: f64,
    /// How many connections published one.
    pub count: usize,
    /// The largest link capacity they published with them, packets per second.
    pub link_capacity: Option<f64>,
    /// How many connections published that they are still starting up (not counted above).
    pub starting: usize,
    /// What those still starting up published, added up, packets per second.
    pub starting_sum: f64,
}

/// The joins a connection has not answered yet (see [`PathRtt::joins_after`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JoinsSince {
    /// When the latest was made.
    pub latest: Instant,
    /// What the connection keeps of its estimate once it has given back every one.
    pub keep: f64,
}

/// A newcomer that took its share of what the connections sharing a [`PathRtt`] hold (see
/// [`PathRtt::announce_join`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Join {
    /// The newcomer (its initial sequence number).
    pub connection: u64,
    /// When it joined.
    pub at: Instant,
    /// What each of the others keeps of its estimate, so that together they hold what they held.
    pub keep: f64,
}

impl PathRtt {
    /// The least RTT offered, and when it was measured.
    pub fn get(&self) -> Option<(Duration, Instant)> {
        *self.least.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Lets `f` read and change it, under one lock.
    pub fn update<R>(&self, f: impl FnOnce(&mut Option<(Duration, Instant)>) -> R) -> R {
        f(&mut self.least.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Calls the connections that share it to check the base RTT together, at `now`.
    pub fn call_check(&self, now: Instant) {
        *self
            .check_called
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(now);
    }

    /// Publishes a connection's bandwidth estimate at `now`, in place of any it published
    /// before, and forgets those published longer than `lifetime` ago: the connections that
    /// closed do not pile up while the others share the record.
    pub fn publish_estimate(&self, estimate: Estimate, now: Instant, lifetime: Duration) {
        let mut all = self
            .estimates
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        all.retain(|published| {
            published.estimate.connection != estimate.connection
                && fresh(published.at, now, lifetime)
        });
        all.push(PublishedEstimate { estimate, at: now });
    }

    /// Takes back `connection`'s estimate (it closed).
    pub fn withdraw_estimate(&self, connection: u64) {
        self.estimates
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|published| published.estimate.connection != connection);
    }

    /// The estimates published no longer than `lifetime` before `now` (older ones are
    /// forgotten: their connections stopped publishing), those of connections still starting
    /// up only counted.
    pub fn estimates_within(&self, now: Instant, lifetime: Duration) -> SharedEstimates {
        self.sum_estimates(now, lifetime, |_| true)
    }

    /// The same as [`PathRtt::estimates_within`], without `connection`'s own.
    pub fn estimates_of_others(
        &self,
        connection: u64,
        now: Instant,
        lifetime: Duration,
    ) -> SharedEstimates {
        self.sum_estimates(now, lifetime, |estimate| estimate.connection != connection)
    }

    /// Forgets the estimates published longer than `lifetime` before `now`, and adds up those
    /// left that `counts`.
    fn sum_estimates(
        &self,
        now: Instant,
        lifetime: Duration,
        counts: impl Fn(&Estimate) -> bool,
    ) -> SharedEstimates {
        let mut all = self
            .estimates
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        all.retain(|published| fresh(published.at, now, lifetime));
        all.iter()
            .map(|published| published.estimate)
            .filter(|estimate| counts(estimate))
            .fold(SharedEstimates::default(), |acc, estimate| {
                let Estimate {
                    packets_per_second: pps,
                    link_capacity,
                    starting,
                    ..
                } = estimate;
                if starting {
                    return SharedEstimates {
                        starting: acc.starting + 1,
                        starting_sum: acc.starting_sum + pps,
                        ..acc
                    };
                }
                SharedEstimates {
                    sum: acc.sum + pps,
                    squares: acc.squares + pps * pps,
                    count: acc.count + 1,
                    link_capacity: acc
                        .link_capacity
                        .into_iter()
                        .chain(link_capacity)
                        .reduce(f64::max),
                    ..acc
                }
            })
    }

    /// Announces `join` to the other connections, and forgets joins made longer than
    /// `lifetime` before it.
    pub fn announce_join(&self, join: Join, lifetime: Duration) {
        let mut all = self.joins.lock().unwrap_or_else(PoisonError::into_inner);
        all.retain(|earlier| fresh(earlier.at, join.at, lifetime));
        all.push(join);
    }

    /// The joins of other connections than `connection` made after `since` and no longer than
    /// `lifetime` before `now`: the latest, and what a connection keeps once it has given
    /// back every one of them. `None` if there are none.
    pub fn joins_after(
        &self,
        connection: u64,
        since: Option<Instant>,
        now: Instant,
        lifetime: Duration,
    ) -> Option<JoinsSince> {
        self.joins
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|join| {
                join.connection != connection
                    && since.is_none_or(|since| join.at > since)
                    && fresh(join.at, now, lifetime)
            })
            .map(|join| JoinsSince {
                latest: join.at,
                keep: join.keep,
            })
            .reduce(|a, b| JoinsSince {
                latest: a.latest.max(b.latest),
                keep: a.keep * b.keep,
            })
    }

    /// When a check was last called for.
    pub fn check_called(&self) -> Option<Instant> {
        *self
            .check_called
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// A congestion controller: samples in, pacing period and window out.
pub trait CongestionControl: Send + fmt::Debug {
    /// A short name for statistics and logs.
    fn name(&self) -> &'static str;
    /// A full or medium ACK arrived.
    fn on_ack(&mut self, now: Instant, ack: &AckSample);
    /// A loss report arrived.
    fn on_loss(&mut self, now: Instant, loss: &LossSample);
    /// The retransmission (EXP) timer fired with data outstanding.
    fn on_timeout(&mut self, now: Instant, path: &PathEstimate);
    /// Time between two data packets.
    fn pacing_period(&self) -> Duration;
    /// Packets allowed in flight (the flow window also applies).
    fn window(&self) -> u32;
    /// The sender ran out of data while the pacer and the windows would have let it send: what
    /// is delivered now measures the application, not the path.
    fn on_app_limited(&mut self, _now: Instant) {}
    /// A new packet leaves with nothing in flight: the sender had run dry and sat idle for
    /// `idle` (since its previous packet), and sends again.
    fn on_idle_restart(&mut self, _now: Instant, _idle: Duration) {}
    /// Packets that leave back to back, as one train, at the start of every `max(16, n)`
    /// (aligned on the sequence number); the pacer pays their gaps after the train, so the
    /// average rate is the paced one. The bottleneck spaces them by its transmission time,
    /// and the receiver reports that as the link capacity. The default is the reference's
    /// probe pair, once every 16 packets. The connection holds it within 1..=256.
    fn probe_train(&self) -> u64 {
        2
    }
    /// How many copies of a retransmission go out, back to back: 1 (the default) up to
    /// [`MAX_REPAIR_COPIES`]; the connection holds the answer within that range.
    /// `again`: the packet has cost a round trip already (reported missing after its
    /// retransmission, or its first report was lost); otherwise this is its first repair.
    /// Worth more than one only where losses are random, not congestion: there another copy
    /// costs a fraction of the retransmissions, while another lost copy holds the cumulative
    /// ACK — and with it every byte behind the hole — for one more round trip and timeout.
    fn repair_copies(&self, _again: bool) -> u8 {
        1
    }
    /// Once, as the connection starts sending, if it shares its path's RTT with the endpoint's
    /// other connections to the same host: a controller that keeps a minimum RTT may offer its
    /// own to `path` and take the least for its base (the default does neither).
    fn share_path_rtt(&mut self, _path: Arc<PathRtt>) {}
}

/// Builds a controller for each new connection.
pub trait CongestionControlFactory: Send + Sync + fmt::Debug {
    /// A fresh controller.
    fn build(&self, init: &CcInit) -> Box<dyn CongestionControl>;
}
