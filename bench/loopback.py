#!/usr/bin/env python3
"""Loopback benchmark: haul perf against kernel TCP (haul perf --tcp and iperf3), side by side.

Runs ROUNDS rounds; each round runs every case once, in turn, so that noise from the shared
machine spreads over all cases alike. Reports medians and writes the table into
docs/BENCHMARKS.md between the LOOPBACK markers. Not a test: it measures.

    python3 bench/loopback.py [--rounds 3] [--seconds 5] [--no-write]
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from docblock import write_block

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HAUL = os.path.join(ROOT, "target", "release", "haul")
PORT = 9400
IPERF_PORT = 9401
BEGIN = "<!-- LOOPBACK BEGIN (bench/loopback.py writes this) -->"
END = "<!-- LOOPBACK END -->"


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def ensure_iperf3():
    if shutil.which("iperf3"):
        return True
    print("installing iperf3 (apt-get)...", file=sys.stderr)
    try:
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "iperf3"], check=True,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    except (subprocess.CalledProcessError, FileNotFoundError) as e:
        print(f"iperf3 unavailable ({e}); its rows are skipped", file=sys.stderr)
        return False
    return True


def haul_case(args, seconds):
    out = sh([HAUL, "perf", "-c", f"127.0.0.1:{PORT}", "-t", str(seconds), "--json", *args]).stdout
    d = json.loads(out)
    return {
        "gbps": d["bits_per_second"] / 1e9,
        "cpu_per_gb": d["sender_cpu_seconds_per_gb"] + d["receiver_cpu_seconds_per_gb"],
        "retr": d["sender"]["retransmits"],
    }


def iperf_case(seconds, udp=False):
    """iperf3 over kernel TCP, or with `udp` bare UDP: 65 000-byte datagrams as fast as the
    kernel takes them, no protocol at all (the ceiling any UDP transport meets here)."""
    extra = ["-u", "-b", "0", "-l", "65000"] if udp else []
    out = sh(["iperf3", "-c", "127.0.0.1", "-p", str(IPERF_PORT), "-t", str(seconds), "-J", *extra]).stdout
    d = json.loads(out)
    end = d["end"]
    received = end["sum_received"]
    gb = received["bytes"] / 1e9
    cpu = end["cpu_utilization_percent"]
    # iperf3 reports each side's CPU as a percentage of the test's wall time.
    cpu_s = (cpu["host_total"] + cpu["remote_total"]) / 100.0 * received["seconds"]
    return {
        "gbps": received["bits_per_second"] / 1e9,
        "cpu_per_gb": cpu_s / gb,
        "retr": end["sum_sent"].get("retransmits", 0),
    }


def cpu_ticks():
    """(stolen, total) CPU ticks from /proc/stat: the hypervisor's share shows how disturbed a run was."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return fields[7] if len(fields) > 7 else 0, sum(fields)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/ alone")
    a = ap.parse_args()

    sh(["cargo", "build", "--release", "-q", "-p", "haul"], cwd=ROOT)
    have_iperf = ensure_iperf3()
    servers = [subprocess.Popen([HAUL, "perf", "--server", "--port", str(PORT)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    if have_iperf:
        servers.append(subprocess.Popen(["iperf3", "-s", "-p", str(IPERF_PORT)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(1)
    cases = [
        ("haul, MSS 1500", lambda: haul_case([], a.seconds)),
        ("haul, MSS 65535 (loopback MTU)", lambda: haul_case(["--mss", "65535"], a.seconds)),
        ("haul, MSS 1500, copying calls (--copy)", lambda: haul_case(["--copy"], a.seconds)),
        ("kernel TCP (haul perf --tcp, cubic)", lambda: haul_case(["--tcp", "--tcp-cc", "cubic"], a.seconds)),
    ]
    if have_iperf:
        cases.append(("kernel TCP (iperf3, cubic)", lambda: iperf_case(a.seconds)))
        cases.append(("kernel UDP, no protocol (iperf3 -u, 65 000 B)", lambda: iperf_case(a.seconds, udp=True)))
    results = {name: [] for name, _ in cases}
    steal0, total0 = cpu_ticks()
    try:
        for r in range(a.rounds):
            for name, run in cases:
                res = run()
                results[name].append(res)
                print(f"round {r + 1} {name:<38} {res['gbps']:7.2f} Gbit/s {res['cpu_per_gb']:5.2f} CPU s/GB",
                      file=sys.stderr)
    finally:
        for s in servers:
            s.terminate()

    steal1, total1 = cpu_ticks()
    stolen = (steal1 - steal0) / max(total1 - total0, 1)
    med = {n: {k: statistics.median(x[k] for x in v) for k in ("gbps", "cpu_per_gb")} for n, v in results.items()}
    tcp = med["kernel TCP (haul perf --tcp, cubic)"]
    lines = [
        BEGIN,
        f"Measured {datetime.date.today()} on this machine, {a.rounds} alternating rounds of {a.seconds} s each "
        f"(medians; all runs: `python3 bench/loopback.py --rounds {a.rounds} --seconds {a.seconds}`).",
        "CPU is both ends together, per 10^9 bytes delivered. "
        f"The hypervisor stole {stolen * 100:.0f} % of this virtual machine's CPU time during the run.",
        "",
        "| case | throughput (Gbit/s) | CPU s/GB | ratio to kernel TCP (throughput) | runs (Gbit/s) |",
        "|---|---|---|---|---|",
    ]
    for name, m in med.items():
        runs = ", ".join(f"{x['gbps']:.1f}" for x in results[name])
        lines.append(f"| {name} | {m['gbps']:.1f} | {m['cpu_per_gb']:.2f} | {m['gbps'] / tcp['gbps']:.2f} | {runs} |")
    lines.append(END)
    block = "\n".join(lines)
    print(block)
    if not a.no_write:
        write_block(BEGIN, END, block, "## Loopback, memory to memory")

if __name__ == "__main__":
    main()
