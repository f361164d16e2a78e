#!/usr/bin/env python3
"""Side-by-side `haul perf` runs on loopback: two builds (or settings) in alternation.

Each variant is NAME|BINARY|ARGS (ARGS: extra `haul perf` client options, space-separated).
Every round runs every variant once, in turn, each against a fresh `haul perf -s -1` of the same
binary, so that the shared machine's noise falls on all of them alike. Prints each run and the
medians of throughput, CPU seconds per 10^9 bytes (both ends, and each end) and the machine's
context switches per second. Not a test: it measures.

    python3 bench/perf_ab.py --rounds 8 --seconds 3 \\
        "old|/tmp/haul-old|--mss 65535" "new|target/release/haul|--mss 65535" \\
        "tcp|target/release/haul|--tcp --tcp-cc cubic"
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PORT = "9510"


def context_switches():
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("ctxt"):
                return int(line.split()[1])
    return 0


def run(binary, extra, seconds):
    server = subprocess.Popen([binary, "perf", "-s", "-1", "-p", PORT],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        before = context_switches()
        out = subprocess.run([binary, "perf", "-c", f"127.0.0.1:{PORT}", "-t", str(seconds),
                              "--json", *extra.split()], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{binary} perf {extra}: exit {out.returncode}: {out.stderr.strip()[-500:]}")
        switches = (context_switches() - before) / seconds
        server.wait(timeout=10)
    finally:
        server.kill()
    d = json.loads(out.stdout)
    sender, receiver = d["sender_cpu_seconds_per_gb"], d["receiver_cpu_seconds_per_gb"]
    return {"gbps": d["bits_per_second"] / 1e9, "cpu": sender + receiver, "sender": sender,
            "receiver": receiver, "cs": switches}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("variants", nargs="+", help="NAME|BINARY|ARGS")
    a = ap.parse_args()
    variants = [v.split("|", 2) for v in a.variants]
    if any(len(v) != 3 for v in variants):
        sys.exit("each variant is NAME|BINARY|ARGS (ARGS may be empty)")
    for _, binary, _ in variants:
        if not os.access(binary, os.X_OK):
            sys.exit(f"{binary}: no such executable (build it: cargo build --release -p haul)")
    results = {name: [] for name, _, _ in variants}
    for r in range(a.rounds):
        for name, binary, extra in variants:
            res = run(binary, extra, a.seconds)
            results[name].append(res)
            print(f"round {r + 1} {name:<12} {res['gbps']:6.1f} Gbit/s  CPU {res['cpu']:.3f} s/GB "
                  f"(sender {res['sender']:.3f}, receiver {res['receiver']:.3f})  "
                  f"{res['cs']:.0f} context switches/s", flush=True)
    print("medians:")
    for name, runs in results.items():
        med = {k: statistics.median(x[k] for x in runs) for k in runs[0]}
        print(f"  {name:<12} {med['gbps']:6.1f} Gbit/s  CPU {med['cpu']:.3f} s/GB "
              f"(sender {med['sender']:.3f}, receiver {med['receiver']:.3f})  "
              f"{med['cs']:.0f} context switches/s")


if __name__ == "__main__":
    main()
