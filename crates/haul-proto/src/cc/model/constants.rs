//! The constants of [`super::ModelRate`]. `docs/CONGESTION.md` says why each has its value;
//! `docs/journal/congestion.md` holds the measurements behind them.

use crate::cc::FIRST_TRAINS;
use std::time::Duration;

/// 2 / ln 2: the smallest gain that doubles the delivery rate every round.
pub(super) const STARTUP_GAIN: f64 = 2.885;
/// Gains of the probing cycle, one phase per round.
pub(super) const CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// The first hold phase of [`CYCLE`], after the probe and its drain.
pub(super) const FIRST_HOLD: usize = 2;
/// Gain while draining a standing queue seen in cruise…
pub(super) const DRAIN_QUEUE_GAIN: f64 = 0.75;
/// …for a flow alone on the link. A fair flow that shares it (see [`ALONE`]) drains by a quarter
/// of its rate times its share of the link over this, by half at most: the larger its share, the
/// deeper it drains, so that each round a queue stands moves the shares towards equal. At 0.75
/// for every flow a drain moved no share, and four flows a second apart at 300 ms drained in two
/// cruising rounds of three, up to 30 in a row (seeds 20–22), the shares as start-ups had left
/// them. At a third of the link 0.75; four flows at a quarter each 0.82, two at half 0.64. Four
/// flows a second apart, medians of 48 seeds at 10 / 100 / 300 ms: 0.994 / 0.984 / 0.959 →
/// 0.997 / 0.988 / 0.974 (docs/journal/congestion.md, "Drains by share"). Draining only deeper
/// (0.25, never above 0.75) left haul 24.8 of 100 Mbit/s beside CUBIC at 30 ms; a third and 0.3
/// failed `flows_share_a_bottleneck_fairly` (seed 7, four flows at 100 ms).
pub(super) const DRAIN_SHARE: f64 = 0.35;
/// A fair flow that holds less than this share of the link, and has gone [`CALM_ROUNDS`]
/// without another flow's queue, skips its cycle's hold rounds and probes every other round
/// (each probe at most doubles it; see [`MAX_PROBE_EXTRA`]). A newcomer whose start-up ended at
/// the others' queue (see `ModelRate::started_into_a_queue`) leaves it small, and at a probe
/// per eight rounds it had not caught up in 10 s: four flows a second apart at 300 ms, seeds
/// 17–64, Jain under 0.98 in 12 → 2 (at 0.15 and 0.09 without the calm rounds, 10 and 12), the
/// third flow at 20.4 → 21.7 Mbit/s. Up to four flows a fair share is a quarter or more, so it
/// acts only on a flow that has fallen behind; with five or more every flow is under it. Beside
/// the model of CUBIC, without the calm rounds, haul's last 100 s of 120 fell under 25 Mbit/s
/// in 4 / 6 seeds of 24 at 30 / 100 ms, against 2 / 4; with them 1 / 4 (docs/journal/
/// congestion.md, "A newcomer that knows the path ends start-up at a queue"). 0.25 since session
/// 69, with [`STARTUP_SHORTFALL`]: a newcomer from another host whose start-up ended there holds
/// about a fifth of the link, just over 0.2, and at a probe per eight rounds stayed there (four
/// flows a second apart at 300 ms, seeds 17–64, Jain under 0.98 in 22 seeds at 0.2, 11 at 0.23,
/// 7 at 0.25). Flows from one endpoint converge closer with it and keep 1–3 points more queue.
pub(super) const SMALL_SHARE: f64 = 0.25;
/// Beside connections that share its base RTT, a flow is small (probes every other round, as
/// under [`SMALL_SHARE`] without them) while its estimate is under this part of what those that
/// cruise hold on average, whatever its share of the link. With five or more flows every one is
/// under [`SMALL_SHARE`], and all probed every other round: eight a second apart from one
/// endpoint kept +43 / +55 % of queue at 100 / 300 ms (seeds 17–40), +23 / +22 % with this
/// under [`SMALL_SHARE`] (0.8: +15 / +18 %, but four a second apart at 300 ms fell under Jain
/// 0.98 in one seed of 48 twice, none at 0.9); four flows keep 1–2 points less queue, the worst
/// of four started together at 300 ms +11 → +7 % (docs/journal/congestion.md, "Small beside
/// siblings"). Above a quarter too (two flows): two a second apart at 100 ms, seeds 17–64, Jain
/// least 0.975 → 0.997 ("Two siblings: the one behind probes every other round").
pub(super) const SMALL_BESIDE_SIBLINGS: f64 = 0.9;
/// The deepest drain of a flow that shares the link.
pub(super) const DEEPEST_DRAIN: f64 = 0.5;
/// Packets in flight, in bandwidth-delay products. In-flight counts from the cumulative ACK, and
/// UDT4 has no selective ACK: the cumulative ACK stalls behind every hole until its retransmission
/// arrives — one RTT, or three when the retransmission is lost and re-NAKed — so under loss the
/// "in flight" count holds several BDPs of delivered data. Six BDPs cover that; pacing, not the
/// window, holds the rate (the window only catches a wrong model).
pub(super) const WINDOW_GAIN: f64 = 6.0;
/// Weight a quiet round's loss count keeps per later quiet round (about four rounds' memory).
pub(super) const LOSS_MEMORY: f64 = 0.75;
/// Rounds the bandwidth filter remembers.
pub(super) const BW_ROUNDS: usize = 10;
/// Rounds whose samples a fair flow that shares the link paces its hold and probe rounds from
/// (see `hold_estimate`). The ten-round maximum holds the flow's last probe, and what it
/// delivered while the others drained (a FIFO hands each flow the queue it filled): the estimates
/// of flows that share a link add up to 1.05–1.1 × the link, and their holds rebuild a queue
/// after every drain. Five rounds forget the probe three rounds before the next one.
/// Simulator, four flows a second apart, 10–20 s, seeds 17–64, with [`CALM_ROUNDS`]: RTT
/// +0.10 → +0.08 at 100 ms and +0.33 → +0.19 at 300 ms (medians), Jain 0.986 → 0.990 at 300 ms.
/// Six rounds, used without [`CALM_ROUNDS`], kept +0.24 at 300 ms.
pub(super) const RECENT_ROUNDS: usize = 5;
/// The least share of the ten-round maximum that hold and probe rounds pace from: one round's
/// dip (a newcomer's start-up, the others' drains) must not stick. As the estimate itself, five
/// rounds without a floor left four flows a second apart at 300 ms a median Jain index of 0.982
/// in 10–20 s, against 0.986 before; with this floor 0.990.
pub(super) const RECENT_FLOOR: f64 = 0.9;
/// Rounds a flow must go without standing beside another flow's queue before its recent
/// rounds count (see `hold_estimate`); until then it holds at its ten-round maximum, as it did
/// beside that queue. With the recent rounds counting from the round that queue went, haul
/// beside the model of CUBIC (100 ms, seed 2, 120 s) kept 23.3 Mbit/s (the CI test needs 25),
/// and four flows at 300 ms (seeds 1–8) a least Jain index of 0.948 (it needs 0.95). With ten
/// rounds: every seed of eight at 30 and 100 ms keeps 25.9 or more, and the least index is
/// 0.975. Why ten rounds spare haul's share beside CUBIC was not traced.
pub(super) const CALM_ROUNDS: u32 = 10;
/// Start-up rounds that must have grown (the first, from nothing, counts) before a loss out of
/// a full buffer ends start-up (see `ModelRate::overflowed`): with a base RTT shared by an
/// endpoint's connections, a newcomer that starts into their queue reads its second round flat.
pub(super) const STARTUP_GROWTHS_BEFORE_OVERFLOW: u32 = 2;
/// How long the minimum RTT stays valid without being seen again.
pub(super) const MIN_RTT_LIFETIME: Duration = Duration::from_secs(10);
/// A fair flow that drained every round for this long for a queue that still stands lets its
/// base RTT expire at once, and takes its next sample for it: the flows that keep that queue
/// started into it and took it for their base RTT, they see none and do not drain, and this
/// flow's drains only hand them its share. Four flows a second apart at 300 ms: the first
/// flow, the one that knew the path, drained for 17 s at a quarter of the others' rates until
/// its base RTT aged out (seed 33). Medians of 48 seeds for four flows a second apart at 100 /
/// 300 ms, 0.992 / 0.974 → 0.994 / 0.981 (seeds 17–64) and 0.990 / 0.978 → 0.996 / 0.984
/// (65–112); 1.5 s read 0.959 at 300 ms (a newcomer's start-up keeps a queue that long), 2.5,
/// 3 and 5 s 0.984, 0.983 and 0.983 but 0.972, 0.971 and 0.967 with jittered starts (0.982 at
/// 2 s); a base that expires after 5 s instead of 10 failed the scavenger's test
/// (docs/journal/congestion.md, "A base RTT that a queue outlives").
pub(super) const DRAIN_OUTLIVES_BASE: Duration = Duration::from_secs(2);
/// ... and for more than this many rounds: at 300 ms a newcomer's start-up keeps a queue for
/// several seconds, and in the lab (`haul perf -P 4 --stagger 1s`, Jain over 10–20 s) the first
/// flows gave up the path's RTT for it after 2 s, all four then took a queue of 200–300 ms for
/// the path and held it: median 0.948 in 17 runs, 0.980 in 11 with this limit, and at 100 ms
/// (where 2 s is the longer limit) 0.997 and 0.995. In the simulator four flows a second apart
/// read the same (300 ms: 0.981 → 0.982), with jittered starts 0.982 → 0.972
/// (docs/journal/congestion.md, "Staggered starts in the lab").
pub(super) const DRAIN_OUTLIVES_ROUNDS: u32 = 10;
/// A fair cruising flow whose base RTT will age out ([`MIN_RTT_LIFETIME`]) within this, while
/// the last round's smallest RTT sat over it and other connections to the host share it, checks
/// the base RTT for as long as that queue takes to empty and [`BASE_CHECK_EXTRA`] more, and
/// takes the check's least sample for its new base (BBR's ProbeRTT, where the evidence calls
/// for it). Aged out under a standing queue, the base took the queue for the path, and every
/// flow kept the queue from then on (the lab, four flows a second apart at 300 ms, traced in
/// session 63). The connections share the base's age (see [`crate::cc::PathRtt`]), so they
/// check at once and the queue empties. Four flows a second apart at 300 ms, over 30–40 s,
/// seeds 17–64: 8 seeds at RTT +20 % or more → 2, at most +68 % → +22 %; at 100 ms (seeds
/// 17–40) 11 → 7. A flow with no sibling does not check: beside the model of CUBIC, whose queue
/// its check cannot empty, checking left haul under 25 Mbit/s at 100 ms in 8 seeds of 24
/// against 4 (docs/journal/congestion.md, "A base RTT renewed before it ages out under a
/// queue"). Any lead short of the lifetime serves: the check's samples replace the base.
pub(super) const BASE_RENEWAL_LEAD: Duration = Duration::from_millis(200);
/// Startup ends when three rounds in a row grow the rate by less than this.
pub(super) const STARTUP_GROWTH: f64 = 1.25;
pub(super) const STARTUP_FLAT_ROUNDS: u32 = 3;
/// A fair flow's first start-up ends at a round whose delivery reports (at least
/// [`SHORTFALL_REPORTS`]) average less than this share of what it sent the round before (at
/// least [`SHORTFALL_PACKETS`] packets then), the round's reported losses counted as delivered
/// where they are under [`MAX_RANDOM_LOSS`] of that (random loss). Beside flows that hold the
/// link, a FIFO queue gives each flow the part of the link its sending is of everything sent: a
/// newcomer's deliveries fall short of its sending as soon as the queue grows, whatever base RTT
/// it took, while a flow alone delivers what it sent a round before until it overruns the
/// link. For flows from different hosts, which share no record: a newcomer that started into
/// another's start-up took that queue for its base RTT, saw no queue, and doubled on into a
/// full buffer. Four a second apart at 300 ms, seeds 17–64, with [`SMALL_SHARE`] at 0.25:
/// resent per new packet 0.154 → 0.036, Jain under 0.98 in 10 → 7 seeds (SMALL_SHARE at 0.2:
/// 22), RTT +19 → +17 %; at 100 ms resent 0.029 → 0.013, but 3 seeds under 0.98 against 1.
/// In the lab, four separate clients at 300 ms (eight runs each, two sets): Jain 0.981 →
/// 0.993, RTT +35 → +16 %, queue drops 29 470 → 13 619 a run (medians;
/// docs/journal/congestion.md, "Start-up ends where deliveries fall short, and small flows
/// probe up to a quarter").
pub(super) const STARTUP_SHORTFALL: f64 = 0.97;
pub(super) const SHORTFALL_REPORTS: u32 = 3;
pub(super) const SHORTFALL_PACKETS: f64 = 64.0;
/// Queue, in base RTTs, behind which a loss in start-up means the buffer overflowed. A drop-tail
/// buffer of a BDP overflows at one; random loss over start-up's own growing queue mostly comes
/// below a half.
pub(super) const OVERFLOW_QUEUE: f64 = 0.5;
/// Start-up nears the link once it delivers this share of the link capacity that the receiver
/// measures with packet pairs (a pair leaves back to back and the bottleneck spaces it by one
/// packet's transmission time). From there it stops doubling and grows at [`APPROACH_GAIN`]
/// until its own RTT samples show a queue: at 2.885 the round after the pipe fills queues 1.9
/// BDPs, so a 1-BDP buffer overflowed for a round trip before the queue or the loss was seen.
/// Below 1 so that random loss (up to 15 %) does not hide a full pipe.
pub(super) const NEAR_CAPACITY: f64 = 0.85;
/// Start-up's gain once near the link capacity: a probe's, whose queue a round's RTT samples
/// show long before it fills a BDP of buffer. Where the capacity was read too low (a packet pair
/// spread by other traffic) the rate still grows, by this much per round.
pub(super) const APPROACH_GAIN: f64 = 1.25;
/// A first start-up's approach ends, and doubling (and the jump) resumes, once a credible
/// capacity report reads the link at more than this many times what the flow and its siblings
/// deliver: the approach began on a reading far too low. A haul receiver whose trains arrive in
/// one group falls back on packet pairs and blends the reference's starting value into them
/// (1 043 packets per second on a 1 Gbit/s lab link at 300 ms); from there the approach took 14
/// rounds to reach the link, and 4 of 6 runs started up in 4.8 s against a budget of 2.5.
/// Twice, so that a reading's noise near the link never restarts the doubling.
pub(super) const APPROACH_FAR: f64 = 2.0;
/// A first start-up paces at least at this share of the link capacity the receiver reports
/// (packet pairs) while its own RTT samples show no queue: doubling from 32 packets a round trip
/// takes ten round trips to fill a gigabit at 600 ms, and the capacity is known after the first.
/// Half, so that a path whose capacity is shared or was read high is overrun by at most half a
/// BDP for a round trip — what a 1-BDP buffer holds; start-up then goes on as usual.
pub(super) const JUMP: f64 = 0.5;
/// Packets a first start-up sends back to back as one probe train (every 32nd packet starts
/// one), for the receiver's capacity estimate that the jump needs: a pair's two packets arrive
/// together wherever arrivals are grouped (GRO, interrupt coalescing, the lab emulator's
/// 200 µs runs, which left the jump idle in the lab), a train spans several groups. 32 packets
/// take 380 µs at 1 Gbit/s, and queue 3.8 ms at 100 Mbit/s — under a 1-BDP buffer there at 10
/// ms, and under the slack a queue must pass to count (see [`QUEUE_SLACK`]) at 100 ms.
pub(super) const START_TRAIN: u64 = 32;
/// Packets lost in a row that end a first start-up's jump (see
/// `ModelRate::end_jump_at_a_full_buffer`): half a probe train. A train that meets a full
/// drop-tail buffer loses most of its packets together; random loss of 10 % takes 16 in a row
/// once in 10^16.
pub(super) const FULL_BUFFER_GAP: u64 = START_TRAIN / 2;
/// A capacity report is believed only once the receiver has had a window of packet pairs: a
/// reference receiver's window starts full of a default of 1 000 packets per second, and holds
/// 64 pairs, one per 16 packets. Counted as packets sent before the previous round began (their
/// arrivals are in any report that comes now), not as packets acknowledged: under loss the
/// cumulative ACK waits behind the first hole for round trips (at 1 Gbit/s, 600 ms and 5 %, with
/// the jump below, the approach never began and start-up paced at 2.8 Gbit/s). Start-up's
/// approach believes a capacity measured with its trains sooner ([`EARLY_CAPACITY_PACKETS`])…
pub(super) const CAPACITY_PACKETS: u64 = 64 * 16;
/// …and only while the delivery rate is within this multiple of it: further above, it was read
/// too low, and start-up goes on doubling.
pub(super) const CAPACITY_CREDIBLE: f64 = 1.5;
/// The controller believes the median of the receiver's capacity reports over the last
/// second and a half: one report kept each [`CAPACITY_REPORT_EVERY`], the last this many. A
/// haul receiver's report is the median of its last 16 trains, and in the lab at 1 Gbit/s
/// (the emulator's 200 µs runs hold 17 packets) the trains that span three arrival groups are
/// few: one report stands for 100–500 ms, and a run of them may read a quarter or a third
/// high. Latest report: a lone flow at 10 ms, 1 % read its estimate under [`ALONE`] of the link
/// in 125 rounds of 700 (the reports' 10th–90th percentile 74 377–94 661 packets per second
/// around a link of 83 333), took itself for a flow that shares the link, and drains cut it on
/// random loss, as only such a flow is cut (see [`OVERRUN_RANDOM`]): once from 83 140 to
/// 53 932, and it took 0.7 s to climb back. A median of the last fifteen reports read as
/// badly, as they were mostly the same report. Replayed over that run's trace, the median of
/// one report each 100 ms, the last fifteen, read C above the link ÷ [`ALONE`] in no cruising
/// round of 699, against 98 for the latest report (lab, taking turns: 948.7–951.8 Mbit/s in
/// six runs against 884.4–947.1; docs/journal/congestion.md, "Capacity reports at 1 Gbit/s
/// in the lab").
pub(super) const CAPACITY_REPORTS: usize = 15;
/// See [`CAPACITY_REPORTS`].
pub(super) const CAPACITY_REPORT_EVERY: Duration = Duration::from_millis(100);
/// Packets a haul receiver needs, start-up's first trains ([`FIRST_TRAINS`] of
/// [`START_TRAIN`]), before its capacity comes from trains; until then it comes from a few
/// pairs, or is the starting value. Only then may start-up believe a capacity early (see
/// `ModelRate::trains_measured`).
pub(super) const EARLY_CAPACITY_PACKETS: u64 = FIRST_TRAINS as u64 * START_TRAIN;
/// A report at the receiver's resolution (a median gap of 1 µs or none: 10⁶ packets per second)
/// says the pairs arrived together — behind GRO or interrupt coalescing, as in `haul lab`,
/// whose emulator writes what arrives within 200 µs as one super-packet — not what the link
/// carries.
pub(super) const CAPACITY_UNRESOLVED: u32 = 1_000_000;
/// The receiver's RTT may exceed the minimum by this fraction plus `QUEUE_SLACK` and still count
/// as "no queue" (losses seen then are random). The ACK→ACK2 RTT carries no ACK delay, so the
/// margin only has to absorb jitter: a 1-BDP queue doubles the RTT, far past it.
pub(super) const QUEUE_FRACTION: f64 = 0.1;
pub(super) const QUEUE_SLACK: Duration = Duration::from_millis(2);
/// A fair cruising flow that shares the link (see `ModelRate::link_share`) sees a standing
/// queue from this fraction of its base RTT plus [`SMALL_QUEUE_SLACK`] up, not from the usual
/// threshold. Several flows' probes keep a queue that saws up to the usual threshold and past
/// it, and drains that come only above it leave the flows +14 % of the base RTT in the steady
/// state (simulator, four flows at 100 and 300 ms). With this threshold and [`SMALL_DRAIN`]:
/// +10 / +11 % in the simulator; in the lab at 300 ms a median of +12.5 against +22.5 % over 22
/// runs each (docs/journal/congestion.md, "Small queues for flows that share the link"). A lone
/// flow keeps the usual threshold: it has no one to drain for, and its own probe's queue goes
/// in the drain round.
pub(super) const SMALL_QUEUE_FRACTION: f64 = 0.03;
pub(super) const SMALL_QUEUE_SLACK: Duration = Duration::from_micros(500);
/// A queue that only [`SMALL_QUEUE_FRACTION`] shows is drained no deeper than this many times
/// itself a round (pacing at `1 − 1.5 × queue ÷ round` or above): drains by share for a
/// queue of a few milliseconds emptied the link (two flows at 10 / 100 / 300 ms: efficiency
/// 0.910 / 0.925 / 0.923, against 0.969 / 0.993 / 0.960 with the usual threshold alone); drained
/// by 1.5 times it, 0.978 / 0.986 / 0.963.
pub(super) const SMALL_DRAIN: f64 = 1.5;
/// A loss rate above this is congestion whatever the delay says (random loss is never this high
/// on a path worth using).
pub(super) const MAX_RANDOM_LOSS: f64 = 0.2;
/// Suspect cruising rounds in a row, with no queue in sight, after which the base RTT is
/// suspect: a flow that started into a standing queue took the queue for path, sees none, and
/// overflows the buffer that the flows who see the queue drain for it. A round of at least
/// [`HEAVY_LOSS_PACKETS`] is suspect when it lost [`MAX_RANDOM_LOSS`] of what it sent, or when
/// the loss rate over recent quiet rounds is that high (a latecomer loses 10–50 % round after
/// round, seldom a fifth twice in a row). Two, since a small flow's round of 50 packets at 10 %
/// random loss loses a fifth in one round in forty.
pub(super) const SUSPECT_ROUNDS: u32 = 2;
/// A base-RTT check sends almost nothing for one base RTT and this much more, so that the queue
/// the others drain empties and this flow's next RTT samples see the path (BBR's ProbeRTT,
/// started by the evidence instead of a timer).
pub(super) const BASE_CHECK_EXTRA: Duration = Duration::from_millis(200);
/// Packets per base RTT a base-RTT check paces at.
pub(super) const BASE_CHECK_PACKETS: f64 = 4.0;
/// Packets a round must send for its loss count to say more than chance (at 10 % random loss,
/// 20 % of 50 packets is lost in about one round in forty, and costs one round at 0.75).
pub(super) const HEAVY_LOSS_PACKETS: u64 = 50;
/// A receiver cannot deliver faster than the sender sent: delivery samples are capped at this
/// multiple of the previous round's send rate (a UDT4 receiver's interval-based estimate reads
/// bursts of arrivals as absurd rates).
pub(super) const DELIVERY_CAP: f64 = 1.25;
/// In startup the sender's own delivery sample counts only until the receiver's report for a
/// round reaches this share of it (a UDT4 receiver's estimate starts at 16 packets per second).
pub(super) const WARM_REPORT: f64 = 0.5;
/// …judged only on rounds that counted this many packets: on a handful, both rates are noise
/// (a latch on the reference's first reports of 16 packets per second left startup crawling).
pub(super) const WARM_PACKETS: u64 = 16;
/// Extra window, in time at the estimated rate, for holes awaiting retransmission: the cumulative
/// ACK stalls behind a hole until its retransmission arrives, and a lost retransmission waits for
/// a re-NAK (an RTO plus the 10 ms ACK timer).
pub(super) const RECOVERY_ALLOWANCE: Duration = Duration::from_millis(100);
/// A packet whose retransmission was lost too holds the cumulative ACK — and the peer's buffer
/// behind it — for another round trip and re-report timeout; at 10 % loss one retransmission in
/// ten is lost again. Where the peer's buffer covers fewer rounds than this at the estimated
/// rate, a retransmission lost once goes out twice. Measured over four seeds in the simulator:
/// repeating raised efficiency where the buffer covers 5–50 rounds (1 Gbit/s at 100–600 ms,
/// 100 Mbit/s at 600 ms: +0.01 to +0.08) and only cost retransmissions (+0.009 at 10 % loss)
/// where it covers 150 rounds or more (10 ms paths). 64 sits between.
pub(super) const REPEAT_BELOW_ROUNDS: f64 = 64.0;
/// …and where the base RTT is at least this, whatever the buffer: a retransmission lost again
/// holds in-order delivery, what the application reads, a round trip more, and start-up's
/// budget (1 s + 5 RTT, issue 6) runs into that at 300 ms. Simulator, start-up in order, seeds
/// 1–200, runs over budget: 100 Mbit/s 300 ms 10 % 39 → 4 with loss both ways, 24 → 1 one
/// way, 1 Gbit/s 600 ms 5 % one way 36 → 22 (seeds 201–400: 37 → 33). It costs the square of
/// the loss rate in copies (100 Mbit/s, 10 %, 100 and 300 ms: efficiency −0.009, retransmitted
/// +0.009; at 5 % −0.004, +0.003 and within issue 6's loss + 1 %). Short paths, where a round
/// trip is not noticed and the 5 % share would pass loss + 1 %, do not repeat.
pub(super) const REPEAT_FROM_RTT: Duration = Duration::from_millis(100);
/// At the end of the first start-up on a path whose base RTT is at least this, even a first
/// repair goes twice: while the bounds from the capacity stand (no queue seen yet), once the
/// estimate holds [`ALONE`] of the capacity, under random loss with no queue last round. A
/// round trip there holds hundreds to thousands of holes (1 Gbit/s, 600 ms, 5 %: 2 500), so
/// some hole always loses its first repair, and a seed misses start-up's budget in order when
/// one loses its second as well: each costs every byte behind it a round trip. Simulator, loss
/// both ways, runs over budget: 1 Gbit/s 600 ms 5 % 58 → 10 of seeds 1–200 (one way 55 → 2 of
/// 1–400), 100 Mbit/s 600 ms 5 % 28 → 8 of 1–400, 1 Gbit/s 300 ms 10 % 16 → 9 of 1–200. At
/// 100 ms no seed of 1–100 was over without it (the budget's 1 s is ten round trips there);
/// 200 ms sits between. It costs loss × the packets of start-up's last rounds: +0.001 of
/// packets sent over 60 s. Earlier in start-up, or below the link's share, the losses may be
/// a newcomer's into a full queue that it took for its base RTT: doubling its repairs there
/// lowered four flows' fairness at 300 ms (seed 2: 0.987 → 0.732). Under the same conditions
/// a repair lost again goes [`REPEAT_AGAIN_COPIES`] times. A third copy of first repairs as
/// well cost +0.004 at 100 Mbit/s 600 ms 10 %, past `efficiency_grid_at_100_mbit`'s budget.
pub(super) const REPEAT_FIRST_FROM_RTT: Duration = Duration::from_millis(200);
/// Copies of a repair lost again (reported again after its retransmission, or first reported
/// late) where a first repair goes twice ([`REPEAT_FIRST_FROM_RTT`]). At 10 % a round trip of
/// 5 000 holes sees a doubled repair fail about fifty times, and a seed misses start-up's
/// budget when one of those fails again: with three copies (session 52) one in a thousand
/// does, and the holes whose delivery ended late start-ups were mostly such (all three copies
/// lost), or a first repair's lost report. 1 Gbit/s 600 ms 10 % both ways, seeds over budget:
/// two copies 55 of 1–100 and 59 of 101–200, three 42 and 34; three 72 of 1–600, four 46
/// (seeds 1–200: 32 → 16); 100 Mbit/s 600 ms 10 %, where a round trip holds a tenth of the
/// holes, 18 and 19 of 1–600. It costs the square of start-up's loss rate in copies:
/// retransmitted share within ±0.001 of three's.
pub(super) const REPEAT_AGAIN_COPIES: u8 = 4;
/// The first start-up's holes are repaired over the rounds after its drain: its last round's
/// are first reported during the drain, and their first repairs that fail are reported again
/// a round later. For this many cruising rounds after a first start-up that saw no queue,
/// repairs go out as in it ([`REPEAT_FIRST_FROM_RTT`]). 1 Gbit/s 600 ms 10 % both ways, seeds
/// 1–100: 27 → 16 over start-up's budget; 100 Mbit/s 600 ms 10 %, seeds 1–200: 11 → 3. Two,
/// three or six rounds read the same there, and two cost +0.003 of packets resent at 10 %
/// (one: within ±0.001). A start-up that met a queue (a newcomer's) is not extended.
pub(super) const REPEAT_AFTER_STARTUP_ROUNDS: u32 = 1;
/// A cruising round lasts long enough to carry this many packets at the estimated rate (a UDT4
/// receiver's rate report is a median over 16 arrival intervals: a probe shorter than that is
/// invisible to it), but no longer than [`MAX_ROUND`].
pub(super) const MIN_ROUND_PACKETS: f64 = 16.0;
pub(super) const MAX_ROUND: Duration = Duration::from_secs(2);
/// An estimate below this share of the largest one of the last [`PEAK_LIFETIME`] has collapsed
/// (the receiver or the path stalled for a moment: its rounds delivered little), and climbing
/// back at 1.25× per eight-round cycle takes seconds to minutes. A collapsed flow skips the hold
/// phases (probe, drain, probe, …), and when [`HEADROOM_PROBES`] probes in a row are delivered in
/// full — at least [`PROBE_HEADROOM`] × the estimate before them, no queue standing during them
/// or after — it starts up again. Only a collapsed flow: a probe also finds room whenever a
/// competing TCP flow has just backed off, and starting up at each such chance left a CUBIC
/// flow at 100 ms 0.24–0.55 of the link in the lab (0.45–0.53 without).
/// Where other connections share the flow's base RTT (see `PathRtt`), the peak is divided by
/// how many share it: a flow that had the link alone and now holds a fair share of it beside
/// three others has not collapsed. Four flows from one endpoint at 300 ms: the first flow's
/// share of a quarter read as a collapse, its probes found room while the others drained, and
/// it started up again into them (session 65, seeds 58 and 64).
pub(super) const COLLAPSED: f64 = 0.25;
pub(super) const PEAK_LIFETIME: Duration = Duration::from_secs(30);
/// At the link rate a probe delivers a percent or so above the estimate; against n flows
/// sharing the link it delivers 1.25 ÷ (1 + 0.25 ÷ n) of it (1.11 against two).
pub(super) const PROBE_HEADROOM: f64 = 1.15;
/// A fair flow delivering this share of the receiver's packet-pair capacity or more has the link
/// to itself: its probe finds nothing beyond it. Where a round is mostly ACK interval (see
/// [`ALONE_SCALED_BELOW`]), such a flow probes and drains by `0.25 × base RTT ÷ round` instead of
/// 0.25: a quarter of a base RTT of queue, as BBR's probe for one RTT queues, not a quarter of a
/// 20–40 ms round (at 1 Gbit/s, 10 ms, RTT inflation +10–13 % → +3–6 %;
/// docs/journal/congestion.md, session 24).
pub(super) const ALONE: f64 = 0.9;
/// The scaling of [`ALONE`] applies where the base RTT is at most this share of a round (RTTs
/// under about 30 ms). At longer RTTs it would change the gains by under 10 %, and there it
/// lowered four flows' fairness at 300 ms in three sets of seeds (0.967 / 0.964 / 0.901 →
/// 0.889 / 0.924 / 0.843), for reasons not found.
pub(super) const ALONE_SCALED_BELOW: f64 = 0.75;
/// A fair flow that shares the link, where the base RTT is at most this share of a round (a round
/// of base + 10 ms: paths of 10 ms or less, and now and then a 20 ms one whose round ran to the
/// next ACK), probes by at least `0.25 × base RTT ÷ round` of its rate, not 0.25, as [`ALONE`]
/// explains; [`SHARE_PROBE`]'s tenth of what the others hold stays as it is. Two flows at 10 ms
/// kept +12 % of queue with the quarter and +6 to +7 % with this, their least Jain index 0.976 →
/// 0.990 (100 Mbit/s, seeds 17–112). Scaling the tenth too brought four flows at 10 ms from +16 to
/// +8 %, but two flows started 0.75–1.25 s apart no longer converged (7 of 48 seeds under a Jain
/// index of 0.98, against 1). Scaling up to 3/4 of a round, as for a lone flow, left two flows at
/// 30 ms under 0.98 in 3 of 48 seeds, against none (docs/journal/congestion.md, session 45).
pub(super) const SHARED_SCALED_BELOW: f64 = 0.5;
/// There, too, the tenth of what the others hold adds at most this share of the base RTT in
/// queue over the probe's round: at most `0.1 × base RTT ÷ round × C ÷ estimate` of the
/// flow's rate. Four flows at 10 ms each probed by 30 % of their rate over a round twice the
/// base RTT, 15 % of the base RTT in queue, and kept +0.13 of it between them (medians of seeds
/// 17–64); with this, 20 % and +0.08, Jain 0.999 → 0.998 (least 0.995 → 0.992). Unlike
/// scaling the tenth by the base RTT's part of the round, it leaves a small flow probing
/// more than a large one: two flows with jittered starts at 10 ms read a least index of 0.967
/// (0.944 before; two seeds of 48 under 0.98, one before). Not on longer paths: at 30 ms it
/// left four flows' least index at 0.923 (0.984 before).
pub(super) const SHARED_PROBE_QUEUE: f64 = 0.1;
/// A collapsed flow that delivers under this share of the link the receiver's packet pairs
/// measure, with no queue standing for two rounds, starts up again at once: the path is back
/// after a stall, and the headroom probes would take rounds of [`MIN_ROUND_PACKETS`] at the
/// stall's rate (0.6 s each at 25 packets per second; at 1 Gbit/s, 10 ms three seeds of twelve
/// delivered nothing for 2 s after the stall). Not a quarter, the collapse threshold: four
/// flows sharing a link each hold a quarter of it, and one whose estimate had been higher
/// started up again whenever the queue was quiet (four flows at 100 ms, seed 17: Jain 0.97 →
/// 0.74). A thirty-second of the link is far below any share of a few flows.
pub(super) const LINK_BACK: f64 = 1.0 / 32.0;
pub(super) const HEADROOM_PROBES: u32 = 2;
/// A fair flow that cruises under this share of the link capacity, with no queue standing for
/// two rounds, starts up again, once in its life, as a first start-up (a shortfall or a queue
/// ends it, see [`STARTUP_SHORTFALL`]). A newcomer that starts while the flows before it
/// overflow the buffer loses its first trains, and its first start-up ends at a shortfall at a
/// few hundred packets per second: it cruised at 1–4 % of the link, and a small flow's probe
/// at most doubles its rate once a cycle of eight rounds, 2.5 s at 300 ms. Four flows from
/// different hosts started 0.75–1.25 s apart at 300 ms (simulator), seeds 17–112 / 113–304:
/// Jain under 0.98 in 9 / 19 seeds → 4 / 9, the least index 0.900 / 0.794 → 0.943 / 0.946,
/// RTT +20 % or more in 2 / 10 seeds as before; resent 0.026 → 0.028 / 0.026. Entered as a
/// start-up from cruise, which only a standing queue ends, it overshot to half again its share
/// and kept RTT +20 % in 3 / 13 seeds. In the lab (four clients a second apart at 300 ms) such
/// a third flow ended its run at 2.9–3.8 Mbit/s in 2 of 22 runs of 3a2b335 and 2 of 15 of the
/// rule alone: it never learned the capacity, and the rule could not fire. With trains while
/// cruising without it (see `ModelRate::probe_train`) and the restart's shortfall judged once
/// it doubled, 4 of 10 runs met it and all four started up again to 22–24 Mbit/s. A sixteenth
/// is below the share of any few flows (docs/journal/congestion.md, "A small newcomer starts
/// up again").
pub(super) const SMALL_START: f64 = 1.0 / 16.0;
/// A fair cruising flow that has filled the link alone (its peak, see [`PEAK_LIFETIME`], held
/// [`ALONE`] of the capacity) and then delivers under [`LINK_BACK`] of its estimate for this many
/// rounds in a row has met a stall of its path; at the first quiet round within
/// [`STALL_RESTART_WITHIN`] rounds after, outside a base-RTT check, the path is back and it starts
/// up again. A stall need not collapse the estimate: its first round cuts it by a quarter or so
/// (delivered against sent) and the ten-round filter ages into what came through, so the flow
/// cruised on at half to three quarters of the link, took itself for the larger of two flows
/// (see [`SHARING_ROUNDS`]), and yielded. `the_rate_comes_back_quickly_after_a_stall` stalls the
/// link at one phase of the probe cycle, where the flow climbed back in time; stalled 0.24–0.84
/// s later (every phase of the cycle, `STALL_SHIFT_MS`), a flow at 100 ms was short of the link
/// 2 s after the stall in 71 of 72 runs (six phases × seeds 1–12), and at 53–73 % of it from 1
/// to 3 s after in four of the six; with this, full in all 96 runs of the eight phases, and at
/// 10 ms in all 96 as before. Only a flow that filled the link alone: a newcomer that starts into
/// a full buffer delivers next to nothing for rounds too, and started up again into three others
/// (four flows at 300 ms, seeds 19, 48 and 54). Flows that share the link print the same as
/// without it in every fairness cell (docs/journal/congestion.md, "A stall at any phase of the
/// cycle").
pub(super) const STALL_ROUNDS: u32 = 2;
/// See [`STALL_ROUNDS`]: a stall's queue takes a round or two to empty once the path is back.
pub(super) const STALL_RESTART_WITHIN: u32 = CYCLE.len() as u32;
/// For this long after its RTT fell under other flows' drain (see `ModelRate::join_a_drain`), a
/// collapsed flow's probes that find room do not count towards starting up again: the room is
/// what the flows checking their base RTT left, and they come back within a check (a queue's
/// worth and [`BASE_CHECK_EXTRA`]). A flow that held the link alone and a quarter of it beside
/// three others sits at the collapse threshold. At 300 ms, four flows from different hosts with
/// jittered starts that had just emptied a queue together saw one of them start up again into
/// the others in 4 of the 7 seeds of 96 that still kept +20 % of RTT or more; with this rule, 3
/// restarts in 96 seeds against 6, and 5 such seeds against 7 (scratch builds; the landed one
/// reads 2 and 6; docs/journal/congestion.md, "Flows that started into a queue drain it
/// together").
pub(super) const ROOM_AFTER_A_FALL: Duration = Duration::from_secs(2);
/// A probe of a fair flow that shares the link adds at least this share of what the other
/// flows hold: the link capacity less its own estimate (see `ModelRate::probe_extra`), above the
/// usual quarter of its own rate below 29 % of the link. Under a shared queue every flow's
/// delivery is proportional to what it sends, so probes of a quarter of each flow's rate left
/// unequal shares as they were (four flows at 10 ms, 48 seeds: median Jain 0.970; a tenth of
/// the link 0.992). Of what the others hold rather than of the link, four equal flows probe by
/// 7.5 % of the link, and the probe each keeps in its ten-round maximum adds less queue. The
/// values tried are in docs/journal/congestion.md ("Additive probes", "Probes by what the
/// others hold")…
pub(super) const SHARE_PROBE: f64 = 0.1;
/// …but at most doubles the rate for a round. The drain after such a probe stays at the
/// cycle's 0.75: draining as deep as the probe went (down to half) gave back what a small
/// flow's probe had gained (four flows at 100 ms, seeds 17–64 and 65–112: median Jain 0.977
/// and 0.973, against 0.984 and 0.986).
pub(super) const MAX_PROBE_EXTRA: f64 = 1.0;
/// A fair flow without siblings that has shared the link (held under [`ALONE`] of it) for this
/// many cruising rounds in a row probes by a quarter of what the other flows hold (the capacity
/// less its estimate), where that is less than a quarter of its own rate: above half the link.
/// Under a queue the FIFO delivers each flow in proportion to what it sends, so two flows that
/// both probe by a quarter of their rates gain in proportion, and shares stand; probing by the
/// same amount, the smaller gains more. Beside one other flow from another host started 0.75–1.25
/// s apart at 100 ms (seeds 17–112), Jain under 0.98 in 51 seeds → 26 with [`OVER_HALF_CUT`]
/// and [`ROOM_FOUND`] (the median 0.973 → 0.992), and efficiency 0.964 → 0.959; started exactly
/// a second apart, 79 → 54. Without the wait, a lone flow that a stall had left at three
/// quarters of the link probed by 8 % and was not full 2 s after the stall
/// (`the_rate_comes_back_quickly_after_a_stall`, 100 ms); sixteen rounds are two cycles, by which
/// a flow that holds more than half of the link alone is back above [`ALONE`]
/// (docs/journal/congestion.md, "The larger of two flows probes by what the other holds").
pub(super) const SHARING_ROUNDS: u32 = 16;
/// A probe found room, and the count of [`SHARING_ROUNDS`] starts over, when no standing queue
/// has formed for that many rounds and the first hold round after the probe (the reports lag
/// the sending by a round) leaves the estimate up by this share of what the probe added. Beside
/// another flow the FIFO delivers the larger its part of the probe, under half of it. A lone
/// flow on a jittery path whose start-up ended at a quarter of the link (2 ms of link jitter and
/// 1 ms on the ACK path, 100 ms, seed 18) climbs by its probes, each delivered in full; counted
/// as sharing, it held 4 879 packets a second at 6 s against 5 677 and filled the link at 14 s
/// against 8 s. With this, seeds 17–24 read as before, seed for seed; two flows from different
/// hosts keep 26 seeds of 96 under Jain 0.98 against 24 without it (the probe alone, with no
/// quiet rounds asked, 32; eight, 29).
pub(super) const ROOM_FOUND: f64 = 0.6;
/// Cruising rounds in a row, each drained for, that end with a standing queue and lost nothing,
/// after which a fair flow takes the queue for a loss-based flow's (TCP's) — if it also grew by
/// [`QUEUE_SLACK`] over them: haul flows that see a queue all drain for it, and it goes within a
/// round or two; a CUBIC flow grows into what they leave, and its queue goes only when it
/// overflows the buffer. Draining on left CUBIC 62–77 of 100 Mbit/s at 30 ms in the lab and haul
/// under 25 in two runs of three, its estimate sinking round after round
/// (docs/journal/congestion.md, "A queue that is not ours"). Loss-free, since a flow that started
/// into a full queue (it took the queue for its base RTT and does not drain) overflows the buffer
/// round after round: counting rounds with losses too lowered four haul flows' median Jain index
/// in the simulator at 100 and 300 ms from 0.984 and 0.964 to 0.952 and 0.919. Growing, since
/// four haul flows on two cores in the lab see standing queues that no flow keeps (without it,
/// one run of four started together read 0.401). A loss-free queue that stands through these
/// rounds without growing is drained on, but those rounds no longer age the estimate: a CUBIC
/// flow near its last maximum fills what haul leaves and no more, and beside the model of it
/// haul drained round after round for 6.5 ms of queue, down to 5 Mbit/s at 30 ms in one seed of
/// eight (docs/journal/congestion.md, "Losses counted where they happen"). The queue must end
/// over the usual threshold ([`QUEUE_FRACTION`]) even where a small one counts
/// ([`SMALL_QUEUE_FRACTION`]): shallow drains for a small queue let haul flows' own probes grow
/// it by 2 ms over eight rounds, and four flows at 100 ms once all took their queue for
/// another's (+0.81 of the base RTT).
pub(super) const FOREIGN_QUEUE_ROUNDS: u32 = 8;
/// …as long as such a round delivers at least this share of what it sent: beside a queue that
/// neither grows nor overflows, what is sent arrives; a path that stalled delivers a fraction.
pub(super) const RESTRAINED_DELIVERY: f64 = 0.8;
/// Beside such a queue, the flow neither drains for it nor probes (a probe only takes from the
/// other flow: probing on, CUBIC kept 23–27 % at 100 ms) but keeps its cycle's drain round, so
/// that haul flows that all took their queue for another's still empty it; and it answers a
/// round with losses as a loss-based flow does, scaling its estimate by this, at most once per
/// [`FOREIGN_CUT_ROUNDS`] (the drops of one overflow are reported over a round trip). 0.5: in
/// the lab at 30 ms haul kept 42–43 of 100 Mbit/s in three runs, at 0.7 42–72 (CUBIC down to 26).
/// The round after the cut is held to it (`ModelRate::cut_estimate` says why and what it
/// measured).
pub(super) const FOREIGN_BACKOFF: f64 = 0.5;
pub(super) const FOREIGN_CUT_ROUNDS: u32 = 2;
/// …and in a round without losses grows as a loss-based flow does: by this many packets per
/// RTT in its window each RTT, that is its rate by `FOREIGN_GROWTH × round ÷ RTT²` packets per
/// second, the RTT being the round's last sample (the queue counted). With the halving above
/// this is AIMD(4, 0.5). Holding its rate, haul grew beside CUBIC only when CUBIC's
/// losses emptied the queue, while CUBIC grew through every round: over the last 100 s of 120
/// beside the model of CUBIC, seeds 1–24, haul kept 26.7 / 27.2 Mbit/s at 100 / 30 ms on
/// average, 4 / 1 seeds under 25 (the least 21.6). At 3: 31.8 / 33.4, none under 25 (the
/// least 27.1), CUBIC 59.7 at the least; at 1 (Reno's increase) 27.4 / 33.1, five seeds under
/// 25 at 100 ms, where the increase per second is a tenth of that at 30 ms
/// (docs/journal/congestion.md, "Beside CUBIC, the increase a loss-based flow makes"). 4 since
/// the cut lasts (above): at 3 haul kept 27.7 Mbit/s at 100 ms on average over seeds 1–48, four
/// seeds under 25; at 4 29.1, none (the least 25.3), and 32.8 at 30 ms (the least 29.0). 6 since
/// the cuts by share and to delivery last too (session 77): at 4 haul kept 27.8 at 100 ms, two
/// seeds under 25; at 5 28.7 (the least 25.0); at 6 30.6 (the least 25.9), and 34.1 at 30 ms
/// (the least 30.0) (docs/journal/congestion.md, "Every cut lasts").
pub(super) const FOREIGN_GROWTH: f64 = 6.0;
/// A fair flow that shares the link (delivers under [`ALONE`] of the packet-pair capacity C)
/// and sees a standing queue form in a hold round — not in its probe, nor in the round that
/// drains the probe — scales its estimate by `1 − SHARE_CUT × estimate ÷ C`: the flows' estimates
/// add up to more than the link, and the larger a flow's share the more it gives back (at half
/// the link 5 %, at a tenth 1 %). Drains slow every flow alike, and a probe into a full link
/// gains in proportion to the rate, so without it the shares that start-ups left stood for
/// seconds: two flows started together at 300 ms held 64 and 40 Mbit/s from 5 s to 20 s
/// (docs/journal/congestion.md, "Estimates that add up to more than the link").
pub(super) const SHARE_CUT: f64 = 0.1;
/// A flow that holds more than this share of the link holds more than all the others together:
/// it is the largest there. The larger of two flows gives back over it ([`OVER_HALF_CUT`],
/// [`OVER_HALF_YIELD`]); under it, a flow's cut for a round that delivered less than it sent
/// is capped ([`UNDER_HALF_WEIGHT`]).
pub(super) const HALF_THE_LINK: f64 = 0.5;
/// A fair flow without siblings that holds more than half of the link when a queue forms in a
/// hold round is the largest of the flows on it, and gives back at least this part of what it
/// holds over half, where that is more than [`SHARE_CUT`] takes (above 56 % of the link): at 70 %
/// of the link it keeps 0.86 of its estimate rather than 0.93. Beside one other flow from another
/// host, the cut by share alone moved two flows towards each other by a few percent a cycle, and
/// the next probes undid it: started 0.75–1.25 s apart at 100 ms (seeds 17–112), Jain was under
/// 0.98 over the ten seconds measured in 51 seeds; with this and [`SHARING_ROUNDS`]' probes, 26.
/// Scratch builds, before [`ROOM_FOUND`]: those probes alone 42, this cut alone 49. Made to wait
/// for [`SHARING_ROUNDS`] as the probes do, the cut left 29 seeds, and 69 against 54 started
/// exactly a second apart (docs/journal/congestion.md, "The larger of two flows probes by what
/// the other holds").
pub(super) const OVER_HALF_CUT: f64 = 0.5;
/// A fair flow without siblings that has shared the link for [`SHARING_ROUNDS`] and holds more than
/// half of it gives back this part of what it holds over half once each probe cycle (at
/// [`YIELD_PHASE`]), queue or none: it is the largest flow there. Two flows' cycles keep step, and
/// their probes land in the same round, so a FIFO shares them out in proportion; the cut over half
/// ([`OVER_HALF_CUT`]) waits for a queue in a hold round. With this, the smaller flow's probe finds
/// the room. A lone flow whose capacity reads high enough to look shared gives back too, and its
/// next probe finds room (see [`ROOM_FOUND`]), which starts the count over. Two flows from
/// different hosts, Jain under 0.98 8 to 18 s after the second start, seeds 17–112 / 113–304: at
/// 100 ms with jittered starts 4 / 2 → 3 / 0, exactly a second apart 8 / 16 → 0 / 3, at 300 ms 25 /
/// 41 → 18 / 30; efficiency medians unchanged or up (0.958 → 0.961 at 300 ms). At 0.5: 1 / 0 / 17
/// of seeds 17–112, but efficiency 0.960 / 0.965 / 0.955. Four flows, and flows from one endpoint,
/// read the same summaries; beside the model of CUBIC at 100 ms haul's last 100 s of 120 read 30.2
/// → 29.7 Mbit/s (the least 26.1 → 25.7). The lab does not show the gain: two at 100 ms, sixteen
/// runs each taking turns, under 0.98 in 0 → 1 (the cap alone met it in every run); at 300 ms none
/// in eight either way (docs/journal/congestion.md, "The larger of two flows yields each cycle").
/// These figures are of the yield at the start of the probe round, where it also kept the larger
/// flow's probe from counting; [`YIELD_PHASE`] gives those of the yield where it is now.
pub(super) const OVER_HALF_YIELD: f64 = 0.25;
/// The phase of the probe cycle at whose start [`OVER_HALF_YIELD`] gives back: the last hold round,
/// the round before the probe. A yield is a cut, and a cut holds the next round's delivery sample
/// to the estimate it leaves (that round delivers packets sent before it). Made at the start of the
/// probe round (session 82), the round held was the probe's: where it delivers within its own round
/// (10 ms) it never counted, and elsewhere the room test ([`ROOM_FOUND`]) compared it with the
/// estimate from before the yield. So a flow whose partner had left went on giving back what its
/// probes found. Two flows from different hosts, the first stopped after 30 s, seeds 17–24
/// (`left_alone_across_seeds`): the one left stayed at 51 / 70 Mbit/s of 100 at 10 / 100 ms for the
/// 20 s measured in 8 / 6 seeds, and at 300 ms filled the link in 3 seeds of 8. A round earlier it
/// fills the link from 2–3 / 3–5 / 8–13 s after the other stopped, as before the yield (2–3 / 4–5 /
/// 8–12 s). In the lab at 10 ms (three runs each, taking turns) the flow left stayed at 50 Mbit/s
/// for 20 s, and now fills the link 2 s after. The cost: two flows from different hosts, Jain under
/// 0.98 in seeds 17–112 / 113–304, at 100 ms jittered 3 / 0 → 1 / 1, a second apart 0 / 3 → 1 / 5,
/// at 300 ms 18 / 30 → 20 / 38: at the start of the probe round the yield also kept the larger
/// flow's own probe from counting, which made it stronger than designed, and is what kept a lone
/// flow down. Phases 3–6 let a lone flow fill the link too, and read 1–3 / 1–6 / 20–22 of seeds
/// 17–112 (docs/journal/congestion.md, "A flow left alone fills the link again").
pub(super) const YIELD_PHASE: usize = CYCLE.len() - 1;
/// A fair flow without siblings that has shared the link for [`SHARING_ROUNDS`] and holds under
/// half of it skips this many of the cycle's hold rounds after the first: its cycle is shorter
/// than the largest flow's, and it probes more often. Two flows' cycles kept step: where the
/// smaller flow's probe came in the same round as the larger one's, a FIFO shared both out in
/// proportion, and where it came a round after, its probe round read the larger one's queue and
/// was cut. The offset between the probes repeated cycle after cycle, and the shares wandered by
/// ±10 % of the link without settling. With the smaller flow's cycle a round shorter, the offset
/// moves a round each cycle. Two flows from different hosts with jittered starts at 300 ms, Jain
/// under 0.98 over 8–18 s after the second start, seeds 17–112 / 113–304: 20 / 38 → 11 / 25, and
/// over 18–28 / 28–38 s 8 / 7 → 0 / 0; with 2 ms of path jitter 29 → 27 over 8–18 s (why so
/// little was not traced) and 12 → 4 over 28–38 s. The costs: efficiency median 0.962 / 0.961 →
/// 0.956 / 0.957 at 300 ms (started exactly a second apart 0.961 → 0.948), and four flows from
/// different hosts at 300 ms, each under half, probe more often too: RTT +10 % or more in 43 → 52
/// seeds of 96 (+20 % or more 6 → 7). Two hold rounds: 8 / 14 seeds of two under 0.98, but four
/// at 300 ms at +10 % or more in 55. Skipping only over 0.3 of the link spares four at a quarter
/// each their queue, but among four then only the largest skip: four at 10 ms fell 2 → 5 under
/// 0.98 with two skipped, 2 → 3 with one. A longer cycle for the larger flow instead: 18
/// (docs/journal/congestion.md, "The smaller flow probes more often").
pub(super) const UNDER_HALF_SKIPS: usize = 1;
/// A fair flow that holds at least [`OVERRUN_SHARE`] of the capacity, drains for a standing
/// queue and sees it not shrink while the buffer drops packets, estimates more than it can get:
/// flows that start together each leave start-up with what they delivered while the buffer
/// filled, 1.3–2× the link between them, and draining at 0.75 left the buffer full for seconds
/// (four flows at 300 ms: rounds 6–14 after start-up at 600 ms of RTT, one flow's window stuck
/// behind thousands of holes while another took the link). Each such round scales the estimate
/// of a flow that estimates at least [`ALONE`] of the link (it is alone on it) by this…
pub(super) const OVERRUN_CUT: f64 = 0.8;
/// …and that of a flow sharing it by `1 − OVERRUN_SHARE_CUT × estimate ÷ capacity` (above
/// 0.64): the larger its share, the more it gives back. A fixed 0.8 kept the shares start-up
/// left: two flows started together at 300 ms leave it at 0.81 and 0.58 of the link, and kept
/// 57 : 43 through 20 s (median Jain index 0.978 over 48 seeds; 0.996 with this)…
pub(super) const OVERRUN_SHARE_CUT: f64 = 0.4;
/// …while the flow holds this share of the capacity, and not below it: a newcomer that left
/// start-up beside flows that hold the link delivers little while their queue stands, and
/// cutting it as well kept it small (four flows started a second apart at 300 ms, seeds 17–40:
/// median Jain index 0.970 → 0.899 with every flow cut). The large flows so come down towards
/// the same rate, not in proportion to where start-up left them: floored at half of its own
/// estimate instead, two flows started together at 300 ms kept 64 and 40 Mbit/s (median Jain
/// index 0.953 over 48 seeds, 0.977 with this floor)…
pub(super) const OVERRUN_SHARE: f64 = 0.35;
/// …and while the round delivered at least this share of what the flow sent: a path that stalled
/// delivers a fraction, and the estimate had better collapse, which starts up again (see
/// [`COLLAPSED`]); cut to half, a flow at 1 Gbit/s and 100 ms took 5 s to climb back.
pub(super) const OVERRUN_DELIVERY: f64 = 0.5;
/// A flow alone on the link is cut only when the round lost more than this many times what its
/// random loss rate explains: at 5 % random loss every round loses packets, and a drain whose
/// queue read as held (in the lab at 100 Mbit/s, 300 ms, 5 %, three of four runs) cut a lone
/// flow to 0.8 for nothing (efficiency there 0.917–0.970 in seven runs, 0.942 / 0.972 / 0.973
/// in three with this, 0.964–0.997 in four with every flow exempt; simulator, 100 Mbit/s,
/// 600 ms, 10 %: 0.886 → 0.952). Flows that share the link are cut at
/// any loss, as before: exempting them too lowered four flows a second apart at 300 ms from
/// 0.982 to 0.974 (docs/journal/congestion.md, "A lone flow's overrun cut"). A "random" loss
/// rate of [`MAX_RANDOM_LOSS`] or more explains nothing: it was learnt while the flow took a
/// full buffer for its base RTT. Four flows with jittered starts at 300 ms, seed 51: a
/// newcomer left start-up with 0.97 of the link and 27 % "random" loss, and drained for 4 s
/// into a buffer that dropped every round without a cut (Jain 0.848; 0.941 with this).
pub(super) const OVERRUN_RANDOM: f64 = 2.0;
/// …or, where a round expects few random losses (`λ` under 9), more than `λ` and this many
/// times its spread `√λ`: a count of random losses varies by about `√λ`. At 10 ms a round sends
/// 150–250 packets, so at 1 % it expects one or two, and a round with two or three was cut
/// whenever its queue read as held: in the lab at 100 Mbit/s, 10 ms, 1 %, where a busy host's
/// late ACKs read as a queue, six cuts of a fifth in a third of a second, 56 Mbit/s over 5 s.
/// Beside two CPU hogs there, eight runs each, taking turns: 67.0–88.7 Mbit/s (median 87.4,
/// 0–7 such cuts a run) against 47.9–75.8 (62.7, 4–8). Where a round expects nine or more the
/// allowance is twice the rate as before, and the simulator reads the same byte for byte
/// (docs/journal/congestion.md, "The overrun cut's allowance for a few random losses").
pub(super) const OVERRUN_SPREAD: f64 = 3.0;
/// A fair cruising flow whose round delivered less than [`OVERSUBSCRIBED`] of what it sent
/// while the queue grew (by more than [`QUEUE_SLACK`] from one round's end to the next) cuts
/// its estimate by what the link did not deliver: `1 − (1 − delivered ÷ sent) × w`, with `w` =
/// 1 for a flow alone on the link and `(share ÷ DRAIN_SHARE)²` (at most 4) for one that shares
/// it. When the queue grows, every flow's packets queue alike and each delivers the same part
/// of what it sends, so the signal needs no base RTT: a newcomer that took a standing queue
/// for its base sees it as plainly as the flows that knew the path. Before this, a ten-round
/// maximum of delivery rates held each flow's best round, the estimates added up to 1.2× the
/// link, and four flows kept a queue of +76 % of the base RTT at 300 ms (medians of 48 seeds,
/// a second apart: +0.76 → +0.36, jittered starts +0.66 → +0.42, at 100 ms +0.32 → +0.17;
/// Jain 0.982 → 0.984 and 0.970 → 0.977; docs/journal/congestion.md, "Delivered less than
/// sent"). The weight makes large flows give more: weighted by `share ÷ DRAIN_SHARE`, four
/// flows at 300 ms read 0.976 a second apart; squared but at most 2, two flows at 300 ms read
/// 0.993 (0.998 at most 4, 0.999 before). Sent is the smaller of this round's and
/// the last round's rates, so the rounds around a probe or a drain (whose deliveries lag what
/// they sent by a round trip) read no shortfall. The send rate counts retransmissions and
/// the delivery counts losses up to the random-loss rate (see [`super::round::ReportLosses::served`]). 0.98,
/// not 1: a round's mean report is off by a percent or so (see [`super::ModelRate::steady`]).
pub(super) const OVERSUBSCRIBED: f64 = 0.98;
/// ... and only down to this share of what was sent: a round that delivered less met a
/// stalled or collapsing path, which the collapse rules handle. Cut by 0.6 when a 1 Gbit/s,
/// 100 ms path stalled, a flow recovered at 1.25× per cycle instead of starting up again.
pub(super) const OVERSUBSCRIBED_FLOOR: f64 = 0.7;
/// The largest weight of a sharing flow's cut (one at 0.7 of the link or more), and the
/// deepest cut (see [`OVERSUBSCRIBED`]).
pub(super) const OVERSUBSCRIBED_WEIGHT: f64 = 4.0;
pub(super) const OVERSUBSCRIBED_DEEPEST: f64 = 0.5;
/// The largest weight of the cut (see [`OVERSUBSCRIBED`]) for a flow under half the link, which
/// `(share ÷ DRAIN_SHARE)²` reaches at 0.31 of it. Of two flows, the smaller gave back
/// 1.65 × what the link did not deliver at 0.45 of the link and the larger 2.47 × at 0.55, so
/// both lost nearly alike and the shares stood. With this, the smaller gives back 0.8 × and
/// the larger still 2.47 ×; four equal flows, at a quarter each, are left as they were. Two
/// flows from different hosts at 100 ms, started 0.75–1.25 s apart, with Jain under 0.98 8 to
/// 18 s after the second start: 26 → 4 of seeds 17–112, 53 → 2 of seeds 113–304; started
/// exactly a second apart 54 → 8; at 300 ms 46 → 25. Four at 300 ms: 30 → 28 of seeds
/// 17–304 at +20 % of RTT or more, 34 → 34 under Jain 0.98; in the lab, 24 runs each taking
/// turns, 2 → 4 runs at +20 % or more and 0 → 2 under Jain 0.98. Capped at 0.6 / 0.7 / 0.9 /
/// 1.0, two at 100 ms read 2 / 2 / 2 / 6 seeds of 96, four at 300 ms 11 / 9 / 11 / 10 at
/// +20 % (docs/journal/congestion.md, "The smaller of two flows gives back less").
pub(super) const UNDER_HALF_WEIGHT: f64 = 0.8;
/// How long a bandwidth estimate published by a connection that shares the base RTT counts
/// (see `ModelRate::cut_to_the_shared_link`): a cruising round lasts at most [`MAX_ROUND`], so a
/// sibling that still cruises has published within it; one that has closed, or has left cruise,
/// drops out.
pub(super) const SHARED_ESTIMATE_LIFETIME: Duration = MAX_ROUND;
/// Window before any measurement, and the floor: two light-ACK batches (one every 64 packets).
pub(super) const INITIAL_WINDOW: f64 = 32.0;
pub(super) const MIN_WINDOW: f64 = 128.0;
/// ACKs come at least this often (the ACK timer); the window must outlast the gap between them,
/// however short the RTT (on loopback the RTT is tens of microseconds).
pub(super) const ACK_INTERVAL: Duration = Duration::from_millis(10);
/// Round length before the first RTT sample.
pub(super) const DEFAULT_RTT: Duration = Duration::from_millis(100);
/// Scavenger: the queueing delay it stays under. Above it, each round scales the rate by `1 − 0.3 ×
/// (queue ÷ target − 1)`, at most by [`SCAVENGER_BACKOFF`] (a full queue of a TCP flow at 30 ms
/// backs it off at once, its own 12 ms of queue by 6 %), down to [`SCAVENGER_FLOOR`]; below it,
/// each round adds [`SCAVENGER_STEP`] × `(1 − queue ÷ target)` — LEDBAT's proportional controller:
/// 20 quiet rounds from the floor back to the estimate. Measured in the lab against CUBIC
/// (docs/journal/congestion.md): 0.1 per round, whatever the queue, took back each gap CUBIC left
/// and kept it at 50–64 of 100 Mbit/s at 30 ms.
///
/// Not in a round whose queue grew (its last RTT over the last round's): that is another
/// flow's growth. CUBIC at 30 ms never empties a 1-BDP buffer (after a loss it keeps 0.7 of
/// two BDPs in flight), so a scavenger's least RTT holds 12 ms of CUBIC's queue (43 ms on a
/// 30 ms path in the lab), and the queue read under the target through most of CUBIC's growth:
/// the scale came back each round of it. In the lab at 30 ms CUBIC kept 0.49–0.72 of the link
/// in 7 runs of 11 (47.7–70 Mbit/s), and 0.95–0.96 in 3 runs of 3 with this; in the simulator
/// the model of a loss-based flow kept 73.2 of its 91.4 Mbit/s alone at 30 ms and 62.6 of 71.4
/// at 100 ms, 91.2 and 71.4 with this (docs/journal/congestion.md, "A scavenger beside CUBIC's
/// standing queue").
pub(super) const SCAVENGER_TARGET: Duration = Duration::from_millis(10);
pub(super) const SCAVENGER_BACKOFF: f64 = 0.7;
pub(super) const SCAVENGER_FLOOR: f64 = 0.02;
pub(super) const SCAVENGER_STEP: f64 = 0.05;
/// A newcomer joins its siblings (see `ModelRate::join_siblings`) only where their estimates
/// add up to at least this share of the link capacity: with less, the link has room that
/// start-up finds within rounds, where a cruising flow's probes gain a quarter in eight.
pub(super) const JOIN_HELD: f64 = 0.8;
/// A sibling answers a newcomer's join at its first ACK within this (ACKs come every
/// [`ACK_INTERVAL`] while it sends); a later answer would give back again what the queue's
/// drains and cuts have by then given back.
pub(super) const JOIN_ANSWER_WITHIN: Duration = Duration::from_millis(100);
