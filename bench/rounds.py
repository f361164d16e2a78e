#!/usr/bin/env python3
"""The congestion controller's rounds, read from a trace: one line per flow and round, or where
each flow's start-up ended. Reads what `HAUL_LOG=haul_proto::cc=trace` prints (the "model round"
line, which carries its time since session 60) from the simulator's tests or from `haul`.

    HAUL_LOG=haul_proto::cc=trace NO_COLOR=1 cargo test --release -p haul-proto \\
        --test congestion fairness_across_seeds -- --ignored --nocapture 2> LOG
    python3 bench/rounds.py LOG... [--from S] [--to S] [--flow N]
    python3 bench/rounds.py --exits LOG...

Several logs are tabulated one after another, each after an `== LOG` line. A table line:
seconds from the run's first round, the flow (f0 started first), phase, pacing gain, probe
cycle, D while draining a queue, F beside another flow's queue, the round's least receiver RTT,
the base RTT (ms; the shorter of the flow's own and the one the endpoint's connections to the
host share, since session 62), the estimate, the round's sample (packets per second), packets
sent, packets reported lost in the round (since session 61; `?` in older traces) and the
random-loss rate. With --exits, for each log of several seeds (as
`fairness_across_seeds` prints them, each seed ending at its "Mbit/s in the order" line):
by start order, the median estimate, base RTT and seconds in start-up where start-up ended.
"""
import argparse
import math
import re
import signal
import statistics
import sys

FIELD = re.compile(r"(\w+)=(Some\([^)]*\)|Instant \{[^}]*\}|Jump \{[^}]*\}|\S+)")
INSTANT = re.compile(r"tv_sec: (\d+), tv_nsec: (\d+)")
DURATION = re.compile(r"([\d.]+)(ms|µs|ns|s)")
UNIT_MS = {"ms": 1.0, "s": 1000.0, "µs": 1e-3, "ns": 1e-6}
SEED_END = "Mbit/s in the order"


def millis(text):
    """A Duration's Debug text (`Some(310.2ms)`) in milliseconds; NaN for `None`."""
    m = DURATION.search(text)
    return float(m.group(1)) * UNIT_MS[m.group(2)] if m else float("nan")


def runs(path):
    """The rounds of each run in the log at `path`: a list (one per seed) of lists of dicts."""
    found, current = [], []
    try:
        log = open(path, encoding="utf-8", errors="replace")
    except OSError as e:
        sys.exit(f"{path}: {e.strerror}: give the log a traced run wrote (see --help)")
    with log:
        for number, line in enumerate(log, 1):
            if SEED_END in line:
                if current:
                    found.append(current)
                current = []
                continue
            if "model round" not in line:
                continue
            fields = dict(FIELD.findall(line))
            instant = INSTANT.search(fields.get("now", ""))
            if instant is None:
                sys.exit(f"{path}:{number}: a model round without its time: trace a build of "
                         "session 60 or later with HAUL_LOG=haul_proto::cc=trace NO_COLOR=1")
            fields["t"] = int(instant.group(1)) + int(instant.group(2)) / 1e9
            current.append(fields)
    if current:
        found.append(current)
    if not found:
        sys.exit(f"{path}: no model rounds: was it traced with HAUL_LOG=haul_proto::cc=trace?")
    return found


def base(r):
    """The base RTT the round used (ms): the flow's own least RTT, or the shorter one the
    endpoint's connections to the host shared (`path_min_rtt`, since session 62)."""
    own, path = millis(r["min_rtt"]), millis(r.get("path_min_rtt", "None"))
    return own if math.isnan(path) else min(own, path)


def by_flow(rounds):
    """The run's rounds with `t` from its first round and `flow`, its index in start order."""
    order = {}
    start = rounds[0]["t"]
    for r in rounds:
        r["flow"] = order.setdefault(r["isn"], len(order))
        r["t"] -= start
    return rounds


def table(args):
    for path in args.logs:
        if len(args.logs) > 1:
            print("==", path)
        for rounds in runs(path):
            print_rounds(rounds, args)


def print_rounds(rounds, args):
    """One line per round of one run, within --from/--to and --flow."""
    for r in by_flow(rounds):
        if not (args.start <= r["t"] <= args.end) or args.flow not in (None, r["flow"]):
            continue
        print("%6.2f f%d %-8s g%.2f c%s %s %s rtt %6.1f base %6.1f bw %7.0f samp %7.0f "
              "sent %5d lost %5s loss %.3f" % (
                  r["t"], r["flow"], r["phase"][:8], float(r["gain"]), r["cycle"],
                  "D" if r["draining"] == "true" else "-",
                  "F" if r["foreign"] == "true" else "-",
                  millis(r["round_min_rtt"]), base(r), float(r["bw_pps"]),
                  float(r["round_sample"]), int(r["sent"]), r.get("lost", "?"),
                  float(r["loss"])))


def exits(args):
    for path in args.logs:
        ends = []  # per run: flow -> (estimate, base RTT, seconds in start-up)
        for rounds in runs(path):
            first, end = {}, {}
            for r in by_flow(rounds):
                first.setdefault(r["flow"], r["t"])
                if r["phase"] != "Startup" and r["flow"] not in end:
                    end[r["flow"]] = (float(r["bw_pps"]), base(r),
                                      r["t"] - first[r["flow"]])
            ends.append(end)
        flows = max((len(e) for e in ends), default=0)

        def median(flow, k):
            values = [e[flow][k] for e in ends if flow in e]
            return statistics.median(values) if values else float("nan")

        print(path, "by start order: start-up ended at",
              [round(median(i, 0)) for i in range(flows)], "packets/s, base",
              [round(median(i, 1)) for i in range(flows)], "ms, after",
              [round(median(i, 2), 2) for i in range(flows)], "s (medians)")


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the table quietly
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("logs", nargs="+", metavar="LOG")
    p.add_argument("--exits", action="store_true", help="where each flow's start-up ended")
    p.add_argument("--from", dest="start", type=float, default=0.0, help="seconds (table)")
    p.add_argument("--to", dest="end", type=float, default=float("inf"), help="seconds (table)")
    p.add_argument("--flow", type=int, help="only this flow, by start order (table)")
    args = p.parse_args()
    exits(args) if args.exits else table(args)


if __name__ == "__main__":
    main()
