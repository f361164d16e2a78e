//! haul's default controller: a model of the path (bottleneck rate × minimum RTT), paced.
//!
//! The bottleneck rate is the largest delivery rate over the last ten rounds (a round is one
//! minimum RTT plus the 10 ms ACK interval; rounds in which the sender ran out of data do not
//! count) as the receiver reports it — a round's largest report, or their mean once a fair flow
//! cruises (see `ModelRate::steady`) — or, in start-up and in rounds without loss, as the
//! sender sees its ACKs arrive, whichever is larger; the base RTT is the smallest RTT seen in ten seconds. The
//! sender paces at `gain × rate` and keeps at most `rate × (6 × min RTT + 100 ms)` in flight. It
//! starts by raising the gain to 2.885 (doubling the rate each round), from at least half the link
//! capacity the receiver measures with packet pairs while the path shows no queue, until the rate
//! stops growing or, once that capacity is known, a round shows a standing queue (a flow whose
//! endpoint's other connections to the host hold the link joins them at a share of it instead,
//! and they give that share back); it drains the queue that built, then cycles gains 1.25,
//! 0.75, 1 × 6 to probe for more; a flow that shares the link probes by at least a tenth of what
//! the other flows hold of the link capacity instead of a quarter of its own rate (additive
//! increase: small flows gain on large ones), and drains a standing queue the deeper the larger
//! its share of the link. A fair flow that cruises under a sixteenth of the link with no queue
//! in sight starts up again, once (a newcomer whose start-up a full buffer cut short).
//!
//! Loss is read through the model, one round at a time. A round whose smallest RTT sample sits
//! near the base RTT (within 10 % + 2 ms; within 3 % + 0.5 ms for a fair flow that shares the
//! link, which drains so small a queue gently) had no standing queue: its losses were random,
//! they update the random-loss rate, and its delivery rate gets back what they took — the losses
//! reported over the span of its rate reports, up to the random-loss rate (random loss thins what
//! arrives; it says nothing about capacity). A round with a standing queue keeps the delivery
//! rate as measured: its losses are congestion, and the rate falls to what gets through. A fair
//! flow drains a standing queue, unless it grew through eight loss-free rounds of draining: then
//! it is a loss-based flow's, and the flow holds its rate and halves it at a loss instead (a
//! queue that stood that long without growing is drained on, without lowering the estimate). Heavy
//! loss with no queue in sight for two rounds (a fifth of a round, or a loss rate of a fifth over
//! recent rounds) means the base RTT itself may hold a queue (the flow started into one): the
//! flow sends almost nothing for a base RTT and 200 ms to see. A fair flow that drained for 2 s
//! and ten rounds while the queue still stood takes the queue for the path instead: the flows
//! that keep it started into it, took it for their base RTT, and do not drain for it.
//! `docs/CONGESTION.md` explains each constant; `docs/journal/congestion.md` holds the measurements
//! behind them.

use super::{
    AckSample, CcInit, CongestionControl, CongestionControlFactory, Estimate, Join, LossSample,
    PathEstimate, PathRtt, SharedEstimates, STARTING_CAPACITY,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod capacity;
mod constants;
mod round;

use capacity::CapacityReports;
use constants::*;
use round::ReportLosses;

/// What the sender optimises for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Fill the path, share it with other flows.
    Fair,
    /// Use only what others leave: back off as soon as a queue builds (like LEDBAT).
    Scavenger,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Startup,
    Drain,
    Cruise,
}

/// A cruising flow's view of a stall of its path (see [`STALL_ROUNDS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stall {
    /// No stall lately.
    None,
    /// Rounds in a row that delivered next to nothing.
    Stalling(u32),
    /// Rounds since a stall of [`STALL_ROUNDS`] or more ended.
    Over(u32),
}

/// The model-based controller (see the module documentation).
#[derive(Debug)]
pub struct ModelRate {
    policy: Policy,
    min_pps: f64,
    max_pps: f64,
    phase: Phase,
    /// Largest delivery rate per round, packets per second (ring of rounds); loss-corrected
    /// once a round ends without a standing queue.
    bw_rounds: [f64; BW_ROUNDS],
    round: usize,
    round_start: Instant,
    /// The smallest of the flow's own RTT samples over [`MIN_RTT_LIFETIME`], and when it came;
    /// a newcomer that joins its siblings starts from their base (see
    /// [`ModelRate::join_siblings`]).
    min_rtt: Option<(Duration, Instant)>,
    /// The least RTT of the endpoint's connections to this host, if this one shares it (see
    /// [`ModelRate::exchange_path_rtt`]).
    path_rtt: Option<Arc<PathRtt>>,
    /// The least of it over [`MIN_RTT_LIFETIME`], as of the flow's last own sample; the base
    /// RTT is the smaller of it and `min_rtt`.
    path_min_rtt: Option<(Duration, Instant)>,
    /// When the base RTT last expired under [`DRAIN_OUTLIVES_BASE`]: a shared sample older than
    /// that is not believed either.
    base_outlived_at: Option<Instant>,
    /// The base RTT as the round began (`None` before the first sample); see
    /// [`ModelRate::join_a_drain`].
    round_start_base: Option<Duration>,
    /// When the flow's RTT last fell under a drain of other flows (see
    /// [`ModelRate::join_a_drain`] and [`ROOM_AFTER_A_FALL`]).
    base_fell_at: Option<Instant>,
    /// The base RTT that an expiry under a queue gave up for a check, while the check runs (see
    /// [`ModelRate::end_base_check`]).
    outlived: Option<OutlivedBase>,
    /// The next RTT sample replaces the base RTT (see [`DRAIN_OUTLIVES_BASE`] and
    /// [`BASE_RENEWAL_LEAD`]).
    base_outlived: bool,
    /// How far the last round's smallest RTT sat over the base RTT, where more than jitter (see
    /// [`BASE_RENEWAL_LEAD`]).
    queue_over_base: Option<Duration>,
    /// The last call for a check by the connections that share the base RTT that this flow
    /// made or answered (see [`ModelRate::answer_check_call`]).
    check_answered: Option<Instant>,
    /// The last newcomer's join this flow made or answered (see [`ModelRate::answer_joins`]).
    join_answered: Option<Instant>,
    /// After giving a newcomer its share: until when delivery samples measure what was sent
    /// before, and the estimate they may not exceed.
    answer_cap: Option<(Instant, f64)>,
    /// The flow has sent its first packet (see [`ModelRate::join_siblings`]).
    sending: bool,
    /// Since when, and for how many rounds, the flow has drained every round for a standing
    /// queue.
    draining_since: Option<(Instant, u32)>,
    /// Smallest receiver-reported RTT of the current round (queue detection).
    round_min_rtt: Option<Duration>,
    /// The median of the receiver's recent capacity reports (see [`CAPACITY_REPORTS`]), once a
    /// window of pairs is in them.
    capacity: Option<f64>,
    /// The receiver's recent believed capacity reports.
    capacity_reports: CapacityReports,
    /// How long the last round lasted (it ends at the first ACK after its length).
    last_round: Duration,
    /// Smallest receiver-reported RTT in [`MIN_RTT_LIFETIME`]: a second base for the residual
    /// queue (see `next_round`).
    min_reported_rtt: Option<(Duration, Instant)>,
    /// The sum and count of this round's delivery-rate reports while [`ModelRate::steady`].
    round_reports: (f64, u32),
    /// The losses reported between this round's delivery-rate reports (see
    /// [`ModelRate::count_report_span`]).
    round_report_losses: ReportLosses,
    /// When the last delivery-rate report arrived, and the losses reported since.
    last_report: Option<Instant>,
    lost_since_report: u64,
    /// The RTT sample of the last loss report that had one (see [`ModelRate::loss_queue_rtt`]).
    last_loss_rtt: Option<Duration>,
    /// Startup: the rate to beat, and how many rounds did not.
    full_bw: f64,
    flat_rounds: u32,
    /// Start-up rounds that beat the rate before them, the first round's (from nothing)
    /// included (see [`ModelRate::overflowed`]).
    startup_growths: u32,
    /// This start-up was entered again from cruise after a collapse or a stall (see
    /// [`PROBE_HEADROOM`]): it also ends at the first standing queue, since the path held
    /// traffic a moment ago.
    restarted: bool,
    /// The estimate the flow started up again from for cruising under [`SMALL_START`] of the
    /// link, once it has (it does so once): that start-up's shortfall rule waits for a round
    /// that sent twice it.
    small_start_from: Option<f64>,
    /// Start-up delivers nearly the link capacity and grows at [`APPROACH_GAIN`].
    approaching: bool,
    /// The latest capacity the receiver reported, measured with trains: start-up's, or those
    /// a fair flow sends while it cruises without a capacity (see
    /// [`ModelRate::trains_measured`] and `probe_train`).
    trains_capacity: Option<f64>,
    /// The first start-up's floor from the link capacity (see [`JUMP`]); `None` for a
    /// scavenger, and once a queue was seen or start-up ended: it never comes back.
    jump: Option<Jump>,
    /// Cruising rounds left in which repairs still go out as at the end of the first start-up
    /// (see [`REPEAT_AFTER_STARTUP_ROUNDS`]).
    startup_repair_rounds: u32,
    /// The estimate when the current probe round began.
    probe_base: f64,
    /// How far that probe raised the rate, as a share of the estimate (see
    /// [`ModelRate::probe_extra`]).
    probe_extra_sent: f64,
    /// Probes in a row that found room after a collapse (see [`COLLAPSED`]).
    headroom_probes: u32,
    /// The largest cruising estimate of the last [`PEAK_LIFETIME`].
    peak_bw: Option<(f64, Instant)>,
    cycle: usize,
    /// Cruising, a queue stood last round: send below the estimate until it is gone.
    draining_queue: bool,
    /// What the last drain round delivered, beside connections that share the base RTT, where
    /// the queue stood through it (see [`ModelRate::drain_from_delivery`]).
    drained_delivery: Option<f64>,
    /// The cruising siblings at the last cruising round's end (see
    /// [`ModelRate::cruising_siblings`]): how many, and what they held on average. The probe
    /// is sized from it (see [`ModelRate::split_among_siblings`]). Read once a round and kept:
    /// the pacer asks for the rate at every transmission, and the siblings' record is behind a
    /// lock that every connection to the host takes.
    siblings_held: Option<(usize, f64)>,
    /// Cruising rounds in a row that ended with a standing queue and no loss.
    queue_rounds: u32,
    /// The last round drained on for such a queue without aging the estimate (see
    /// [`RESTRAINED_DELIVERY`]).
    restrained: bool,
    /// The standing queue is another flow's (see [`FOREIGN_QUEUE_ROUNDS`]), and rounds since
    /// the last cut at a loss beside it.
    foreign_queue: bool,
    rounds_since_cut: u32,
    /// The estimate a cut for a queue, or start-up's end, left at the end of the last round:
    /// this round's delivery samples count packets sent before, and are held to it (see
    /// [`ModelRate::hold_next_round`]).
    cut_to: Option<f64>,
    /// Rounds since the flow last stood beside another flow's queue (see [`CALM_ROUNDS`]).
    calm_rounds: u32,
    /// Cruising rounds in a row in which the flow shared the link and its probes found no room
    /// (see [`SHARING_ROUNDS`]).
    sharing_rounds: u32,
    /// Cruising rounds in a row that ended without a standing queue (see [`ROOM_FOUND`]).
    unqueued_rounds: u32,
    /// The queue the current run of such rounds began with.
    streak_queue: Duration,
    /// Cruising, the queue last round was below the threshold but not zero: the hold phases
    /// send that much less over the next round.
    residual_queue: Duration,
    /// Cruising, the queue the last round ended with (a drain for a small one is shallow; see
    /// [`SMALL_DRAIN`]).
    queue_to_drain: Duration,
    /// Whether a queue stood in the previous round (its drops are reported a round later).
    queue_last_round: bool,
    /// The latest reported RTT of this round, and of the previous round at its end (whether
    /// a drain shrank the queue).
    round_last_rtt: Option<Duration>,
    last_round_end_rtt: Option<Duration>,
    /// Loss accounting: this round's counts, and quiet rounds' losses and sends, each decayed
    /// by [`LOSS_MEMORY`] per quiet round (their ratio is the random-loss rate).
    round_lost: u64,
    round_acked: u64,
    /// An ACK of this round advanced over a packet that had been retransmitted (it gave no RTT
    /// sample): its count spans the time the hole held the cumulative ACK.
    round_jumped: bool,
    quiet_lost: f64,
    quiet_sent: f64,
    /// This start-up saw a queue of [`OVERFLOW_QUEUE`] or more above its base RTT (see
    /// [`ModelRate::leave_startup`]).
    startup_saw_overflow: bool,
    scavenger_scale: f64,
    /// The first sequence number (see [`CAPACITY_PACKETS`]).
    first_seq: u64,
    /// Where the flow stands with a stall of its path (see [`STALL_ROUNDS`]).
    stall: Stall,
    /// Highest sequence number sent, at the start of the previous round, of this one, and now.
    sent_a_round_ago: u64,
    sent_at_round_start: u64,
    largest_sent: u64,
    /// Retransmissions so far, and at the start of this round (loss is counted against every
    /// packet sent).
    retransmitted: u64,
    retransmitted_at_round_start: u64,
    /// New packets sent per second in the previous round (0 before one completed).
    sent_pps: f64,
    /// Every packet sent (retransmissions too) per second in the last round.
    sent_all_pps: f64,
    /// The same in the round before.
    sent_all_pps_before: f64,
    /// The receiver's delivery reports have been credible once (see [`WARM_REPORT`]).
    receiver_warm: bool,
    /// The sum and count of the delivery reports of this start-up round (see
    /// [`STARTUP_SHORTFALL`]).
    startup_reports: (f64, u32),
    /// The previous round had losses reported (its holes fill in this one).
    lost_last_round: bool,
    /// The peer's flow window from the handshake, packets.
    peer_window: f64,
    /// [`ModelRate::model_window`] as of the last sample (asked for every packet sent).
    window: u32,
    /// The sender ran out of data this round (see [`ModelRate::next_round`]).
    app_limited: bool,
    /// Cruising rounds in a row with heavy loss and no queue seen (see [`SUSPECT_ROUNDS`]).
    suspect_rounds: u32,
    /// A base-RTT check is running (see [`BASE_CHECK_EXTRA`]).
    checking_base: bool,
    /// When the last base-RTT check was due to end: rounds up to then are excused like
    /// application-limited ones, and the next check waits [`MIN_RTT_LIFETIME`] from it, unless
    /// that check was void (see [`ModelRate::end_base_check`]).
    base_check_end: Option<Instant>,
    /// The last base-RTT check was void: the next waits only [`DRAIN_OUTLIVES_BASE`].
    base_check_void: bool,
}

impl ModelRate {
    /// A controller for `policy`, its pacing rate held within `min_bps..=max_bps` (IP level).
    pub fn new(init: &CcInit, policy: Policy, min_bps: Option<u64>, max_bps: Option<u64>) -> Self {
        let pps = |bps: u64| bps as f64 / (init.mss as f64 * 8.0);
        let mut cc = Self {
            policy,
            min_pps: min_bps.map_or(0.0, pps),
            max_pps: max_bps.map_or(f64::INFINITY, pps),
            phase: Phase::Startup,
            bw_rounds: [0.0; BW_ROUNDS],
            round: 0,
            round_start: init.now,
            min_rtt: None,
            path_rtt: None,
            path_min_rtt: None,
            base_outlived_at: None,
            round_start_base: None,
            base_fell_at: None,
            outlived: None,
            base_outlived: false,
            queue_over_base: None,
            check_answered: None,
            join_answered: None,
            answer_cap: None,
            sending: false,
            draining_since: None,
            round_min_rtt: None,
            capacity: None,
            capacity_reports: CapacityReports::default(),
            last_round: Duration::ZERO,
            min_reported_rtt: None,
            round_reports: (0.0, 0),
            round_report_losses: ReportLosses::default(),
            last_report: None,
            lost_since_report: 0,
            last_loss_rtt: None,
            full_bw: 0.0,
            startup_growths: 0,
            flat_rounds: 0,
            restarted: false,
            small_start_from: None,
            approaching: false,
            trains_capacity: None,
            jump: (policy == Policy::Fair).then_some(Jump::UNMEASURED),
            startup_repair_rounds: 0,
            probe_base: 0.0,
            probe_extra_sent: 0.0,
            headroom_probes: 0,
            peak_bw: None,
            cycle: 0,
            draining_queue: false,
            drained_delivery: None,
            siblings_held: None,
            queue_rounds: 0,
            restrained: false,
            foreign_queue: false,
            rounds_since_cut: 0,
            cut_to: None,
            calm_rounds: 0,
            sharing_rounds: 0,
            unqueued_rounds: 0,
            streak_queue: Duration::ZERO,
            residual_queue: Duration::ZERO,
            queue_to_drain: Duration::ZERO,
            queue_last_round: false,
            round_last_rtt: None,
            last_round_end_rtt: None,
            round_lost: 0,
            round_acked: 0,
            round_jumped: false,
            quiet_lost: 0.0,
            quiet_sent: 0.0,
            startup_saw_overflow: false,
            scavenger_scale: 1.0,
            first_seq: init.isn,
            stall: Stall::None,
            sent_a_round_ago: init.isn,
            sent_at_round_start: init.isn,
            largest_sent: init.isn,
            retransmitted: 0,
            retransmitted_at_round_start: 0,
            sent_pps: 0.0,
            sent_all_pps: 0.0,
            sent_all_pps_before: 0.0,
            receiver_warm: false,
            startup_reports: (0.0, 0),
            lost_last_round: false,
            peer_window: f64::from(init.peer_flow_window),
            window: 0,
            app_limited: false,
            suspect_rounds: 0,
            checking_base: false,
            base_check_end: None,
            base_check_void: false,
        };
        cc.window = cc.model_window();
        cc
    }

    /// The window the model allows, packets: it changes only with a sample.
    fn model_window(&self) -> u32 {
        if self.checking_base {
            return MIN_WINDOW as u32;
        }
        let bw = self.bandwidth();
        let rtt = (self.own_rtt() + ACK_INTERVAL).as_secs_f64();
        let window = if self.phase == Phase::Startup {
            // Startup's own gain: enough to double, no more (its surplus only fills the queue);
            // never below the initial window (the first round may have carried a few packets).
            // Under random loss, at least what holes hold back: the cumulative ACK waits a
            // round trip for a retransmission, and `RECOVERY_ALLOWANCE` more when that is lost
            // too. Doubling's window covers that from about 40 ms; at 10 ms it is 58 ms of
            // data, and at 1 Gbit/s with 5 % loss start-up stalled behind holes in two lab runs
            // of three and ended at 40–150 Mbit/s.
            let bw = bw.max(self.jump.map_or(0.0, |j| j.floor));
            let holes = if self.loss_rate() > 0.0 {
                bw * (rtt + RECOVERY_ALLOWANCE.as_secs_f64())
            } else {
                0.0
            };
            (STARTUP_GAIN * bw * rtt).max(holes).max(INITIAL_WINDOW)
        } else if bw > 0.0 {
            bw * (WINDOW_GAIN * rtt + RECOVERY_ALLOWANCE.as_secs_f64())
        } else {
            INITIAL_WINDOW * STARTUP_GAIN
        };
        window.clamp(MIN_WINDOW, u32::MAX as f64) as u32
    }

    /// A delivery sample bounded by what was sent: the last round's send rate, or before a
    /// round completed the pacing rate. A report over one ACK interval that holds a probe
    /// train (see [`START_TRAIN`]) reads the train's burst, not the rate: uncapped, the first
    /// round's reports put start-up at the link after one round and 2.9 times past it after
    /// the next (the simulator at 100 Mbit/s, 300 ms: 2 107 drops where there were none).
    ///
    /// The send rate counts new data only (see `next_round`), except for a collapsed flow: it
    /// is bounded by the larger of what it sent last round, retransmissions too, and what it
    /// paces at now. After a stall such a flow resends the stall's losses for seconds and sends
    /// no new data; its bound then fell back to the pacing rate of the round a report arrived
    /// in, and a probe's deliveries, reported in the drain round after it, were capped below
    /// the estimate: at 1 Gbit/s, 10 ms the rate stayed at 12 Mbit/s for the 5 s measured in
    /// seeds 7 and 9 of twelve (`stall_recovery_across_seeds`).
    ///
    /// A round that began within a round trip of giving a newcomer its share (see
    /// [`ModelRate::answer_joins`]) is bounded by the estimate as given back: what it delivers
    /// was sent before, and read back into the filter it took the share back within a round.
    fn capped(&self, sample: f64) -> f64 {
        let mut sent = if self.sent_pps > 0.0 {
            self.sent_pps
        } else {
            self.pacing_pps()
        };
        if self.collapsed(self.bandwidth()) {
            sent = sent.max(self.sent_all_pps).max(self.pacing_pps());
        }
        let sample = match self.answer_cap {
            Some((until, cap)) if self.round_start < until => sample.min(cap),
            _ => sample,
        };
        sample.min(DELIVERY_CAP * sent)
    }

    /// The random-loss rate: losses per packet sent over recent quiet rounds.
    fn loss_rate(&self) -> f64 {
        if self.quiet_sent > 0.0 {
            (self.quiet_lost / self.quiet_sent).min(1.0)
        } else {
            0.0
        }
    }

    fn bandwidth(&self) -> f64 {
        self.bw_rounds.iter().copied().fold(0.0, f64::max)
    }

    /// The path's RTT as far as the flow knows it: its own least sample, or a shorter one that
    /// another connection to the host measured.
    fn base_rtt(&self) -> Duration {
        self.shorter_shared_base()
            .map_or(self.own_rtt(), |(path, _)| path)
    }

    /// The least RTT that other connections to the host measured, and when, where it is shorter
    /// than any of the flow's own (then it is the flow's base RTT).
    fn shorter_shared_base(&self) -> Option<(Duration, Instant)> {
        self.path_min_rtt.filter(|&(path, _)| path < self.own_rtt())
    }

    /// The flow's own least RTT sample: the round trip its window must cover, even where a
    /// shared base is shorter.
    fn own_rtt(&self) -> Duration {
        self.min_rtt.map_or(DEFAULT_RTT, |(r, _)| r)
    }

    /// How far this round's smallest receiver-reported RTT sat above the flow's own least RTT:
    /// the queue that stood all round. Not above a shorter base that other connections to the
    /// host measured (see [`ModelRate::base_rtt`]): read against it, newcomers drained for the
    /// queue they started into, and four flows a second apart at 300 ms resent a sixth as much
    /// but converged less (docs/journal/congestion.md, "A newcomer that knows the path ends
    /// start-up at a queue"). `None` when the round gave no report (then nothing is known), or
    /// when its smallest report sat further below that least RTT than jitter explains: such a
    /// report is no measurement but the receiver's starting value (100 ms), before it has timed
    /// an ACK2. Read as no queue, it let a newcomer that joined its siblings at 300 ms take the
    /// losses of a sibling's start-up for random loss, at rates of 0.2–0.8 (the lab).
    fn queueing_delay(&self) -> Option<Duration> {
        let round = self.round_min_rtt?;
        let own = self.min_rtt?.0;
        if self.exceeds(own.saturating_sub(round), QUEUE_FRACTION, QUEUE_SLACK) {
            return None;
        }
        Some(round.saturating_sub(own))
    }

    /// Whether that queue is more than jitter: more than a small one for a fair cruising flow
    /// that shares the link (see [`SMALL_QUEUE_FRACTION`]).
    fn queue_standing(&self) -> Option<bool> {
        let delay = self.queueing_delay()?;
        let small_counts = self.policy == Policy::Fair
            && self.phase == Phase::Cruise
            && self.link_share(self.bandwidth()).is_some();
        Some(if small_counts {
            self.exceeds(delay, SMALL_QUEUE_FRACTION, SMALL_QUEUE_SLACK)
        } else {
            self.is_queue(delay)
        })
    }

    fn gain(&self) -> f64 {
        match self.phase {
            Phase::Startup if self.approaching => APPROACH_GAIN,
            Phase::Startup => STARTUP_GAIN,
            Phase::Drain => 1.0 / STARTUP_GAIN,
            Phase::Cruise if self.draining_queue => self.drain_gain(),
            // Beside another flow's queue (see `FOREIGN_BACKOFF`): no probe, the cycle's drain.
            Phase::Cruise if self.foreign_queue && self.cycle == 1 => CYCLE[1],
            Phase::Cruise if self.foreign_queue => 1.0,
            Phase::Cruise if CYCLE[self.cycle] == 1.0 => {
                // Hold phases drain what queue is left below the threshold: the max filter's
                // noise keeps the estimate a percent or so above the link, and that queue builds
                // slowly, round after round.
                let round = self.round_length().as_secs_f64();
                (1.0 - self.residual_queue.as_secs_f64() / round).max(DRAIN_QUEUE_GAIN)
            }
            Phase::Cruise if self.cycle == 0 => 1.0 + self.probe_extra(),
            // The drain after a probe: as deep as the probe was high, but no deeper than the
            // cycle's (see `MAX_PROBE_EXTRA`).
            Phase::Cruise => (1.0 - self.probe_extra()).max(CYCLE[1]),
        }
    }

    /// The share of the link capacity the receiver's packet pairs measure that an estimate of
    /// `bw` holds, where it is under [`ALONE`] (the flow shares the link); `None` for a flow
    /// alone on the link, or before the capacity is known.
    fn link_share(&self, bw: f64) -> Option<f64> {
        self.capacity.map(|c| bw / c).filter(|&share| share < ALONE)
    }

    /// The gain that drains a standing queue: by share for a fair flow that shares the link
    /// (see [`DRAIN_SHARE`]), no deeper than [`SMALL_DRAIN`] for a queue under the usual
    /// threshold.
    fn drain_gain(&self) -> f64 {
        match self.link_share(self.bandwidth()) {
            Some(share) if self.policy == Policy::Fair => {
                let by_share =
                    (1.0 - (1.0 - DRAIN_QUEUE_GAIN) * share / DRAIN_SHARE).max(DEEPEST_DRAIN);
                if self.is_queue(self.queue_to_drain) {
                    by_share
                } else {
                    let round = self.round_length().as_secs_f64();
                    by_share.max(1.0 - SMALL_DRAIN * self.queue_to_drain.as_secs_f64() / round)
                }
            }
            _ => DRAIN_QUEUE_GAIN,
        }
    }

    /// How far the probe raises the rate, as a share of the estimate (its drain lowers it by
    /// as much, at most by a quarter). A fair flow that shares the link the receiver's
    /// packet pairs measure adds at least [`SHARE_PROBE`] of what the other flows hold of that
    /// link: nearly the same amount for every small flow, less for a large one, so that a small
    /// flow gains more by its probe than a large one (additive increase; the drains every flow
    /// makes for a standing queue are the multiplicative decrease).
    fn probe_extra(&self) -> f64 {
        let probe = CYCLE[0] - 1.0;
        let bw = self.bandwidth();
        let Some(c) = self
            .capacity
            .filter(|_| self.policy == Policy::Fair && bw > 0.0)
        else {
            return probe;
        };
        let sharing = self.link_share(bw).is_some();
        // Where a round is mostly ACK interval the quarter is scaled to the base RTT's part of
        // it: alone (see `ALONE`) below `ALONE_SCALED_BELOW`, sharing the link below
        // `SHARED_SCALED_BELOW`. Not where the capacity reads low.
        let scaled_below = if sharing {
            SHARED_SCALED_BELOW
        } else {
            ALONE_SCALED_BELOW
        };
        let base_of_round = self.probe_share();
        let short_path = base_of_round <= scaled_below;
        let least = if bw <= CAPACITY_CREDIBLE * c && short_path {
            probe * base_of_round
        } else {
            probe
        };
        if sharing {
            // Sharing the link: at least a tenth of what the others hold, unscaled; on a short
            // path no more than `SHARED_PROBE_QUEUE` of a base RTT of queue. Beside siblings,
            // both parts are sized by the endpoint's flows together.
            let others = SHARE_PROBE * (c / bw - 1.0);
            let least = self.least_probe_beside_others(least, c, bw);
            let (least, others) = self.split_among_siblings(least, others, bw);
            let others = if short_path {
                others.min(SHARED_PROBE_QUEUE * base_of_round * c / bw)
            } else {
                others
            };
            least.max(others).min(MAX_PROBE_EXTRA)
        } else {
            least
        }
    }

    /// A sharing fair flow's least probe, `least` of its estimate `bw` on a link of capacity
    /// `c`: once it has shared the link for [`SHARING_ROUNDS`] without siblings, `least` of what
    /// the other flows hold where that is less (the flow holds more than half the link), so
    /// that the larger of two flows adds no more than the smaller.
    fn least_probe_beside_others(&self, least: f64, c: f64, bw: f64) -> f64 {
        if self.shared_alone_a_while() {
            least * (c / bw - 1.0).min(1.0)
        } else {
            least
        }
    }

    /// Whether the flow has shared the link for [`SHARING_ROUNDS`] without siblings: then, over
    /// half the link, it is the largest flow there.
    fn shared_alone_a_while(&self) -> bool {
        self.siblings_held.is_none() && self.sharing_rounds >= SHARING_ROUNDS
    }

    /// The share of the link a fair flow holds once it has shared it a while without siblings
    /// (see [`ModelRate::shared_alone_a_while`]): over half, it is the largest flow there.
    fn settled_share(&self) -> Option<f64> {
        if self.policy == Policy::Fair && self.shared_alone_a_while() {
            self.link_share(self.bandwidth())
        } else {
            None
        }
    }

    /// Whether this is a fair flow that has shared the link a while without siblings and holds
    /// under half of it: not the largest flow there (see [`UNDER_HALF_SKIPS`]).
    fn under_half_a_while(&self) -> bool {
        self.settled_share()
            .is_some_and(|share| share < HALF_THE_LINK)
    }

    /// Once a probe cycle (at [`YIELD_PHASE`]): a fair flow that has shared the link a while
    /// without siblings and holds more than half of it gives back part of its excess over half
    /// (see [`OVER_HALF_YIELD`]).
    fn yield_over_half(&mut self) {
        let Some(share) = self.settled_share().filter(|&share| share > HALF_THE_LINK) else {
            return;
        };
        tracing::debug!(
            isn = self.first_seq,
            share,
            "over half the link, the round before the probe: yield"
        );
        self.cut_estimate(keeping_over_half(share, OVER_HALF_YIELD));
    }

    /// A sharing fair flow's probe beside cruising siblings (connections that share its base
    /// RTT, see [`ModelRate::cruising_siblings`]), from its least probe `least` and the
    /// `tenth` of what the other flows hold, both shares of its estimate `bw`. Each sibling
    /// probes by `least` of what they all (itself included) hold on average, not of its own
    /// estimate: every one adds the same, a flow behind more against its rate and one ahead
    /// less, and the cuts, by share, bring the flows together. The tenth is split among them
    /// all. So the endpoint's flows probe together about as one flow holding what they hold
    /// would. Each of eight siblings at 100 ms probed by the tenth, 70 % of its rate (8.75 %
    /// of the link), and the probes kept +14 % of the base RTT in queue between them; split,
    /// +6 % (docs/journal/congestion.md, "The siblings split the probe").
    fn split_among_siblings(&self, least: f64, tenth: f64, bw: f64) -> (f64, f64) {
        match self.siblings_held {
            Some((count, mean)) => {
                let flows = (count + 1) as f64;
                let held = (mean * count as f64 + bw) / flows;
                (least * held / bw, tenth / flows)
            }
            None => (least, tenth),
        }
    }

    /// The base RTT's share of a round (rounds end at the first ACK after their length).
    fn probe_share(&self) -> f64 {
        let round = self.round_length().max(self.last_round);
        self.base_rtt().as_secs_f64() / round.as_secs_f64()
    }

    /// What hold and probe rounds pace from. For a fair cruising flow that shares the link and
    /// has gone [`CALM_ROUNDS`] without another flow's queue: the largest of its last
    /// [`RECENT_ROUNDS`] round samples, at least [`RECENT_FLOOR`] of the ten-round maximum
    /// `bw`. Otherwise `bw`.
    ///
    /// Drains for a queue start from the maximum (but pace no faster than a hold would), and so
    /// do rounds beside another flow's queue: a flow yields to a loss-based flow only through
    /// its drains. Beside the model of CUBIC (seeds 1–8, last 100 s of 120 at 30 / 100 ms) haul
    /// kept 27.4 / 26.2 Mbit/s before and 27.6 / 26.7 with this rule; with the drains from the
    /// recent rounds too, 23.9 / 23.3, and 20.0 / 20.9 with every use of the estimate.
    fn hold_estimate(&self, bw: f64) -> f64 {
        let recent_counts = self.policy == Policy::Fair
            && self.phase == Phase::Cruise
            && self.calm_rounds >= CALM_ROUNDS
            && self.link_share(bw).is_some();
        if !recent_counts {
            return bw;
        }
        let recent = (0..RECENT_ROUNDS)
            .map(|back| self.bw_rounds[(self.round + BW_ROUNDS - back) % BW_ROUNDS])
            .fold(0.0, f64::max);
        recent.max(RECENT_FLOOR * bw)
    }

    fn pacing_pps(&self) -> f64 {
        let bw = self.bandwidth();
        let initial = STARTUP_GAIN * INITIAL_WINDOW / self.base_rtt().as_secs_f64();
        let rate = if self.phase == Phase::Startup {
            // No slower than the first round: a conversation's first exchanges (a handshake, a
            // request) measure a few packets, not the path.
            let rate = (self.gain() * bw).max(initial);
            let rate = match self.jump {
                Some(jump) if !self.approaching => rate.max(jump.floor),
                _ => rate,
            };
            self.startup_ceiling(bw)
                .map_or(rate, |ceiling| rate.min(ceiling.max(initial)))
        } else if bw > 0.0 && self.draining_queue {
            let bw = self
                .drained_delivery
                .map_or(bw, |delivered| bw.min(delivered));
            (self.gain() * bw).min(self.hold_estimate(bw))
        } else if bw > 0.0 {
            self.gain() * self.hold_estimate(bw)
        } else {
            initial
        };
        let rate = if self.checking_base {
            rate.min(BASE_CHECK_PACKETS / self.base_rtt().as_secs_f64())
        } else {
            rate
        };
        let scale = match self.policy {
            Policy::Fair => 1.0,
            Policy::Scavenger => self.scavenger_scale,
        };
        (rate * scale)
            .clamp(self.min_pps.min(self.max_pps), self.max_pps)
            .max(1.0)
    }

    /// A scavenger cruising below its estimate: its deliveries measure its own restraint, not
    /// the path, so they neither age the estimate nor feed it. When the estimate followed it
    /// down, a scavenger came back from a trickle at 1.25× per probing cycle once the other
    /// traffic was gone (in the lab: 100 s from 12 kbit/s to a 100 Mbit/s link after a TCP flow
    /// ended); when its samples still fed a frozen estimate, the maximum ratcheted up on noise
    /// (12 % above a 1 %-lossy link in the simulator).
    fn holding_back(&self) -> bool {
        self.policy == Policy::Scavenger
            && self.phase == Phase::Cruise
            && self.scavenger_scale < 1.0
    }

    /// A fair flow cruising at a quarter of its peak or more: its round's delivery sample is the
    /// mean of the round's reports, not the largest. Each report is off by a packet or a batch
    /// (and, under random loss, by the loss's spread), and the largest of ~30 a round, kept by a
    /// filter of ten rounds, read 2.3 % above a 100 Mbit/s lab link: every hold round queued, and
    /// the drains that followed left the link idle (docs/journal/congestion.md, session 20).
    /// Start-up and a collapsed flow keep the largest: their rate climbs within a round, and the
    /// recovery rules wait on single reports seeing it. So does the scavenger, whose own scale
    /// decides how fast it comes back.
    fn steady(&self) -> bool {
        self.phase == Phase::Cruise
            && self.policy == Policy::Fair
            && !self.collapsed(self.bandwidth())
    }

    /// Whether a round whose smallest RTT showed a standing queue (`standing`) ends start-up: a
    /// start-up entered again from cruise always (the path held traffic a moment ago), a fair
    /// flow's first one once the link capacity is believed (see [`CAPACITY_PACKETS`]), or once
    /// start-up's trains measured it where the flow started into a queue that its endpoint's
    /// other flows know (see `started_into_a_queue`). A newcomer beside flows that hold the link
    /// never nears the capacity, and doubling on filled the buffer that the next newcomers took
    /// for their base RTT; before the capacity is believed, a flow that started into a full
    /// buffer has measured nothing, and stopping there starved it (docs/journal/congestion.md,
    /// "A start-up that meets a standing queue").
    fn queue_ends_startup(&self, standing: Option<bool>) -> bool {
        let knows_link = self.capacity.is_some()
            || (self.trains_capacity.is_some() && self.started_into_a_queue());
        standing == Some(true) && (self.restarted || (self.policy == Policy::Fair && knows_link))
    }

    /// Whether another connection to the host measured a shorter RTT than any of this flow's
    /// own: the flow started into a queue that the endpoint's other flows see and drain for.
    /// Such a newcomer's start-up ends at a standing queue once start-up's trains measured the
    /// link, without waiting for a window of pairs: doubling on into that queue overflowed it,
    /// and the next newcomer met a full buffer (four flows a second apart at 300 ms, RTT over
    /// 10–20 s +27 % → +8 %). A flow with no such knowledge cannot tell a queue it started into
    /// from the path; ending its start-up early too left four such flows unfair in 15 seeds of
    /// 48 against 5 (docs/journal/congestion.md, "A newcomer that knows the path ends start-up
    /// at a queue").
    fn started_into_a_queue(&self) -> bool {
        self.shorter_shared_base().is_some()
    }

    /// Whether `rate` is below [`COLLAPSED`] of the largest estimate of the last 30 s, divided
    /// among the connections that share the base RTT.
    fn collapsed(&self, rate: f64) -> bool {
        let sharing = self.connections_sharing_the_base() as f64;
        rate < COLLAPSED * self.peak_bw.map_or(0.0, |(peak, _)| peak) / sharing
    }

    /// Whether a loss in start-up whose report took `rtt` came out of a buffer this flow has
    /// filled: the packet after the hole sat behind at least [`OVERFLOW_QUEUE`] of a base RTT of
    /// queue, and the last round no longer grew. Random loss over a short queue does not qualify,
    /// nor does a loss while the flow still grows, as a newcomer does in a queue that other flows
    /// keep full: its start-up goes on (newcomers that stopped at such a loss kept a fifth of a
    /// fair share for seconds). Nor before two start-up rounds have grown, the first from
    /// nothing: that one counts the initial window, and a newcomer whose shared base is shorter
    /// than the queue it starts into reads its next round flat, its deliveries a round late (the
    /// third of four flows at 300 ms left start-up at a seventh of the link and ended the least
    /// in 46 seeds of 48).
    /// Nor while start-up has measured less than an initial window a round: everything it sent
    /// met the full buffer, and it would cruise at that trickle (in the lab a fourth flow left
    /// start-up at 2 packets per second, its first round empty under `--stagger`, and took a
    /// minute to reach 300). Where the path holds fewer than about 32 packets no overflow
    /// ends start-up; its other exits still do.
    fn overflowed(&self, rtt: Duration) -> bool {
        self.flat_rounds >= 1
            && self.startup_growths >= STARTUP_GROWTHS_BEFORE_OVERFLOW
            && self.bandwidth() * self.base_rtt().as_secs_f64() >= INITIAL_WINDOW
            && self.shows_overflow_queue(rtt)
    }

    /// Whether `rtt` sat behind at least [`OVERFLOW_QUEUE`] of a base RTT of queue.
    fn shows_overflow_queue(&self, rtt: Duration) -> bool {
        let base = self.base_rtt();
        rtt.saturating_sub(base) >= base.mul_f64(OVERFLOW_QUEUE)
    }

    /// Whether the receiver's capacity reports come from a window of pairs (see
    /// [`CAPACITY_PACKETS`]).
    fn capacity_believed(&self) -> bool {
        self.sent_a_round_ago.saturating_sub(self.first_seq) >= CAPACITY_PACKETS
    }

    /// Whether start-up delivers nearly the link capacity `ack` reports (see
    /// [`NEAR_CAPACITY`]), a capacity believed or measured with start-up's trains (see
    /// [`ModelRate::trains_measured`]), with what the siblings that share the base RTT last
    /// published (see [`ModelRate::siblings_hold`]). Counting its own delivery alone, each of
    /// four flows started together stayed under 0.85 C and they doubled on together, past the
    /// link: 0.079 / 0.025 of their new packets resent at 300 / 100 ms, 0.000 / 0.000 since
    /// (with [`ModelRate::leave_with_a_share`]; docs/journal/congestion.md, "Siblings that start
    /// together"). A newcomer from another host beside flows that hold the link never nears it.
    fn near_capacity(&self, now: Instant, ack: &AckSample) -> bool {
        let Some(capacity) = self.startup_capacity(ack) else {
            return false;
        };
        let bw = self.bandwidth();
        bw + self.siblings_hold(now) >= NEAR_CAPACITY * capacity
            && bw <= CAPACITY_CREDIBLE * capacity
    }

    /// Whether `ack` reports a link capacity start-up may act on more than [`APPROACH_FAR`]
    /// times what the flow and its siblings deliver.
    fn link_far(&self, now: Instant, ack: &AckSample) -> bool {
        self.startup_capacity(ack).is_some_and(|capacity| {
            APPROACH_FAR * (self.bandwidth() + self.siblings_hold(now)) < capacity
        })
    }

    /// The link capacity `ack` reports, where start-up may act on it: once a window of pairs is
    /// in it (see [`CAPACITY_PACKETS`]), or measured with start-up's trains (see
    /// [`ModelRate::trains_measured`]).
    fn startup_capacity(&self, ack: &AckSample) -> Option<f64> {
        resolved_capacity(ack).filter(|&c| self.capacity_believed() || self.trains_measured(ack, c))
    }

    /// A fair flow starting up beside others that share its base RTT publishes each growth of
    /// its estimate at once, not at the round's end: the siblings' sum then lagged a round of
    /// doubling, and their approach began after the buffer had filled (four together at 300 ms
    /// resent 0.011 of their new packets, 0.000 since).
    fn publish_growth(&self, now: Instant) {
        if let Some(path) = self.shared_record() {
            self.publish_estimate(path, now);
        }
    }

    /// The record of a fair flow that holds one (see [`PathRtt`]), shared or not yet.
    fn fair_record(&self) -> Option<Arc<PathRtt>> {
        self.path_rtt
            .clone()
            .filter(|_| self.policy == Policy::Fair)
    }

    /// The record of a fair flow that shares its base RTT with other connections.
    fn shared_record(&self) -> Option<&PathRtt> {
        self.path_rtt
            .as_deref()
            .filter(|_| self.policy == Policy::Fair && self.shares_with_others())
    }

    /// What the other connections sharing the base RTT last published of their estimates,
    /// starting up or cruising, added up (none for a flow that is not fair).
    fn siblings_hold(&self, now: Instant) -> f64 {
        self.shared_record().map_or(0.0, |path| {
            let others = path.estimates_of_others(self.first_seq, now, SHARED_ESTIMATE_LIFETIME);
            others.sum + others.starting_sum
        })
    }

    /// Whether a flow that shares the link with an estimate of `bw` is small, and should probe
    /// every other round: under [`SMALL_BESIDE_SIBLINGS`] of what the cruising connections that
    /// share its base RTT hold on average, or, without them, under [`SMALL_SHARE`] of the link.
    fn small(&self, now: Instant, bw: f64) -> bool {
        let Some(share) = self.link_share(bw) else {
            return false;
        };
        match self.cruising_siblings(now) {
            Some((_, mean)) => bw < SMALL_BESIDE_SIBLINGS * mean,
            None => share < SMALL_SHARE,
        }
    }

    /// How many connections that share the base RTT published an estimate as cruising in the
    /// last [`SHARED_ESTIMATE_LIFETIME`], and what they held on average; `None` without one,
    /// for a flow that is not fair, or before the flow knows a capacity.
    fn cruising_siblings(&self, now: Instant) -> Option<(usize, f64)> {
        let (_, others) = self
            .shared_record()
            .and_then(|path| self.siblings_on_link(path, now))
            .filter(|(_, others)| others.count > 0)?;
        Some((others.count, others.sum / others.count as f64))
    }

    /// Whether `capacity`, as `ack` reports it before a window of pairs was sent (see
    /// [`CAPACITY_PACKETS`]), comes from start-up's trains: the receiver has acknowledged the
    /// first three ([`EARLY_CAPACITY_PACKETS`]), from which a haul receiver measures it, and it
    /// is not the starting value ([`STARTING_CAPACITY`]).
    ///
    /// Waiting for a window of pairs, start-up doubled on for a round past the link wherever
    /// it reached the link within 1 024 packets: one flow at 100 Mbit/s with a 1-BDP buffer
    /// dropped 632 / 508 / 496 / 629 / 1 008 packets at 10 / 20 / 30 / 50 / 100 ms in the
    /// simulator (seed 1), and 18 / 99 / 0 / 0 / 0 since. A reference receiver blends its starting value
    /// with its first pairs on links under 96 Mbit/s, a reading too low: there the approach
    /// may begin early, and grows by [`APPROACH_GAIN`] a round (docs/journal/congestion.md,
    /// "Start-up nears the link before a window of pairs").
    fn trains_measured(&self, ack: &AckSample, capacity: f64) -> bool {
        ack.ack_seq.saturating_sub(self.first_seq) >= EARLY_CAPACITY_PACKETS
            && capacity != f64::from(STARTING_CAPACITY)
    }

    /// The fastest a start-up paces: the link capacity the receiver measures, where the flow
    /// delivers at most [`CAPACITY_CREDIBLE`] times it (further above, it was read too low).
    /// Beyond the capacity a start-up only builds a queue: doubling past it once the jump had
    /// ended at a queue, and the approach at [`APPROACH_GAIN`] above it, left the first flow's
    /// queue where a newcomer from another host met it, whose start-up then ended at a
    /// shortfall (see [`STARTUP_SHORTFALL`]) at its initial rate, a sixteenth of the link, and
    /// stayed behind for seconds. Two flows started 0.75–1.25 s apart at 300 ms, seeds 17–112
    /// / 113–304: Jain under 0.98 over 8–18 s in 11 / 25 seeds → 2 / 1; in the lab, a newcomer
    /// 0.8 s after the first flow (docs/journal/congestion.md, "Start-up never paces above the
    /// link"). A capacity believed (see [`CAPACITY_PACKETS`]) bounds the approach too; one
    /// measured only with start-up's trains (see [`ModelRate::trains_measured`]) bounds the
    /// doubling, and the approach grows past it: a reference receiver's first reports blend its
    /// starting value in, and read low until its window of pairs is full.
    fn startup_ceiling(&self, bw: f64) -> Option<f64> {
        let trains = self.trains_capacity.filter(|_| !self.approaching);
        self.capacity
            .or(trains)
            .filter(|&c| bw <= CAPACITY_CREDIBLE * c)
    }

    /// The first start-up's floor follows each capacity report until two samples of the
    /// sender's own in a row show a queue (then the pipe holds other traffic, or is full). A
    /// report at the receiver's resolution says nothing; one still at the reference's default
    /// is low, and a low floor does nothing.
    ///
    /// Two, not one: in the lab (a lone flow, 100 Mbit/s, 100 ms, 1 %, 5-s transfers) a
    /// single sample 13 ms over the base RTT, before the receiver had measured the link, ended
    /// the jump; the flow doubled from its initial rate instead, its receiver's reports fell
    /// short of the doubling (see [`STARTUP_SHORTFALL`]), start-up ended at 44 Mbit/s and the
    /// link was reached after 4 s of probes: 5 runs of 50, 1 of 54 since
    /// (docs/journal/congestion.md, "One late sample is not a queue"). A queue of other flows
    /// shows in every sample.
    fn follow_capacity(&mut self, ack: &AckSample) {
        let Some(mut jump) = self.jump.filter(|_| self.phase == Phase::Startup) else {
            return;
        };
        let queued = ack.rtt_sample.map(|s| self.shows_queue(s));
        if queued == Some(true) && jump.queue_seen {
            tracing::debug!(sample = ?ack.rtt_sample, capacity = ?ack.link_capacity, "start-up's jump ends at a queue");
            self.jump = None;
            return;
        }
        if let Some(queued) = queued {
            jump.queue_seen = queued;
        }
        if let Some(capacity) = resolved_capacity(ack).filter(|_| queued != Some(true)) {
            jump.floor = JUMP * capacity;
        }
        self.jump = Some(jump);
    }

    /// A first start-up whose packets were lost [`FULL_BUFFER_GAP`] or more in a row met a full
    /// buffer: random loss does not take so many together, and a path that can still take the
    /// jump does not drop them. The queue may not show: a flow that started into one took it
    /// for its base RTT. Its jump ends. Four flows from different hosts started 0.75–1.25 s
    /// apart at 300 ms (simulator): a third flow that took a 260 ms queue for its base lost 36
    /// packets of a train in a row, then jumped to half the link and lost 3 340 the next round
    /// (seed 80). Seeds 17–112 / 113–304: resent per new packet 0.039 → 0.026, seeds at RTT
    /// +20 % or more 6 → 2 / 19 → 10, Jain under 0.98 10 → 9 / 17 → 19; started exactly a
    /// second apart resent 0.045 → 0.032, RTT +20 % 9 → 4, Jain under 0.98 6 → 8
    /// (docs/journal/congestion.md, "A gap of half a train ends the jump").
    fn end_jump_at_a_full_buffer(&mut self, loss: &LossSample) {
        if self.phase == Phase::Startup
            && self.jump.is_some()
            && loss.longest_gap >= FULL_BUFFER_GAP
        {
            tracing::debug!(
                gap = loss.longest_gap,
                bw = self.bandwidth(),
                "start-up's jump ends at a full buffer"
            );
            self.jump = None;
        }
    }

    /// Whether a base-RTT check may begin at `now`: fair flows only, none running, and none
    /// ended in the last [`MIN_RTT_LIFETIME`] ([`DRAIN_OUTLIVES_BASE`] after a void one).
    fn may_check_base(&self, now: Instant) -> bool {
        self.policy == Policy::Fair
            && !self.checking_base
            && self.base_check_end.is_none_or(|end| {
                let wait = if self.base_check_void {
                    DRAIN_OUTLIVES_BASE
                } else {
                    MIN_RTT_LIFETIME
                };
                now.saturating_duration_since(end) >= wait
            })
    }

    /// Begins a base-RTT check that sends almost nothing for `quiet` and `extra` more (usually
    /// [`BASE_CHECK_EXTRA`]): long enough for a queue of `quiet` to empty. Never quiet longer
    /// than a base RTT, the queue a 1-BDP buffer holds: the queue is read from the peer's RTT
    /// reports, and one that reported an hour would otherwise silence the flow for an hour.
    fn begin_base_check(&mut self, now: Instant, quiet: Duration, extra: Duration) {
        self.suspect_rounds = 0;
        self.checking_base = true;
        self.base_check_void = false;
        self.base_check_end = Some(now + quiet.min(self.base_rtt()) + extra);
    }

    /// When the base RTT is about to age out while a queue stands over it, checks the base RTT
    /// and takes the check's samples for the new base (see [`BASE_RENEWAL_LEAD`]).
    fn renew_base_under_queue(&mut self, now: Instant) {
        let expiring = self.base_measured_at().is_some_and(|at| {
            now.saturating_duration_since(at) + BASE_RENEWAL_LEAD >= MIN_RTT_LIFETIME
        });
        let Some(queue) = self.queue_over_base.filter(|_| expiring) else {
            return;
        };
        if self.shares_with_others() && self.check_base_while_cruising(now, queue, BASE_CHECK_EXTRA)
        {
            tracing::debug!(isn = self.first_seq, base = ?self.base_rtt(), ?queue, "the base RTT ages out under a queue: checking it");
            self.outlive_base(Some(queue));
        }
    }

    /// Begins a check of the base RTT for a queue of `queue` and `extra` more (see
    /// [`ModelRate::begin_base_check`]), if the flow cruises and may check (beside the
    /// connections that share it: [`BASE_RENEWAL_LEAD`], [`ModelRate::call_check`]; as the
    /// drains give the base up: [`ModelRate::watch_drain_streak`]; or under other flows' drain:
    /// [`ModelRate::join_a_drain`]); returns whether it began.
    fn check_base_while_cruising(
        &mut self,
        now: Instant,
        queue: Duration,
        extra: Duration,
    ) -> bool {
        let may = self.phase == Phase::Cruise && self.may_check_base(now);
        if may {
            self.begin_base_check(now, queue, extra);
        }
        may
    }

    /// A cruising flow that shares its base RTT took the queue for another flow's: it calls the
    /// connections that share the base to check it together, and checks for as long as the
    /// queue takes to empty and [`BASE_CHECK_EXTRA`] more. If the queue is theirs, it goes, and
    /// with it the foreign verdict; if it is another flow's, it stays, and the verdict too.
    fn call_check(&mut self, now: Instant, queue: Duration) {
        if !self.shares_with_others()
            || !self.check_base_while_cruising(now, queue, BASE_CHECK_EXTRA)
        {
            return;
        }
        if let Some(path) = &self.path_rtt {
            path.call_check(now);
        }
        self.check_answered = Some(now);
        tracing::debug!(
            isn = self.first_seq,
            ?queue,
            "a queue taken for another flow's: calling the siblings to check"
        );
    }

    /// Answers a sibling's call for a check (see [`ModelRate::call_check`]) made in the last
    /// [`BASE_CHECK_EXTRA`]: a later one would check alone.
    fn answer_check_call(&mut self, now: Instant) {
        let Some(called) = self.path_rtt.as_ref().and_then(|path| path.check_called()) else {
            return;
        };
        if self
            .check_answered
            .is_some_and(|answered| answered >= called)
        {
            return;
        }
        self.check_answered = Some(called);
        let queue = self.queue_over_base.unwrap_or_default();
        if now.saturating_duration_since(called) <= BASE_CHECK_EXTRA
            && self.check_base_while_cruising(now, queue, BASE_CHECK_EXTRA)
        {
            tracing::debug!(isn = self.first_seq, ?queue, "a sibling called for a check");
        }
    }

    /// Whether other connections to the host share the flow's base RTT now (each controller
    /// holds the one [`PathRtt`] of its host; the endpoint only a weak reference).
    fn shares_with_others(&self) -> bool {
        self.connections_sharing_the_base() > 1
    }

    /// How many connections to the host share the flow's base RTT now, this one included:
    /// each controller holds the one [`PathRtt`] of its host, the endpoint a weak reference.
    fn connections_sharing_the_base(&self) -> usize {
        self.path_rtt.as_ref().map_or(1, Arc::strong_count)
    }

    /// When the base RTT (the flow's own least sample or a shorter shared one) was measured.
    fn base_measured_at(&self) -> Option<Instant> {
        let (_, own) = self.min_rtt?;
        Some(self.shorter_shared_base().map_or(own, |(_, at)| at))
    }

    /// Lets the base RTT expire: the next sample replaces it. Where a check of it began for a
    /// queue of `checked`, the base it had is kept until the check ends (see
    /// [`ModelRate::end_base_check`]).
    fn outlive_base(&mut self, checked: Option<Duration>) {
        self.base_outlived = true;
        self.outlived = checked.and_then(|queue| {
            Some(OutlivedBase {
                base: self.min_rtt?,
                outlived_at: self.base_outlived_at,
                queue_top: self.base_rtt() + queue,
            })
        });
    }

    /// A fair flow that shares the link sees an RTT sample fall below the base RTT it held in
    /// this round (at the round's start, or since, if it expired) by more than a small queue
    /// ([`SMALL_QUEUE_FRACTION`]): other flows are emptying a queue its base holds, as a flow
    /// that started into another's queue has it. A cruising one checks its base with them, for
    /// as long as the fall so far and [`BASE_CHECK_EXTRA`] more, but no more than a base RTT
    /// more, so that the queue empties and every flow measures the path; and for
    /// [`ROOM_AFTER_A_FALL`] the room its probes find is the room the checking flows left, not a
    /// link come back. A flow alone on the link does not: its RTT falls as its own drains empty
    /// its own queue. Four flows from different hosts with jittered starts, seeds 17–112, with
    /// the void checks of [`ModelRate::end_base_check`]: RTT +20 % or more over 10–20 s at
    /// 300 ms in 20 seeds of 96 → 6, over +10 % at 100 ms in 15 → 6. The whole
    /// [`BASE_CHECK_EXTRA`] at 10 ms (20 base RTTs) cost four flows 0.993 → 0.989 of the link
    /// (docs/journal/congestion.md, "Flows that started into a queue drain it together").
    fn join_a_drain(&mut self, now: Instant, sample: Duration) {
        let Some(start) = self.round_start_base else {
            return;
        };
        let fall = start.max(self.base_rtt()).saturating_sub(sample);
        if self.policy != Policy::Fair
            || !self.exceeds(fall, SMALL_QUEUE_FRACTION, SMALL_QUEUE_SLACK)
            || self.link_share(self.bandwidth()).is_none()
        {
            return;
        }
        self.base_fell_at = Some(now);
        self.headroom_probes = 0;
        if self.check_base_while_cruising(now, fall, BASE_CHECK_EXTRA.min(self.base_rtt())) {
            tracing::debug!(isn = self.first_seq, base = ?self.base_rtt(), ?sample, "the RTT falls under the base: checking it with the flows that drain");
        }
    }

    /// Whether the flow's RTT fell under other flows' drain (see [`ModelRate::join_a_drain`])
    /// in the last [`ROOM_AFTER_A_FALL`].
    fn base_fell_lately(&self, now: Instant) -> bool {
        self.base_fell_at
            .is_some_and(|at| now.saturating_duration_since(at) < ROOM_AFTER_A_FALL)
    }

    /// Ends a base-RTT check that has run its time. A check of a base given up under a queue
    /// (see [`ModelRate::outlive_base`]) whose least sample came within [`QUEUE_SLACK`] of that
    /// queue is void: the other flows filled what this one left, as newcomers in start-up do,
    /// and it tells nothing of the path. The base it gave up stands (until its own lifetime
    /// ends), and the next check may come [`DRAIN_OUTLIVES_BASE`] after it. Taken for the path,
    /// such a check's queue (a full buffer, at 300 ms with four flows from different hosts
    /// started 0.75–1.25 s apart) became every flow's base in turn.
    fn end_base_check(&mut self, now: Instant) {
        if !self.checking_base || self.base_check_end.is_none_or(|end| now < end) {
            return;
        }
        tracing::debug!(base = ?self.base_rtt(), "base-RTT check ends");
        self.checking_base = false;
        if let Some(outlived) = self.outlived.take() {
            if self.own_rtt() + QUEUE_SLACK >= outlived.queue_top {
                tracing::debug!(base = ?outlived.base.0, queue_top = ?outlived.queue_top, "the queue did not fall while the base was checked: void");
                self.min_rtt = Some(outlived.base);
                self.base_outlived_at = outlived.outlived_at;
                self.base_check_void = true;
            }
        }
        self.window = self.model_window();
    }

    /// Whether an RTT sits further above the base RTT than jitter explains: a queue.
    fn shows_queue(&self, sample: Duration) -> bool {
        self.is_queue(sample.saturating_sub(self.base_rtt()))
    }

    /// Whether a queueing delay is more than jitter by the usual threshold.
    fn is_queue(&self, delay: Duration) -> bool {
        self.exceeds(delay, QUEUE_FRACTION, QUEUE_SLACK)
    }

    /// Whether a queueing delay is more than `fraction` of the base RTT plus `slack`.
    fn exceeds(&self, delay: Duration, fraction: f64, slack: Duration) -> bool {
        delay > self.base_rtt().mul_f64(fraction) + slack
    }

    /// Start-up approaching the link saw a queue in `sample`, one of its own unsmoothed RTT
    /// samples (the receiver's smoothed RTT lags the queue by rounds on long paths): the pipe is
    /// full.
    fn end_approach(&mut self, now: Instant, sample: Option<Duration>) {
        if self.phase == Phase::Startup
            && self.approaching
            && sample.is_some_and(|s| self.shows_queue(s))
        {
            tracing::debug!(?sample, "start-up approaching the link sees a queue");
            self.drain_from_here(now);
        }
    }

    /// What loss reports say of the queue: the smaller RTT sample of this report and the last
    /// one before it that had a sample (`None` for the first). A single report can be late by a
    /// round trip or more with no queue at all: when the first report of a gap is lost on the
    /// way back (the lab loses ACKs and NAKs as it loses data), the receiver's timer repeats it
    /// before anything was retransmitted, and it reads as a first report; a real overflow drops
    /// many packets and every report after it shows the queue. (At 1 Gbit/s, 100 ms, 5 % both
    /// ways, one such report, 240 ms after the packet behind the hole left, ended start-up at
    /// ~30 Mbit/s in one lab run of 36 — and every time with that run's seed.)
    fn loss_queue_rtt(&mut self, sample: Option<Duration>) -> Option<Duration> {
        let sample = sample?;
        self.last_loss_rtt
            .replace(sample)
            .map(|last| last.min(sample))
    }

    /// A delivery-rate report arrived: the losses reported since the last one belong to the
    /// span between the two (the receiver reports a gap the moment the packet after it arrives,
    /// and sends both reports back on the same path), as do the arrivals the rate counts.
    fn count_report_span(&mut self, now: Instant) {
        if let Some(last) = self.last_report.replace(now) {
            let span = now.saturating_duration_since(last).as_secs_f64();
            self.round_report_losses.lost += self.lost_since_report as f64;
            self.round_report_losses.span += span;
        }
        self.lost_since_report = 0;
    }

    /// Start-up found the pipe full mid-round: the round ends here and a whole round of drain
    /// follows, instead of waiting for rounds that no longer grow.
    fn drain_from_here(&mut self, now: Instant) {
        self.next_round(now);
        self.leave_startup();
    }

    /// Start-up ends; a round of drain follows. On a short path (see [`ModelRate::short_path`])
    /// a start-up that saw a queue of [`OVERFLOW_QUEUE`] or more above its base RTT filled the
    /// buffer itself, so its base holds no other flow's queue, and a random-loss rate its rounds
    /// read above what random loss ever is ([`MAX_RANDOM_LOSS`]) was its own overflow: the rate
    /// is forgotten. There start-up's rounds end before that queue shows in their smallest RTT,
    /// so the overflow read as random loss, and the rounds after it as a flow that took a queue
    /// for its base RTT: 16 lab runs of 20 (100 Mbit/s, 10 ms, no loss) paused for a base-RTT
    /// check after start-up, 200 ms of a 2 s transfer; 2 of 20 since. A newcomer that started
    /// into a standing queue sees no such queue, and its loss rate stays: the check is what it
    /// needs. On every path this rule left four flows a second apart at 300 ms in the lab with
    /// more queue (docs/journal/congestion.md, "Start-up's overflow read as random loss").
    ///
    /// The drain round's delivery sample is held to the estimate start-up ended at (as a cut's
    /// is, see [`ModelRate::cut_estimate`]): that round delivers what start-up's last round sent
    /// at its gain, and beside other flows the queue hands each its part of what arrives, so
    /// the round read more than the newcomer's share and raised its estimate (4 800 → 6 250
    /// packets per second beside two flows on a link of 8 500). Four flows from different hosts
    /// at 300 ms, started 0.75–1.25 s apart, seeds 17–112: RTT +20 % or more in 38 → 20 seeds
    /// (docs/journal/congestion.md, "The round after start-up held"). A fair flow's only:
    /// held, a scavenger left the model of a loss-based flow 0.62 of its rate alone at 30 ms
    /// (`a_scavenger_yields_to_a_loss_based_flow_and_comes_back` asks 0.9).
    fn leave_startup(&mut self) {
        self.phase = Phase::Drain;
        if self.policy == Policy::Fair {
            self.hold_next_round();
        }
        let own_overflow = std::mem::take(&mut self.startup_saw_overflow);
        if own_overflow && self.short_path() && self.loss_rate() >= MAX_RANDOM_LOSS {
            self.quiet_lost = 0.0;
            self.quiet_sent = 0.0;
        }
    }

    /// Whether the base RTT is short enough that the queue threshold's slack is most of it
    /// (under [`QUEUE_SLACK`] ÷ [`QUEUE_FRACTION`], 20 ms): there a round's smallest RTT misses
    /// a queue that start-up's overshoot fills and drops from within the round.
    fn short_path(&self) -> bool {
        self.base_rtt().mul_f64(QUEUE_FRACTION) < QUEUE_SLACK
    }

    /// Notes an RTT sample in start-up that shows a queue of [`OVERFLOW_QUEUE`] or more.
    fn note_startup_queue(&mut self, rtt: Duration) {
        if self.phase == Phase::Startup && self.shows_overflow_queue(rtt) {
            self.startup_saw_overflow = true;
        }
    }

    fn update_min_rtt(&mut self, now: Instant, sample: Duration) {
        if std::mem::take(&mut self.base_outlived) {
            self.min_rtt = Some((sample, now));
            self.base_outlived_at = Some(now);
        } else {
            keep_minimum(&mut self.min_rtt, now, sample);
        }
        self.exchange_path_rtt(now);
    }

    /// With each sample of its own, offers the flow's least RTT to the endpoint's connections
    /// to the host, and takes the least of theirs for its base if shorter: a flow that starts
    /// into a queue the others keep then sees that queue, as they do, and its start-up's
    /// overflow rule acts (four flows a second apart at 300 ms resent 0.158 → 0.032 of their
    /// new packets; docs/journal/congestion.md, "A base RTT shared by an endpoint's
    /// connections").
    /// Not a shared sample older than its own base's last expiry under [`DRAIN_OUTLIVES_BASE`].
    fn exchange_path_rtt(&mut self, now: Instant) {
        let (Some(path), Some((own, at))) = (&self.path_rtt, self.min_rtt) else {
            return;
        };
        let least = path.update(|least| {
            keep_minimum(least, at, own);
            *least
        });
        self.path_min_rtt = least.filter(|&(_, at)| {
            at <= now
                && now.duration_since(at) <= MIN_RTT_LIFETIME
                && self.base_outlived_at.is_none_or(|expired| at > expired)
        });
    }

    /// Counts how long a fair flow has drained for a queue that stands, round after round
    /// (`drained`: the round that ended did), and past [`DRAIN_OUTLIVES_BASE`] and
    /// [`DRAIN_OUTLIVES_ROUNDS`] lets its base RTT expire — unless other connections share the
    /// base: they see the same queue and drain for it too, so one that outlives their drains is
    /// theirs (their estimates add up to more than the link) or a foreign flow's, and taking it
    /// for the path hid it from every flow. Eight flows a second apart at 100 ms filled the
    /// buffer for good that way (RTT +98 %, resending 0.47 of their new packets); the base-RTT
    /// renewal and the siblings' call keep a shared base true instead
    /// (docs/journal/congestion.md, "A shared base RTT outlives the drains").
    ///
    /// The base is checked as it expires, unless a check ran in the last [`MIN_RTT_LIFETIME`]:
    /// almost nothing sent for as long as the queue takes to empty and [`BASE_CHECK_EXTRA`]
    /// more, and the check's least sample is the new base. A queue that flows from different
    /// hosts keep, each with a base of its own, empties as they give up their bases in turn,
    /// and they measure the path again; a queue that stays was the path's or another flow's,
    /// and the base takes it as before. Unchecked, every base at 300 ms came to hold 60–80 ms
    /// of queue, the drains no longer emptied it, and the flows took it for another flow's and
    /// filled the buffer. Four flows a second apart from different hosts at 300 ms, seeds
    /// 17–112: RTT +20 % or more in 38 seeds of 96 → 5, Jain under 0.98 in 11 → 6. Beside the
    /// model of CUBIC (seeds 1–48) haul's mean holds (31.1 → 31.6 Mbit/s at 100 ms), its least
    /// seed does not (27.6 → 25.2): checked there, the base stays near the path's and haul
    /// drains on for CUBIC's queue (docs/journal/congestion.md, "A base RTT checked as the
    /// drains give it up").
    fn watch_drain_streak(&mut self, now: Instant, drained: bool) {
        if !drained {
            self.draining_since = None;
            return;
        }
        let shared = self.shares_with_others();
        let (since, rounds) = self.draining_since.get_or_insert((now, 0));
        *rounds += 1;
        if now.saturating_duration_since(*since) >= DRAIN_OUTLIVES_BASE
            && *rounds > DRAIN_OUTLIVES_ROUNDS
            && !shared
        {
            let base = self.base_rtt();
            let queue = self.queue_over_base.unwrap_or_default();
            let check = self.check_base_while_cruising(now, queue, BASE_CHECK_EXTRA);
            tracing::debug!(
                isn = self.first_seq,
                ?base,
                check,
                "drained on for a queue that stays: the base RTT expires"
            );
            self.outlive_base(check.then_some(queue));
            self.draining_since = None;
        }
    }

    /// Whether a standing queue is another flow's (see [`FOREIGN_QUEUE_ROUNDS`]), from how this
    /// cruising round ended; beside one, a round with losses cuts the estimate and one without
    /// grows it.
    fn watch_foreign_queue(
        &mut self,
        now: Instant,
        standing: Option<bool>,
        queueing: Option<Duration>,
        round_lost: u64,
        bw: f64,
    ) {
        let queue = queueing.unwrap_or_default();
        if self.queue_rounds == 0 {
            self.streak_queue = queue;
        }
        match standing {
            Some(true) if round_lost == 0 => self.queue_rounds += 1,
            Some(true) if !self.foreign_queue => self.queue_rounds = 0,
            Some(true) | None => {}
            Some(false) => {
                self.queue_rounds = 0;
                self.foreign_queue = false;
            }
        }
        if self.policy == Policy::Fair
            && self.queue_rounds >= FOREIGN_QUEUE_ROUNDS
            && queue >= self.streak_queue + QUEUE_SLACK
            && self.is_queue(queue)
            && !self.foreign_queue
            && !self.siblings_ask_too_much(now)
        {
            tracing::debug!(
                bw,
                "a queue grew through drains without loss: another flow's"
            );
            self.foreign_queue = true;
        }
        self.rounds_since_cut = self.rounds_since_cut.saturating_add(1);
        if !self.foreign_queue {
            return;
        }
        if round_lost == 0 {
            self.grow_beside_foreign_queue();
        } else if self.rounds_since_cut >= FOREIGN_CUT_ROUNDS {
            tracing::debug!(bw, "loss beside another flow's queue: cut");
            self.rounds_since_cut = 0;
            self.cut_estimate(FOREIGN_BACKOFF);
        }
    }

    /// Beside another flow's queue, a round without losses adds to the estimate what TCP adds
    /// to its window: [`FOREIGN_GROWTH`] packets per RTT each RTT, at the round's last RTT. That
    /// RTT is the peer's report, and is taken as no shorter than an ACK interval: a report of
    /// zero (a peer's bug, or a hostile one) would otherwise make the estimate infinite.
    fn grow_beside_foreign_queue(&mut self) {
        let bw = self.bandwidth();
        let Some(rtt) = self.round_last_rtt.filter(|_| bw > 0.0) else {
            return;
        };
        let rtt = rtt.max(ACK_INTERVAL).as_secs_f64();
        let added = FOREIGN_GROWTH * self.last_round.as_secs_f64() / (rtt * rtt);
        self.scale_estimate(1.0 + added / bw);
    }

    /// A standing queue formed in a hold round of a fair flow that shares the link: give back in
    /// proportion to the share (see [`SHARE_CUT`]), and without siblings at least part of what
    /// it holds over half the link (see [`OVER_HALF_CUT`]).
    fn cut_by_share(&mut self, bw: f64) {
        let Some(share) = self.link_share(bw) else {
            return;
        };
        let by_share = 1.0 - SHARE_CUT * share;
        let factor = if share > HALF_THE_LINK && self.siblings_held.is_none() {
            by_share.min(keeping_over_half(share, OVER_HALF_CUT))
        } else {
            by_share
        };
        tracing::debug!(
            isn = self.first_seq,
            bw,
            factor,
            "a queue in a hold round: cut by share"
        );
        self.cut_estimate(factor);
    }

    /// The last RTT sample of this round and of the round before: the queue at the rounds'
    /// ends (a round's smallest sample comes early in a round whose queue grows).
    fn round_end_rtts(&self) -> Option<(Duration, Duration)> {
        self.round_last_rtt.zip(self.last_round_end_rtt)
    }

    /// A cruising fair flow's round delivered `delivered` packets per second (what arrived and
    /// what random loss took): if that is less than it sent while the queue grew, the flows'
    /// estimates add up to more than the link (see [`OVERSUBSCRIBED`]).
    fn cut_to_delivery(&mut self, delivered: f64) {
        let sent = self.sent_all_pps.min(self.sent_all_pps_before);
        let bw = self.bandwidth();
        if sent <= 0.0
            || delivered >= OVERSUBSCRIBED * sent
            || delivered < OVERSUBSCRIBED_FLOOR * sent
            || self.collapsed(bw)
        {
            return;
        }
        let queue_grew = self
            .round_end_rtts()
            .is_some_and(|(now, before)| now > before + QUEUE_SLACK);
        if !queue_grew {
            return;
        }
        let weight = self.link_share(bw).map_or(1.0, |share| {
            let most = if share < HALF_THE_LINK {
                UNDER_HALF_WEIGHT
            } else {
                OVERSUBSCRIBED_WEIGHT
            };
            (share / DRAIN_SHARE).powi(2).min(most)
        });
        let factor = 1.0 - (1.0 - delivered / sent) * weight;
        tracing::debug!(
            isn = self.first_seq,
            delivered,
            sent,
            factor,
            "the queue grew and the round delivered less than it sent: cut"
        );
        self.cut_estimate(factor.max(OVERSUBSCRIBED_DEEPEST));
    }

    /// A drain round ended with a standing queue and `round_lost` packets lost: if the queue
    /// did not shrink over the round while the buffer dropped packets, the estimate overruns
    /// the link (see [`OVERRUN_CUT`]). Whether it shrank is read at the rounds' ends: a round's
    /// smallest RTT comes early in a round whose queue grows (a hold round paced a little over
    /// the link), so the drain round after it, which shrinks the queue but not yet below that,
    /// read as held (the lab at 100 Mbit/s, 300 ms, 5 %: two cuts, the rate at 0.64).
    fn cut_for_overrun(&mut self, bw: f64, round_lost: u64, sent_all: u64) {
        let Some(capacity) = self.capacity else {
            return;
        };
        let queue_held = self
            .round_end_rtts()
            .is_some_and(|(now, before)| now + QUEUE_SLACK >= before);
        let floor = OVERRUN_SHARE * capacity;
        let delivered = self.bw_rounds[self.round] >= OVERRUN_DELIVERY * self.sent_all_pps;
        let share = self.link_share(bw);
        let loss_rate = self.loss_rate();
        let random = if share.is_none() && loss_rate < MAX_RANDOM_LOSS {
            let expected = loss_rate * sent_all as f64;
            (OVERRUN_RANDOM * expected).max(expected + OVERRUN_SPREAD * expected.sqrt())
        } else {
            0.0
        };
        if !queue_held || (round_lost as f64) <= random || bw < floor || !delivered {
            return;
        }
        let factor = share.map_or(OVERRUN_CUT, |share| 1.0 - OVERRUN_SHARE_CUT * share);
        let cut = (factor * bw).max(floor);
        if cut < bw {
            tracing::debug!(
                isn = self.first_seq,
                bw,
                cut,
                round_lost,
                loss_rate,
                "a drain into an overflowing queue: cut"
            );
            for slot in &mut self.bw_rounds {
                *slot = slot.min(cut);
            }
        }
    }

    /// A fair flow that shares its base RTT publishes its estimate beside its siblings' each
    /// round (marked as starting up until it cruises); when a cruising round ended with a
    /// standing queue that is theirs (not another flow's)
    /// and their estimates add up to more than the link capacity C, it gives back its part of
    /// the excess: in proportion to the square of its estimate, so that large flows give more
    /// than small ones and the shares converge (with equal estimates, each scales by C ÷ the
    /// sum). At most by half ([`OVERSUBSCRIBED_DEEPEST`]).
    ///
    /// Each flow's estimate is the largest of ten noisy rounds, so the estimates of flows that
    /// share a link add up to more than it: 1.1–1.5 C for eight flows, whose drains and cuts by
    /// share, at an eighth of the link each, barely emptied the queue (RTT +72 % at 100 ms),
    /// and four at 300 ms kept up to +29 % (docs/journal/congestion.md, "The siblings'
    /// estimates add up to the link").
    fn cut_to_the_shared_link(&mut self, now: Instant, standing: Option<bool>) {
        let Some(path) = self.fair_record() else {
            return;
        };
        if let Some(factor) = self.part_of_the_excess(&path, now, standing) {
            self.scale_estimate(factor.max(OVERSUBSCRIBED_DEEPEST));
        }
        self.publish_estimate(&path, now);
    }

    /// Whether the estimates of the connections that share the base RTT, the flow's own
    /// included, add up to more than the link (see [`ModelRate::part_of_the_excess`]): a queue
    /// they keep is theirs, not another flow's. Eight flows a second apart from one endpoint
    /// took their own queue for another's, grew beside it as beside CUBIC, and kept it until
    /// their bases aged out (the siblings' call comes once per 10 s): at 100 ms the worst seed
    /// of 24 kept +75 % of queue, +24 % since (docs/journal/congestion.md, "A queue the
    /// siblings' estimates explain is theirs").
    fn siblings_ask_too_much(&self, now: Instant) -> bool {
        self.shared_record()
            .and_then(|path| self.siblings_on_link(path, now))
            .is_some_and(|(capacity, others)| {
                others.count > 0 && others.sum + self.bandwidth() > capacity
            })
    }

    /// The link capacity the flow and the connections that publish on `path` agree on (the
    /// largest any of them reads: trains that other flows' packets interleave read it low),
    /// and what the others published; `None` before the flow knows a capacity.
    fn siblings_on_link(&self, path: &PathRtt, now: Instant) -> Option<(f64, SharedEstimates)> {
        // A capacity of nothing (a peer's report of 0) says nothing about the link.
        let capacity = self.capacity.filter(|&c| c > 0.0)?;
        let others = path.estimates_of_others(self.first_seq, now, SHARED_ESTIMATE_LIFETIME);
        let capacity = others.link_capacity.map_or(capacity, |c| c.max(capacity));
        Some((capacity, others))
    }

    /// What a cruising flow keeps of its estimate once it has given back its part of what its
    /// siblings on `path` and it ask beyond the link (see
    /// [`ModelRate::cut_to_the_shared_link`]); `None` where nothing is to be given back.
    fn part_of_the_excess(
        &self,
        path: &PathRtt,
        now: Instant,
        standing: Option<bool>,
    ) -> Option<f64> {
        if self.phase != Phase::Cruise || standing != Some(true) || self.foreign_queue {
            return None;
        }
        let (capacity, others) = self.siblings_on_link(path, now)?;
        let bw = self.bandwidth();
        let (sum, squares) = (others.sum + bw, others.squares + bw * bw);
        if others.count == 0 || sum <= capacity || squares <= 0.0 {
            return None;
        }
        let factor = 1.0 - (sum - capacity) * bw / squares;
        tracing::debug!(
            isn = self.first_seq,
            sum,
            capacity,
            factor,
            "the siblings' estimates add up to more than the link: cut"
        );
        Some(factor)
    }

    /// A fair flow whose start-up (and its drain) ends beside other connections that share its
    /// base RTT, cruising or starting up, cruises at no more than an equal share of the link
    /// capacity: the largest any of them knows, a capacity measured with start-up's trains
    /// counted. Its estimate measured whatever room the siblings left while it doubled, not a
    /// share: four flows started together left start-up with 1.3–1.8 times the link between
    /// them, and the probe that follows start-up overflowed the buffer. The cut by squares
    /// ([`ModelRate::cut_to_the_shared_link`]) left them 1.2 times the link here: they leave one
    /// after another, and each read some of the others' estimates before their cut and some
    /// after (docs/journal/congestion.md, "Siblings that start together").
    fn leave_with_a_share(&mut self, now: Instant) {
        let Some(path) = self.fair_record() else {
            return;
        };
        let bw = self.bandwidth();
        if let Some(share) = self.equal_share(&path, now).filter(|&share| bw > share) {
            tracing::debug!(
                isn = self.first_seq,
                bw,
                share,
                "start-up ends beside siblings: an equal share"
            );
            self.scale_estimate(share / bw);
        }
        self.publish_estimate(&path, now);
    }

    /// An equal share of the link among the flow and the connections that published on `path`
    /// in the last [`SHARED_ESTIMATE_LIFETIME`], of the largest capacity any of them knows (see
    /// [`ModelRate::leave_with_a_share`]); `None` where the flow is alone on it or no capacity
    /// is known.
    fn equal_share(&self, path: &PathRtt, now: Instant) -> Option<f64> {
        let others = path.estimates_of_others(self.first_seq, now, SHARED_ESTIMATE_LIFETIME);
        let flows = 1 + others.count + others.starting;
        let capacity = (self.capacity.or(self.trains_capacity).into_iter())
            .chain(others.link_capacity)
            .reduce(f64::max)
            .filter(|&c| c > 0.0 && flows >= 2)?;
        Some(capacity / flows as f64)
    }

    /// Takes the flow's estimate back from its siblings' record, if it shares one: a round that
    /// measured the application, and a closed connection, hold no share of the link.
    fn withdraw_estimate(&self) {
        if let Some(path) = &self.path_rtt {
            path.withdraw_estimate(self.first_seq);
        }
    }

    /// Publishes the flow's estimate, the link capacity it knows, and whether it is still
    /// starting up (start-up or its drain), on `path` at `now`.
    fn publish_estimate(&self, path: &PathRtt, now: Instant) {
        let estimate = Estimate {
            connection: self.first_seq,
            packets_per_second: self.bandwidth(),
            link_capacity: self.capacity,
            starting: self.phase != Phase::Cruise,
        };
        path.publish_estimate(estimate, now, SHARED_ESTIMATE_LIFETIME);
    }

    /// A fair flow about to send its first packet beside connections that share its base RTT,
    /// where those that cruise hold at least [`JOIN_HELD`] of the link between them, takes its
    /// share of what they hold and cruises at once, from their base RTT: what they hold divided
    /// among them, those still starting up (whose rate is not known yet) and itself. Each
    /// cruising one gives that share back at its next ACK (see [`ModelRate::answer_joins`]):
    /// together they hold what they held, as one flow from the endpoint would (RFC 3124's
    /// congestion manager). Otherwise it starts up, and tells them so. A start-up beside them
    /// doubles into their queue: the buffer overflowed at each newcomer, and four flows a second
    /// apart resent 0.027 / 0.013 of their new packets at 300 / 100 ms (0.006 / 0.000 since;
    /// docs/journal/congestion.md, "A newcomer joins its siblings").
    ///
    /// Its probe cycle begins at a hold phase that its initial sequence number (random) picks:
    /// newcomers that joined at the same point of a sibling's cycle probed right after it, and a
    /// round that meets the queue another flow's probe built cuts to its delivery (see
    /// [`OVERSUBSCRIBED`]); of two flows at 100 ms the newcomer ended the smaller in 43 seeds of
    /// 48.
    fn join_siblings(&mut self, now: Instant) {
        if self.policy != Policy::Fair || self.phase != Phase::Startup || !self.shares_with_others()
        {
            return;
        }
        let Some(path) = self.path_rtt.clone() else {
            return;
        };
        let Some(join) = self.join_beside(&path, now) else {
            self.publish_estimate(&path, now);
            return;
        };
        tracing::debug!(
            isn = self.first_seq,
            share = join.share,
            keep = join.keep,
            capacity = join.capacity,
            "a newcomer joins its siblings"
        );
        self.phase = Phase::Cruise;
        self.jump = None;
        self.capacity = Some(join.capacity);
        self.min_rtt = Some(join.base);
        self.path_min_rtt = Some(join.base);
        self.bw_rounds[self.round] = join.share;
        let holds = (CYCLE.len() - FIRST_HOLD) as u64;
        self.cycle = FIRST_HOLD + (self.first_seq % holds) as usize;
        self.publish_estimate(&path, now);
        let announced = Join {
            connection: self.first_seq,
            at: now,
            keep: join.keep,
        };
        path.announce_join(announced, SHARED_ESTIMATE_LIFETIME);
        self.join_answered = Some(now);
        self.window = self.model_window();
    }

    /// What a newcomer would take beside the connections that share `path` at `now` (see
    /// [`ModelRate::join_siblings`]): `None` where none cruises, where those that cruise hold
    /// less than [`JOIN_HELD`] of the link they know, or where no base RTT measured in the last
    /// [`MIN_RTT_LIFETIME`] is shared.
    fn join_beside(&self, path: &PathRtt, now: Instant) -> Option<Joining> {
        let base = path
            .get()
            .filter(|&(_, at)| at <= now && now.duration_since(at) <= MIN_RTT_LIFETIME)?;
        let shared = path.estimates_of_others(self.first_seq, now, SHARED_ESTIMATE_LIFETIME);
        let capacity = shared.link_capacity.filter(|&c| c > 0.0)?;
        if shared.count == 0 || shared.sum < JOIN_HELD * capacity {
            return None;
        }
        let others = (shared.count + shared.starting) as f64;
        Some(Joining {
            share: shared.sum / (others + 1.0),
            keep: others / (others + 1.0),
            capacity,
            base,
        })
    }

    /// A cruising fair flow gives back the shares of the newcomers that joined it (see
    /// [`ModelRate::join_siblings`]) in the last [`JOIN_ANSWER_WITHIN`]; another flow notes
    /// them, and gives back nothing.
    fn answer_joins(&mut self, now: Instant) {
        // Every ACK asks, and almost every answer is none: no reference to the record is taken
        // until there is a join to answer.
        let Some(joins) = self.path_rtt.as_ref().and_then(|path| {
            path.joins_after(self.first_seq, self.join_answered, now, JOIN_ANSWER_WITHIN)
        }) else {
            return;
        };
        self.join_answered = Some(joins.latest);
        if self.policy != Policy::Fair || self.phase != Phase::Cruise {
            return;
        }
        tracing::debug!(
            isn = self.first_seq,
            keep = joins.keep,
            "a newcomer joined: its share given back"
        );
        self.scale_estimate(joins.keep);
        let sent_before = self.base_rtt() + ACK_INTERVAL;
        self.answer_cap = Some((now + sent_before, self.bandwidth()));
        if let Some(path) = &self.path_rtt {
            self.publish_estimate(path, now);
        }
    }

    /// Cuts the estimate by `factor` for a queue, and holds the next round's delivery sample to
    /// the cut: that round delivers packets sent before the cut, at the old rate, and taken into
    /// the ten-round maximum they undid the cut a round later (2 258 → 1 129 → 2 150 packets per
    /// second), so the flows never backed off and the buffer stayed full. For the halving beside
    /// another flow's queue (since session 76), the cut by share and the delivered-less-than-sent
    /// cut (since session 77): four flows a second apart from different hosts, seeds 17–112, RTT
    /// +20 % or more in 20 / 5 seeds at 100 / 300 ms → 2 / 5 → 0 / 0. Not the siblings' cut
    /// ([`ModelRate::cut_to_the_shared_link`]): held, it left eight flows at 300 ms up to +35 %
    /// against +26 % (docs/journal/congestion.md, "A cut that lasts", "Every cut lasts").
    fn cut_estimate(&mut self, factor: f64) {
        self.scale_estimate(factor);
        self.hold_next_round();
    }

    /// Holds the next round's delivery sample to the estimate as it stands: that round delivers
    /// packets sent before, at a higher rate (after a cut, or start-up's gain).
    fn hold_next_round(&mut self) {
        self.cut_to = Some(self.bandwidth());
    }

    /// Scales every round of the bandwidth filter by `factor`.
    fn scale_estimate(&mut self, factor: f64) {
        for slot in &mut self.bw_rounds {
            *slot *= factor;
        }
    }

    /// How long a round lasts: a round trip, and at least one ACK interval more so that every
    /// round sees ACKs.
    fn round_length(&self) -> Duration {
        let rtt = self.base_rtt() + ACK_INTERVAL;
        let bw = self.bandwidth();
        // Only once cruising: in start-up a UDT4 receiver's first reports (16 packets per
        // second) would stretch the first rounds to a second each.
        if bw > 0.0 && self.phase == Phase::Cruise {
            rtt.max(Duration::from_secs_f64(MIN_ROUND_PACKETS / bw).min(MAX_ROUND))
        } else {
            rtt
        }
    }
}

/// The link capacity `ack` reports, unless it is at the receiver's resolution (says nothing).
fn resolved_capacity(ack: &AckSample) -> Option<f64> {
    ack.link_capacity
        .filter(|&c| c < CAPACITY_UNRESOLVED)
        .map(f64::from)
}

impl CongestionControl for ModelRate {
    fn name(&self) -> &'static str {
        match self.policy {
            Policy::Fair => "model-fair",
            Policy::Scavenger => "model-scavenger",
        }
    }

    fn on_ack(&mut self, now: Instant, ack: &AckSample) {
        self.round_acked += ack.newly_acked;
        self.round_jumped |= ack.newly_acked > 0 && ack.rtt_sample.is_none();
        self.renew_base_under_queue(now);
        self.answer_check_call(now);
        self.answer_joins(now);
        if let Some(rtt) = ack.rtt_sample {
            self.join_a_drain(now, rtt);
            self.update_min_rtt(now, rtt);
            self.note_startup_queue(rtt);
        }
        if let Some(c) = resolved_capacity(ack).filter(|_| self.capacity_believed()) {
            self.capacity = Some(self.capacity_reports.push(now, c));
        }
        let reported = ack.reported_rtt;
        self.round_min_rtt = Some(self.round_min_rtt.map_or(reported, |m| m.min(reported)));
        self.round_last_rtt = Some(reported);
        keep_minimum(&mut self.min_reported_rtt, now, reported);
        self.largest_sent = self.largest_sent.max(ack.path.largest_sent);
        self.retransmitted = self.retransmitted.max(ack.path.retransmitted);
        if ack.delivery_rate.is_some() {
            self.count_report_span(now);
        }
        let bw_before = self.bandwidth();
        if let Some(rate) = ack.delivery_rate.filter(|_| self.phase == Phase::Startup) {
            self.startup_reports.0 += f64::from(rate);
            self.startup_reports.1 += 1;
        }
        if let Some(rate) = ack.delivery_rate.filter(|_| !self.holding_back()) {
            // As measured (within what was sent); the round's end decides on loss correction.
            // Cruising, a round counts the mean of its reports (see `steady`).
            if self.steady() {
                self.round_reports.0 += f64::from(rate);
                self.round_reports.1 += 1;
            } else {
                let sample = self.capped(rate as f64);
                let slot = &mut self.bw_rounds[self.round];
                *slot = slot.max(sample);
            }
        }
        if self.phase == Phase::Startup && self.bandwidth() > bw_before {
            self.publish_growth(now);
        }
        if let Some(c) = resolved_capacity(ack).filter(|&c| self.trains_measured(ack, c)) {
            self.trains_capacity = Some(c);
        }
        self.follow_capacity(ack);
        if self.phase == Phase::Startup
            && !self.restarted
            && !self.approaching
            && self.near_capacity(now, ack)
        {
            tracing::debug!(capacity = ?ack.link_capacity, bw = self.bandwidth(), believed = self.capacity_believed(), "start-up approaches the link");
            self.approaching = true;
        } else if self.phase == Phase::Startup && self.approaching && self.link_far(now, ack) {
            tracing::debug!(capacity = ?ack.link_capacity, bw = self.bandwidth(), "start-up: the link is further than the approach took it to be");
            self.approaching = false;
        }
        self.end_approach(now, ack.rtt_sample);
        self.end_base_check(now);
        if now.saturating_duration_since(self.round_start) >= self.round_length() {
            self.next_round(now);
        }
        self.window = self.model_window();
    }

    fn on_loss(&mut self, now: Instant, loss: &LossSample) {
        self.round_lost += loss.lost;
        self.lost_since_report += loss.lost;
        self.end_base_check(now);
        if let Some(rtt) = loss.rtt_sample {
            self.update_min_rtt(now, rtt);
        }
        tracing::trace!(sample = ?loss.rtt_sample, first = loss.first_lost, lost = loss.lost, "loss report");
        // Under heavy loss the cumulative ACK nearly always waits on a retransmission and ACKs
        // give no RTT sample; loss reports still do.
        let queued = self.loss_queue_rtt(loss.rtt_sample);
        if let Some(rtt) = queued {
            self.note_startup_queue(rtt);
        }
        self.end_approach(now, queued);
        self.end_jump_at_a_full_buffer(loss);
        if let Some(rtt) = queued {
            if self.phase == Phase::Startup && self.overflowed(rtt) {
                // Start-up has filled the pipe and the buffer: each round trip more at its gain
                // drops most of what it adds (and the holes hold in-order delivery for round
                // trips).
                tracing::debug!(
                    ?rtt,
                    sample = ?loss.rtt_sample,
                    base = ?self.base_rtt(),
                    bw = self.bandwidth(),
                    first_lost = loss.first_lost,
                    lost = loss.lost,
                    "start-up: a loss out of a full buffer"
                );
                self.drain_from_here(now);
            }
        }
        self.window = self.model_window();
    }

    fn on_timeout(&mut self, now: Instant, _path: &PathEstimate) {
        // A base-RTT check whose few packets were all lost gets no ACK to end it.
        self.end_base_check(now);
        // Otherwise nothing to change: the rate and the phase stand. A timeout usually means a
        // retransmission was lost too while the window was full (at 10 % loss, one in ten), not
        // that the model is wrong; startup grows only on delivery reports, so a path that went
        // silent stops its growth by itself. (Ending startup here stopped a 1 Gbit/s, 10 ms,
        // 10 % path at 20 Mbit/s, and probing took 4 s more to reach the link.)
    }

    fn pacing_period(&self) -> Duration {
        Duration::from_secs_f64(1.0 / self.pacing_pps())
    }

    fn probe_train(&self) -> u64 {
        // A fair flow cruises in trains until it knows the link: behind coalescing (the lab's
        // 200 µs ticks, GRO) pairs do not resolve, and a flow whose start-up's trains met a
        // full buffer never learned the capacity (see `SMALL_START`).
        let unmeasured = self.policy == Policy::Fair
            && self.phase == Phase::Cruise
            && self.capacity.or(self.trains_capacity).is_none();
        if (self.phase == Phase::Startup && self.jump.is_some()) || unmeasured {
            START_TRAIN
        } else {
            2
        }
    }

    fn share_path_rtt(&mut self, path: Arc<PathRtt>) {
        self.path_rtt = Some(path);
    }

    fn repair_copies(&self, again: bool) -> u8 {
        // Random loss measured and no queue last round: a lost retransmission was bad luck, not
        // a sign that the path is full.
        if self.loss_rate() <= 0.0 || self.queue_last_round {
            return 1;
        }
        // The end of the first start-up (the jump's floor still stands, so no queue was
        // seen) and the rounds after it (REPEAT_AFTER_STARTUP_ROUNDS), alone on the link,
        // on a long path (REPEAT_FIRST_FROM_RTT): a first repair goes twice, one lost again
        // REPEAT_AGAIN_COPIES times.
        let first_startup = self.jump.is_some() || self.startup_repair_rounds > 0;
        let alone = self.capacity.is_some() && self.link_share(self.bandwidth()).is_none();
        if first_startup && alone && self.base_rtt() >= REPEAT_FIRST_FROM_RTT {
            return if again { REPEAT_AGAIN_COPIES } else { 2 };
        }
        // A repair lost again: twice, only where holds are long against the peer's buffer
        // (REPEAT_BELOW_ROUNDS) or the round trip is long (REPEAT_FROM_RTT); elsewhere a second
        // copy only costs the square of the loss rate in extra retransmissions.
        let rounds_buffered =
            self.peer_window / (self.bandwidth() * self.round_length().as_secs_f64()).max(1.0);
        if again && (rounds_buffered < REPEAT_BELOW_ROUNDS || self.base_rtt() >= REPEAT_FROM_RTT) {
            2
        } else {
            1
        }
    }

    fn window(&self) -> u32 {
        self.window
    }

    fn on_app_limited(&mut self, _now: Instant) {
        self.app_limited = true;
    }

    fn on_idle_restart(&mut self, now: Instant, idle: Duration) {
        // The round so far spanned the time the sender sat idle: it ends here, excused, and the
        // next starts with the sending. Before, a connection whose first data followed a pause
        // (`haul sync` waits while the far side hashes its older file) measured packets per
        // pause, left startup at a few packets per second, and took a minute to recover.
        // Only after running dry: a slow flow with a backlog may have nothing in flight
        // between two paced packets, and that is no idleness.
        // And only after a pause of a round or more: a sender that keeps running dry for
        // moments (on loopback the writer often falls behind the pacer for tens of
        // microseconds) otherwise cut rounds of a fraction of a millisecond, each an
        // over-read burst that raised the estimate, and start-up never ended (3 × the
        // receiver's rate; a tenth of the packets were lost from its socket buffer).
        if self.app_limited && idle >= self.round_length() {
            self.next_round(now);
            self.window = self.model_window();
        }
        if !std::mem::replace(&mut self.sending, true) {
            self.join_siblings(now);
        }
    }
}

impl Drop for ModelRate {
    /// A closed connection's estimate no longer counts among its siblings'.
    fn drop(&mut self) {
        self.withdraw_estimate();
    }
}

/// Keeps in `min` the smallest sample of the last [`MIN_RTT_LIFETIME`] (a new one once the old
/// has aged out).
fn keep_minimum(min: &mut Option<(Duration, Instant)>, now: Instant, sample: Duration) {
    let expired = min.is_none_or(|(_, at)| now.saturating_duration_since(at) > MIN_RTT_LIFETIME);
    if expired || min.is_some_and(|(m, _)| sample <= m) {
        *min = Some((sample, now));
    }
}

/// Keeps in `max` the largest sample of the last [`PEAK_LIFETIME`] (a new one once the old has
/// aged out).
fn keep_maximum(max: &mut Option<(f64, Instant)>, now: Instant, sample: f64) {
    let expired = max.is_none_or(|(_, at)| now.saturating_duration_since(at) > PEAK_LIFETIME);
    if expired || max.is_some_and(|(m, _)| sample >= m) {
        *max = Some((sample, now));
    }
}

/// The first start-up's floor on its pacing rate from the receiver's capacity reports (see
/// [`JUMP`]), packets per second.
#[derive(Debug, Clone, Copy)]
struct Jump {
    /// At least this: a share of the capacity.
    floor: f64,
    /// The sender's last RTT sample showed a queue.
    queue_seen: bool,
}

impl Jump {
    /// Before any capacity report: no floor.
    const UNMEASURED: Self = Self {
        floor: 0.0,
        queue_seen: false,
    };
}

/// A newcomer's place beside its siblings (see [`ModelRate::join_beside`]).
#[derive(Debug, Clone, Copy)]
struct Joining {
    /// Its estimate, packets per second.
    share: f64,
    /// What each sibling keeps of its own.
    keep: f64,
    /// The link capacity the siblings know, packets per second.
    capacity: f64,
    /// Their base RTT, and when it was measured.
    base: (Duration, Instant),
}

/// A base RTT given up under a queue while a check of it runs (see
/// [`ModelRate::outlive_base`]).
#[derive(Debug, Clone, Copy)]
struct OutlivedBase {
    /// The flow's own least sample, and when it came.
    base: (Duration, Instant),
    /// When the base had last expired before.
    outlived_at: Option<Instant>,
    /// The RTT the queue stood at as the check began.
    queue_top: Duration,
}

/// Builds [`ModelRate`] controllers.
#[derive(Debug, Clone, Copy)]
pub struct ModelRateFactory {
    /// What to optimise for.
    pub policy: Policy,
    /// Never pace below this (bits per second, IP level).
    pub min_bps: Option<u64>,
    /// Never pace above this (bits per second, IP level).
    pub max_bps: Option<u64>,
}

impl Default for ModelRateFactory {
    fn default() -> Self {
        Self {
            policy: Policy::Fair,
            min_bps: None,
            max_bps: None,
        }
    }
}

impl CongestionControlFactory for ModelRateFactory {
    fn build(&self, init: &CcInit) -> Box<dyn CongestionControl> {
        Box::new(ModelRate::new(
            init,
            self.policy,
            self.min_bps,
            self.max_bps,
        ))
    }
}

/// The factor on the estimate of a flow at `share` of the link (over half) that gives back
/// `part` of what it holds over half.
fn keeping_over_half(share: f64, part: f64) -> f64 {
    1.0 - part * (share - HALF_THE_LINK) / share
}

#[cfg(test)]
mod tests;
