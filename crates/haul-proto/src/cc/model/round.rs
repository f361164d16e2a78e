//! The end of a round: what it measured ([`RoundEnd`]), and what the controller does about it
//! (`ModelRate::next_round`).

use super::constants::*;
use super::{keep_maximum, ModelRate, Phase, Policy, Stall};
use crate::cc::CongestionControl;
use std::time::{Duration, Instant};

/// What one round measured, read once at its end.
struct RoundEnd {
    /// The mean of the round's delivery-rate reports (while [`ModelRate::steady`]), capped.
    report_mean: Option<f64>,
    /// The losses reported between those reports.
    report_losses: ReportLosses,
    /// The round measured the application (or the flow's own restraint), not the path.
    app_limited: bool,
    /// New packets sent in the round.
    sent: u64,
    /// Every packet sent in the round, retransmissions too.
    sent_all: u64,
    /// Packets reported lost in the round.
    lost: u64,
    /// The mean of the delivery reports of a start-up round, where it had
    /// [`SHORTFALL_REPORTS`] or more.
    startup_delivery: Option<f64>,
    /// Whether a queue stood through the round (`None`: no RTT sample says).
    standing: Option<bool>,
    /// The queueing delay over the base RTT.
    queueing: Option<Duration>,
    /// The smaller of two readings of the queue left at the round's least RTT (see
    /// [`ModelRate::residual_reading`]).
    residual: Option<Duration>,
    /// Neither this round nor the one before had a standing queue (or might have had one).
    quiet: bool,
    /// More lost than random loss ever explains.
    heavy_loss: bool,
    /// The random-loss rate, this round counted.
    loss_rate: f64,
    /// The bandwidth estimate, this round's samples counted.
    bw: f64,
}

impl RoundEnd {
    /// A queue stood, or no RTT sample rules one out.
    fn queue(&self) -> bool {
        self.standing.unwrap_or(true)
    }
}

impl ModelRate {
    /// Runs once per round: ages the bandwidth filter, advances the phase, updates the loss rate.
    pub(super) fn next_round(&mut self, now: Instant) {
        let holding_back = self.holding_back();
        let end = self.read_round(now, holding_back);
        let (ended_phase, ended_cycle) = (self.phase, self.cycle);
        let round_min_rtt = self.round_min_rtt.take();
        self.queue_over_base = round_min_rtt
            .filter(|&rtt| self.shows_queue(rtt))
            .map(|rtt| rtt.saturating_sub(self.base_rtt()));
        self.advance_phase(now, &end, ended_cycle);
        self.round_start_base = self.min_rtt.map(|_| self.base_rtt());
        // Only cruising rounds go on with a streak of drains: one without data to send, or a
        // start-up again, ends it (the drain flag is left as it was by such rounds).
        let drained = self.policy == Policy::Fair
            && ended_phase == Phase::Cruise
            && self.phase == Phase::Cruise
            && !end.app_limited
            && self.draining_queue
            && end.standing == Some(true);
        self.watch_drain_streak(now, drained);
        if end.app_limited {
            // It measured the application: no share of the link to publish.
            self.withdraw_estimate();
        } else if ended_phase == Phase::Drain && self.phase == Phase::Cruise {
            self.leave_with_a_share(now);
        } else {
            self.cut_to_the_shared_link(now, end.standing);
        }
        if self.phase == Phase::Cruise {
            keep_maximum(&mut self.peak_bw, now, end.bw);
            if self.cycle == 0 {
                self.probe_base = end.bw;
                self.probe_extra_sent = self.probe_extra();
            }
        }
        if self.policy == Policy::Scavenger {
            // The queue of its own probe (seen in the probe's round and in the next, which gets
            // its reports) is not other traffic.
            let own_probe =
                !holding_back && ended_phase == Phase::Cruise && ended_cycle < FIRST_HOLD;
            self.scale_scavenger(end.queueing, own_probe);
        }
        let round_sample = self.age_bandwidth_filter(end.app_limited);
        self.calm_rounds = if self.foreign_queue {
            0
        } else {
            self.calm_rounds.saturating_add(1)
        };
        self.round_start = now;
        self.last_round_end_rtt = self.round_last_rtt.take();
        tracing::trace!(
            isn = self.first_seq,
            now = ?now,
            phase = ?self.phase,
            gain = self.gain(),
            cycle = self.cycle,
            draining = self.draining_queue,
            foreign = self.foreign_queue,
            queue_rounds = self.queue_rounds,
            round_min_rtt = ?round_min_rtt,
            residual = ?self.residual_queue,
            bw_pps = self.bandwidth(),
            round_sample,
            min_rtt = ?self.min_rtt.map(|(r, _)| r),
            path_min_rtt = ?self.path_min_rtt.map(|(r, _)| r),
            loss = self.loss_rate(),
            queue = end.queue(),
            jump = ?self.jump,
            capacity = ?self.capacity,
            sent = end.sent,
            sent_all = end.sent_all,
            lost = end.lost,
            app_limited = end.app_limited,
            "model round"
        );
    }

    /// Closes the round's counts: its delivery samples go into the bandwidth filter, its
    /// losses into the random-loss rate.
    fn read_round(&mut self, now: Instant, holding_back: bool) -> RoundEnd {
        let (report_mean, report_losses, app_limited) = self.take_reports(holding_back);
        let (sum, reports) = std::mem::take(&mut self.startup_reports);
        let startup_delivery = (reports >= SHORTFALL_REPORTS).then(|| sum / f64::from(reports));
        self.last_round = now.saturating_duration_since(self.round_start);
        self.sample_own_delivery(app_limited, holding_back);
        let (sent, sent_all) = self.count_sent(app_limited);
        // Unknown counts as a queue: only rounds known to be quiet may excuse their losses.
        let standing = self.queue_standing();
        let queue = standing.unwrap_or(true);
        let queueing = self.queueing_delay();
        let residual = self.residual_reading(queueing);
        // Loss reports lag the drops by a round trip: a round's losses are random only if
        // neither it nor the round before had a standing queue. On a short path a drain round's
        // are start-up's overshoot (see `leave_startup`).
        let overshoot = self.phase == Phase::Drain && self.short_path();
        let quiet = !(queue || self.queue_last_round || overshoot);
        self.queue_last_round = queue;
        if quiet && sent_all > 0 {
            // Losses without a queue are random: they set the rate to correct for. Counted
            // against what was sent, not what was acknowledged: the cumulative ACK waits behind
            // holes and jumps, so a round may acknowledge nothing or ten rounds' worth.
            self.quiet_lost = LOSS_MEMORY * self.quiet_lost + self.round_lost as f64;
            self.quiet_sent = LOSS_MEMORY * self.quiet_sent + sent_all as f64;
        }
        let loss_rate = self.loss_rate();
        if quiet && loss_rate < MAX_RANDOM_LOSS && !app_limited {
            self.correct_for_random_loss(report_mean, report_losses, loss_rate);
        }
        // More lost than random loss ever explains: congestion, whatever the delay says. A flow
        // that started into a standing queue took it for its base RTT and sees none; without
        // this it went on losing four packets in five while the flows that saw the queue
        // drained for it.
        let heavy_loss = sent_all >= HEAVY_LOSS_PACKETS
            && self.round_lost as f64 >= MAX_RANDOM_LOSS * sent_all as f64;
        if let Some(cut) = self.cut_to.take() {
            // Its deliveries are of packets sent at the rate before the cut.
            let slot = &mut self.bw_rounds[self.round];
            *slot = slot.min(cut);
        }
        let lost = std::mem::take(&mut self.round_lost);
        self.startup_repair_rounds = self.startup_repair_rounds.saturating_sub(1);
        self.round_acked = 0;
        self.round_jumped = false;
        RoundEnd {
            report_mean,
            report_losses,
            app_limited,
            sent,
            sent_all,
            lost,
            startup_delivery,
            standing,
            queueing,
            residual,
            quiet,
            heavy_loss,
            loss_rate,
            bw: self.bandwidth(),
        }
    }

    /// Takes the round's delivery-rate reports (their mean goes into the filter), the losses
    /// between them, and whether the round measured the application rather than the path.
    fn take_reports(&mut self, holding_back: bool) -> (Option<f64>, ReportLosses, bool) {
        // A round in which the sender ran out of data measured the application, not the path:
        // it neither ages the bandwidth filter nor counts towards leaving startup or probing
        // (a request–response conversation like rsync's otherwise paced its next burst at the
        // trickle of the last exchange — seconds for 64 KiB on loopback).
        // Unless a queue stood all through it: then the path was the limit after all (a
        // receiver short of CPU queues in its socket buffer while the sender's writer, on the
        // same cores, falls behind now and then too).
        // A scavenger holding back measures its own restraint, just the same (see
        // `holding_back`).
        let (sum, reports) = std::mem::take(&mut self.round_reports);
        let report_mean = (reports > 0).then(|| self.capped(sum / f64::from(reports)));
        if let Some(mean) = report_mean {
            let slot = &mut self.bw_rounds[self.round];
            *slot = slot.max(mean);
        }
        let report_losses = std::mem::take(&mut self.round_report_losses);
        let app_limited = (std::mem::take(&mut self.app_limited)
            && self.queue_standing() != Some(true))
            || holding_back
            || self
                .base_check_end
                .is_some_and(|end| end >= self.round_start);
        (report_mean, report_losses, app_limited)
    }

    /// The sender's own delivery sample: what this round's ACKs acknowledged, per second, into
    /// the filter where it can be trusted.
    fn sample_own_delivery(&mut self, app_limited: bool, holding_back: bool) {
        // In startup, the sender's own delivery sample too: what this round's ACKs acknowledged,
        // per second. A UDT4 receiver's estimator starts at one packet per second and needs a
        // few rounds to warm up. Later the receiver's reports alone count: when a hole fills, the
        // cumulative ACK jumps over a round trip of deliveries, which would read as a burst.
        let elapsed = self.last_round.as_secs_f64();
        if elapsed > 0.0 && self.round_acked > 0 && !holding_back {
            let own = self.capped(self.round_acked as f64 / elapsed);
            let slot = &mut self.bw_rounds[self.round];
            if self.round_jumped && self.phase != Phase::Startup {
                // The cumulative ACK jumped over a hole filled by a retransmission and counted
                // rounds of earlier deliveries at once (start-up, before the receiver's reports
                // are warm, has only this count). A flow held by its window behind a lost
                // retransmission read 43 509 packets per second on an 8 500 packets per second
                // link this way, though no loss was reported in that round or the one before,
                // and flooded four flows' shared queue for the ten rounds the filter kept it.
            } else if app_limited {
                // Time without data to send is in the round: a lower bound, nothing more.
                *slot = slot.max(own);
            } else if self.phase == Phase::Startup && !self.receiver_warm {
                // Only until the receiver's reports are warm (at least half of ours once), on
                // a round that counted enough packets — by our ACKs or by its reports. Behind
                // holes the cumulative ACK counts a handful while the receiver sees hundreds: a
                // newcomer that lost most of its first rounds in a queue others kept full took
                // 13 packets per second from its ACKs for its estimate, left start-up with it and
                // starved (the simulator, four flows at 300 ms, seed 34 with jittered starts).
                let counted = (self.round_acked as f64).max(*slot * elapsed);
                self.receiver_warm = counted >= WARM_PACKETS as f64 && *slot >= own * WARM_REPORT;
                if !self.receiver_warm {
                    *slot = own;
                }
            } else if self.round_lost == 0 && !self.lost_last_round {
                // Later only in rounds without loss: ours reads the cumulative ACK's jump over
                // a filled hole as a burst of deliveries (it would pace far above the link),
                // but without holes it is exact — and a UDT4 receiver's report is not: its
                // median of arrival gaps runs 5–10 % below what arrives and misses a probe
                // (seen on loopback: stuck at 50 Mbit/s, every probe unseen, for 40 s).
                *slot = slot.max(own);
            }
        }
        self.lost_last_round = self.round_lost > 0;
    }

    /// New packets sent this round, and every packet sent (retransmissions too); updates the
    /// send rates.
    fn count_sent(&mut self, app_limited: bool) -> (u64, u64) {
        let sent = self.largest_sent.saturating_sub(self.sent_at_round_start);
        let sent_all = sent
            + self
                .retransmitted
                .saturating_sub(self.retransmitted_at_round_start);
        let elapsed = self.last_round.as_secs_f64();
        if elapsed > 0.0 {
            // A round in which the sender ran dry (or sat idle between bursts) understates what
            // it sends while it has data: that is the pacing rate. New data only: a flow busy
            // with repairs has its estimate held down, a response to loss that sharing needs
            // (counting retransmissions too, four flows at 300 ms with jittered starts had a
            // median Jain index of 0.77–0.78 in two sets of 48 seeds, against 0.86 without).
            self.sent_all_pps_before = self.sent_all_pps;
            self.sent_all_pps = sent_all as f64 / elapsed;
            let pps = sent as f64 / elapsed;
            self.sent_pps = if app_limited {
                pps.max(self.pacing_pps())
            } else {
                pps
            };
            self.sent_a_round_ago = self.sent_at_round_start;
            self.sent_at_round_start = self.largest_sent;
            self.retransmitted_at_round_start = self.retransmitted;
        }
        (sent, sent_all)
    }

    /// The residual queue read two ways — against the sender's base RTT (`queueing`) and
    /// against the smallest reported RTT — each biased upward by a constant of its own (the
    /// sender's samples carry up to an ACK interval of delay, a UDT4 receiver's RTT a
    /// millisecond of its processing on loopback): the smaller reading is the safer one.
    /// Draining on a bias alone would lower the rate round after round.
    fn residual_reading(&self, queueing: Option<Duration>) -> Option<Duration> {
        self.round_min_rtt
            .zip(self.min_reported_rtt)
            .map(|(round, (base, _))| round.saturating_sub(base))
            .zip(queueing)
            .map(|(reported, sender)| reported.min(sender))
    }

    /// A quiet round's delivery sample, given back what random loss at `loss_rate` took.
    fn correct_for_random_loss(
        &mut self,
        report_mean: Option<f64>,
        report_losses: ReportLosses,
        loss_rate: f64,
    ) {
        // Corrected for random loss, a round still cannot have delivered more than was sent in
        // it or in the round before (whose packets its reports partly count). The ten-round
        // maximum of corrected samples picks their noise from above. Cruising, a round adds
        // the losses reported over its reports' span to the mean rate they report: those
        // are the same packets, lost or not, so the round's own luck cancels out, where the
        // mean divided by 1 − the loss rate of recent rounds carried it (100 Mbit/s, 10 ms,
        // 5 / 10 % loss, seeds 1–8: RTT +9.8 / +11.5 % → +5.5 / +7.0 %;
        // docs/journal/congestion.md, "Losses counted where they happen").
        let steady = self.steady();
        let slot = &mut self.bw_rounds[self.round];
        let sent_rate = self.sent_all_pps.max(self.sent_all_pps_before);
        let served = report_mean
            .filter(|_| steady)
            .and_then(|mean| report_losses.served(mean, loss_rate));
        let corrected = served.unwrap_or(*slot / (1.0 - loss_rate));
        *slot = slot.max(corrected.min(sent_rate));
    }

    /// Start-up, drain or cruise: the phase (and the probe cycle) the round's end leads to.
    fn advance_phase(&mut self, now: Instant, end: &RoundEnd, ended_cycle: usize) {
        let bw = end.bw;
        match self.phase {
            Phase::Startup if self.queue_ends_startup(end.standing) => {
                tracing::debug!(bw, "start-up: a round's smallest RTT shows a queue");
                self.leave_startup();
            }
            // A scavenger starting into a queue has found other traffic (or filled the path):
            // doubling on would overflow the queue and cut the other flow's window, which then
            // takes seconds to grow back (CUBIC kept 50–64 of 100 Mbit/s at 30 ms; 83–90 since).
            Phase::Startup
                if self.policy == Policy::Scavenger
                    && end.queueing.is_some_and(|q| q > SCAVENGER_TARGET) =>
            {
                self.leave_startup();
            }
            Phase::Startup if self.delivers_short(end) => {
                tracing::debug!(
                    bw,
                    delivered = ?end.startup_delivery,
                    sent_before = self.sent_all_pps_before,
                    lost = end.lost,
                    "start-up: the round delivered less than was sent before it"
                );
                self.leave_startup();
            }
            Phase::Startup => {
                if bw >= self.full_bw * STARTUP_GROWTH {
                    self.startup_growths += 1;
                    self.full_bw = bw;
                    self.flat_rounds = 0;
                } else if !end.app_limited {
                    self.flat_rounds += 1;
                    if self.flat_rounds >= STARTUP_FLAT_ROUNDS {
                        self.leave_startup();
                    }
                }
            }
            // One round at the drain gain empties what startup queued.
            Phase::Drain => {
                self.phase = Phase::Cruise;
                if self.jump.take().is_some() {
                    self.startup_repair_rounds = REPEAT_AFTER_STARTUP_ROUNDS;
                }
                self.restarted = false;
                self.approaching = false;
            }
            // A round without data to send measured the application, not the path, but a probe
            // and its drain end all the same: held at the probe's gain, a writer a little slower
            // than it sent what it had a quarter over the estimate round after round, and the
            // queue that built was not drained (the lab, 1 Gbit/s, 600 ms, 10 %: five rounds
            // at 1.25, the RTT 600 → 766 ms). As with data, the cycle waits while a queue is
            // drained.
            Phase::Cruise if end.app_limited => {
                if self.cycle < FIRST_HOLD && !self.draining_queue {
                    self.cycle += 1;
                }
            }
            Phase::Cruise => {
                if self.starts_again(now, end) {
                    self.start_up_again(bw, true);
                } else if self.starts_again_small(end) {
                    self.start_up_again(bw, false);
                } else {
                    self.cruise_on(now, end, ended_cycle);
                }
            }
        }
    }

    /// Whether a fair flow's first start-up round delivered less than [`STARTUP_SHORTFALL`] of
    /// what it sent the round before: others share the link, and the queue grows. The packets
    /// the round reported lost count as delivered, as a share of what was sent the round before,
    /// if under [`MAX_RANDOM_LOSS`] (more is an overflow): alone on a path that loses 10 % both
    /// ways the reports read 0.94 of what was sent, and start-up ended at half the link
    /// (1 Gbit/s, 600 ms, in order: 6 seeds of 48 over budget against 2). The round must fall
    /// short by more than a probe train: start-up sends trains of [`START_TRAIN`], at first
    /// one per 33 ms, so a round's reports count a train more or fewer than was sent. Alone in
    /// the lab at 100 Mbit/s, 100 ms, 1 %, the second round's reports read 0.83–1.7 of the
    /// first one's sending, and 4 runs of 20 ended start-up at 30–73 Mbit/s; 0 of 50 since.
    /// (Newcomers beside full links now leave a round later more often: four jittered at 100
    /// ms in the simulator resent 0.007 of new packets against 0.003.) A start-up for cruising
    /// small (see [`SMALL_START`]) is judged once a round sent twice the estimate it began
    /// from: its first round's reports read what it sent cruising, a few packets either way (in
    /// the lab one such start-up ended there, at 280 packets per second).
    fn delivers_short(&self, end: &RoundEnd) -> bool {
        let before = self.sent_all_pps_before;
        let span = self.last_round.as_secs_f64();
        let sent_before = before * span;
        let Some(delivered) = end.startup_delivery else {
            return false;
        };
        let lost = end.lost as f64 / sent_before.max(1.0);
        let random = if lost < MAX_RANDOM_LOSS { lost } else { 0.0 };
        let train = self.probe_train() as f64;
        self.policy == Policy::Fair
            && !self.restarted
            && self.receiver_warm
            && !end.app_limited
            && sent_before >= SHORTFALL_PACKETS
            && before >= 2.0 * self.small_start_from.unwrap_or(0.0)
            && delivered / (1.0 - random) * span + train < STARTUP_SHORTFALL * sent_before
    }

    /// Cruising, whether the round ending at `now` calls for start-up again: probes kept finding
    /// room after a collapse (see [`PROBE_HEADROOM`]) but for room other flows left as they
    /// checked their base RTT (see [`ROOM_AFTER_A_FALL`]), the link is back (see
    /// [`LINK_BACK`]), or the path is back after a stall (see [`STALL_ROUNDS`]).
    fn starts_again(&mut self, now: Instant, end: &RoundEnd) -> bool {
        let fair = self.policy == Policy::Fair;
        let bw = end.bw;
        if self.cycle == 1 {
            // The probe and the round after it (which sees most of its deliveries) had
            // no queue and delivered well above a collapsed estimate.
            let room = fair
                && !self.base_fell_lately(now)
                && end.quiet
                && self.collapsed(self.probe_base)
                && bw >= PROBE_HEADROOM * self.probe_base;
            self.headroom_probes = if room { self.headroom_probes + 1 } else { 0 };
        }
        let link_back = fair
            && end.quiet
            && self.collapsed(bw)
            && self.capacity.is_some_and(|c| bw <= LINK_BACK * c);
        if link_back {
            tracing::debug!(bw, capacity = ?self.capacity, "start-up again: the link is back");
        }
        let found_room = self.headroom_probes >= HEADROOM_PROBES;
        if found_room {
            tracing::debug!(
                bw,
                probe_base = self.probe_base,
                "start-up again: probes found room after a collapse"
            );
        }
        let restart = self.back_from_a_stall(bw, end.quiet) || found_room || link_back;
        if restart {
            // Whatever started it up again, a stall before it is behind it.
            self.stall = Stall::None;
        }
        restart
    }

    /// Enters start-up from cruise at the estimate `bw`: `restarted` as the path held traffic a
    /// moment ago (see [`ModelRate::queue_ends_startup`]), or as a first start-up whose exits
    /// all apply again (see [`SMALL_START`]).
    fn start_up_again(&mut self, bw: f64, restarted: bool) {
        self.headroom_probes = 0;
        self.phase = Phase::Startup;
        self.restarted = restarted;
        if !restarted {
            self.startup_growths = 0;
        }
        self.full_bw = bw;
        self.flat_rounds = 0;
        self.cycle = FIRST_HOLD;
    }

    /// Whether a fair flow cruises under [`SMALL_START`] of the link capacity (believed, or
    /// measured with trains) with no queue for two rounds, and has not started up again for
    /// that before: then it does, once, as a first start-up.
    fn starts_again_small(&mut self, end: &RoundEnd) -> bool {
        let capacity = self.capacity.or(self.trains_capacity);
        let small = self.policy == Policy::Fair
            && self.small_start_from.is_none()
            && end.quiet
            && !self.checking_base
            && capacity.is_some_and(|c| end.bw < SMALL_START * c);
        if small {
            tracing::debug!(bw = end.bw, ?capacity, "start-up again: small");
            self.small_start_from = Some(end.bw);
        }
        small
    }

    /// Follows a stall of the path through the round that ended, whose estimate is `bw` and
    /// which was `quiet` (see [`RoundEnd`] and [`STALL_ROUNDS`]): whether it is over, and the
    /// flow should start up again.
    pub(super) fn back_from_a_stall(&mut self, bw: f64, quiet: bool) -> bool {
        let filled_alone = self
            .capacity
            .zip(self.peak_bw)
            .is_some_and(|(c, (peak, _))| peak >= ALONE * c);
        let stalled = filled_alone && self.bw_rounds[self.round] < LINK_BACK * bw;
        self.stall = match (self.stall, stalled) {
            (Stall::Stalling(rounds), true) => Stall::Stalling(rounds.saturating_add(1)),
            (_, true) => Stall::Stalling(1),
            (Stall::Stalling(rounds), false) if rounds >= STALL_ROUNDS => Stall::Over(1),
            (Stall::Over(rounds), false) if rounds < STALL_RESTART_WITHIN => {
                Stall::Over(rounds + 1)
            }
            (_, false) => Stall::None,
        };
        let back = self.policy == Policy::Fair
            && matches!(self.stall, Stall::Over(_))
            && !self.checking_base
            && quiet;
        if back {
            tracing::debug!(bw, "start-up again: the path is back after a stall");
        }
        back
    }

    /// Cruising on: drain a queue that is ours, cut to what got through, watch for a base RTT
    /// that holds a queue, and move the probe cycle on once no queue is being drained.
    fn cruise_on(&mut self, now: Instant, end: &RoundEnd, ended_cycle: usize) {
        let fair = self.policy == Policy::Fair;
        let bw = end.bw;
        self.unqueued_rounds = if end.standing == Some(true) {
            0
        } else {
            self.unqueued_rounds.saturating_add(1)
        };
        self.sharing_rounds =
            if self.link_share(bw).is_some() && !self.probe_found_room(end, ended_cycle) {
                self.sharing_rounds.saturating_add(1)
            } else {
                0
            };
        self.siblings_held = self.cruising_siblings(now);
        // A queue that outlives a round is ours to drain, unless it is another
        // flow's (`watch_foreign_queue`); probing resumes after.
        // Draining needs a queue seen, not merely one not ruled out: without an RTT
        // sample, draining every round would halve the rate every few rounds.
        let was_foreign = self.foreign_queue;
        self.watch_foreign_queue(now, end.standing, end.queueing, end.lost, bw);
        if fair && self.foreign_queue && !was_foreign {
            let queue = self.queue_over_base.or(end.queueing).unwrap_or_default();
            self.call_check(now, queue);
        }
        if fair && end.standing == Some(true) && !self.foreign_queue {
            if self.draining_queue {
                self.cut_for_overrun(bw, end.lost, end.sent_all);
            } else if ended_cycle >= FIRST_HOLD {
                self.cut_by_share(bw);
            }
        }
        let delivered = end.report_mean.map(|mean| {
            end.report_losses
                .served(mean, end.loss_rate)
                .unwrap_or(mean)
        });
        if let Some(delivered) = delivered.filter(|_| fair && !self.foreign_queue) {
            self.cut_to_delivery(delivered);
        }
        let was_draining = self.draining_queue;
        self.draining_queue = (end.standing == Some(true) && !self.foreign_queue) || end.heavy_loss;
        self.drain_from_delivery(was_draining, end.standing, delivered);
        let suspect = end.heavy_loss
            || (end.sent_all >= HEAVY_LOSS_PACKETS && end.loss_rate >= MAX_RANDOM_LOSS);
        self.suspect_rounds = if suspect && end.standing != Some(true) {
            self.suspect_rounds + 1
        } else {
            0
        };
        if self.suspect_rounds >= SUSPECT_ROUNDS && self.may_check_base(now) {
            tracing::debug!(base = ?self.base_rtt(), bw, "heavy loss and no queue in sight: checking the base RTT");
            self.begin_base_check(now, self.base_rtt(), BASE_CHECK_EXTRA);
        }
        self.queue_to_drain = end.queueing.unwrap_or_default();
        self.residual_queue = if end.queue() {
            Duration::ZERO
        } else {
            end.residual.unwrap_or_default()
        };
        if !self.draining_queue {
            self.cycle = self.next_phase();
            if self.cycle == YIELD_PHASE {
                self.yield_over_half();
            }
            // Collapsed, or small away from another flow's queue (see `ModelRate::small`):
            // probe again at once instead of holding.
            let small = self.calm_rounds >= CALM_ROUNDS && self.small(now, bw);
            if fair && (self.collapsed(bw) || small) && self.cycle >= FIRST_HOLD {
                self.cycle = 0;
            }
        }
    }

    /// The probe cycle's phase after this round's. A flow under half of the link it has
    /// shared a while (see [`ModelRate::under_half_a_while`]) skips [`UNDER_HALF_SKIPS`] hold
    /// rounds after the first, so its cycle is shorter than the larger flow's.
    pub(super) fn next_phase(&self) -> usize {
        let next = (self.cycle + 1) % CYCLE.len();
        if next == FIRST_HOLD + 1 && self.under_half_a_while() {
            next + UNDER_HALF_SKIPS
        } else {
            next
        }
    }

    /// Whether the round that ended, of cycle phase `ended_cycle`, shows that the last probe
    /// found room (see [`ROOM_FOUND`]): it is the first hold round, which sees most of the
    /// probe's deliveries, no queue has stood for [`SHARING_ROUNDS`], and the estimate rose
    /// by `ROOM_FOUND` of what the probe added.
    fn probe_found_room(&self, end: &RoundEnd, ended_cycle: usize) -> bool {
        ended_cycle == FIRST_HOLD
            && self.unqueued_rounds >= SHARING_ROUNDS
            && end.quiet
            && end.bw >= self.probe_base * (1.0 + ROOM_FOUND * self.probe_extra_sent)
    }

    /// Beside connections that share the base RTT, a fair flow whose drain round ended with the
    /// queue still standing paces its next drain from what that round delivered (`delivered`,
    /// random loss counted), where that is under its estimate. Under a standing queue a FIFO
    /// link delivers each flow its part of the link, so drains paced from deliveries add up to
    /// less than the link, whatever the flows' estimates add up to; paced from the estimates
    /// they did not. `haul perf -R -P 4` beside one CUBIC flow left CUBIC 15–19 Mbit/s of 100
    /// in the lab, and 33–41 since (two 60-s runs each at 30 and 100 ms); two and four flows
    /// lose half a point of efficiency. A lone flow does not: beside the model of CUBIC the
    /// rule cost haul a quarter of its share, each drain paced from a share CUBIC had just
    /// taken (docs/journal/congestion.md, "Siblings drain from what they deliver").
    fn drain_from_delivery(
        &mut self,
        was_draining: bool,
        standing: Option<bool>,
        delivered: Option<f64>,
    ) {
        let drained_on = self.policy == Policy::Fair
            && was_draining
            && self.draining_queue
            && standing == Some(true)
            && self.shares_with_others()
            && self.link_share(self.bandwidth()).is_some();
        self.drained_delivery = delivered.filter(|_| drained_on);
    }

    /// A scavenger's scale: down while the queue is over its target (unless the queue is its
    /// own probe's), back up while it is under and did not grow over the round (see
    /// [`SCAVENGER_TARGET`]).
    fn scale_scavenger(&mut self, queueing: Option<Duration>, own_probe: bool) {
        let growing = self
            .round_end_rtts()
            .is_some_and(|(now, before)| now > before);
        self.scavenger_scale = match queueing {
            Some(_) if own_probe => self.scavenger_scale,
            Some(q) if q > SCAVENGER_TARGET => {
                let over = q.as_secs_f64() / SCAVENGER_TARGET.as_secs_f64() - 1.0;
                let factor = (1.0 - (1.0 - SCAVENGER_BACKOFF) * over).max(SCAVENGER_BACKOFF);
                (self.scavenger_scale * factor).max(SCAVENGER_FLOOR)
            }
            Some(_) if growing => self.scavenger_scale,
            Some(q) => {
                let room = 1.0 - q.as_secs_f64() / SCAVENGER_TARGET.as_secs_f64();
                (self.scavenger_scale + SCAVENGER_STEP * room).min(1.0)
            }
            None => self.scavenger_scale,
        };
        if self.scavenger_scale < 1.0 {
            // Yielding: no probing until the scale is back.
            self.cycle = FIRST_HOLD;
        }
    }

    /// Moves the bandwidth filter on by a round, unless the round measured the application or
    /// the flow's restraint; returns the round's sample.
    fn age_bandwidth_filter(&mut self, app_limited: bool) -> f64 {
        // Draining on for a loss-free queue that stood through FOREIGN_QUEUE_ROUNDS drains
        // without growing, while what it sends gets through: these rounds measure this flow's
        // restraint, not the path, and do not age the estimate (see `FOREIGN_QUEUE_ROUNDS`).
        let restrained = self.draining_queue
            && self.queue_rounds >= FOREIGN_QUEUE_ROUNDS
            && self.bw_rounds[self.round] >= RESTRAINED_DELIVERY * self.sent_all_pps;
        if restrained && !self.restrained {
            tracing::debug!(
                isn = self.first_seq,
                bw = self.bandwidth(),
                "a queue that neither grows nor goes: draining on, the estimate holds"
            );
        }
        self.restrained = restrained;
        let round_sample = self.bw_rounds[self.round];
        if !app_limited && !restrained {
            self.round = (self.round + 1) % BW_ROUNDS;
            self.bw_rounds[self.round] = 0.0;
        }
        round_sample
    }
}

/// The losses reported between a round's delivery-rate reports, and the time those reports span.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct ReportLosses {
    /// Packets reported lost.
    pub(super) lost: f64,
    /// Seconds the reports span.
    pub(super) span: f64,
}

impl ReportLosses {
    /// Packets per second the bottleneck served, given that they `arrived` at that rate: what
    /// arrived and what was lost on the way, the losses counted only up to the random-loss rate
    /// `loss_rate` (a round that lost more had congestion too, and what a full queue dropped
    /// says nothing of what the link carries). `None` when the reports span no time. A rate of
    /// [`MAX_RANDOM_LOSS`] or more still counts up to it, unlike the overrun cut's allowance:
    /// counting none there changed a quarter of the simulator's runs of four flows, and made
    /// four flows a second apart at 300 ms less fair (docs/journal/congestion.md, "Random loss
    /// that is not").
    pub(super) fn served(&self, arrived: f64, loss_rate: f64) -> Option<f64> {
        if self.span <= 0.0 {
            return None;
        }
        let share = loss_rate.min(MAX_RANDOM_LOSS);
        Some(arrived + (self.lost / self.span).min(arrived * share / (1.0 - share)))
    }
}
