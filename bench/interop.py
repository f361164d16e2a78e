#!/usr/bin/env python3
"""Throughput through an emulated 50 ms RTT, 1 % loss link: UDT4 reference pair, haul (udt4
dialect) sending to the reference, and the reference sending to haul.

Every case crosses the same `haul lab relay`; cases alternate round by round. Writes a table to
docs/BENCHMARKS.md between the INTEROP markers. Not a test: it measures.

    python3 bench/interop.py [--rounds 3] [--mb 16] [--no-write]
"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys
import time

from docblock import write_block

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HAUL = os.path.join(ROOT, "target", "release", "haul")
PEER = os.path.join(ROOT, "target", "udt_peer")
BEGIN = "<!-- INTEROP BEGIN (bench/interop.py writes this) -->"
END = "<!-- INTEROP END -->"
RTT, LOSS = "50ms", "1%"


def relay(listen, to, seed):
    return subprocess.Popen([HAUL, "lab", "relay", "--listen", f"127.0.0.1:{listen}", "--to", f"127.0.0.1:{to}",
                             "--rtt", RTT, "--loss", LOSS, "--seed", str(seed), "--duration", "600s"],
                            stderr=subprocess.DEVNULL)


def ready(proc):
    assert proc.stdout.readline().strip() == b"ready"


def timed(fn):
    t = time.monotonic()
    fn()
    return time.monotonic() - t


def run_case(kind, src, size, port, seed):
    out = src + ".out"
    r = relay(port, port + 1, seed)
    time.sleep(0.2)
    try:
        if kind == "reference -> reference":
            server = subprocess.Popen([PEER, "serve-file", str(port + 1), src], stdout=subprocess.PIPE)
            ready(server)
            secs = timed(lambda: subprocess.run([PEER, "fetch-file", "127.0.0.1", str(port), out, str(size)], check=True))
            server.wait()
        elif kind == "haul (udt4) -> reference":
            server = subprocess.Popen([HAUL, "nc", "--listen", "--mode", "send", f"127.0.0.1:{port + 1}"],
                                      stdin=open(src, "rb"))
            time.sleep(0.2)
            secs = timed(lambda: subprocess.run([PEER, "fetch-file", "127.0.0.1", str(port), out, str(size)], check=True))
            server.wait()
        else:
            server = subprocess.Popen([PEER, "serve-file", str(port + 1), src], stdout=subprocess.PIPE)
            ready(server)
            # The reference sends its shutdown once; if the link loses it, haul nc waits out its
            # idle timeout. Time the bytes, not the goodbye: stop the clock at the last byte.
            t = time.monotonic()
            nc = subprocess.Popen([HAUL, "nc", "--mode", "recv", f"127.0.0.1:{port}"],
                                  stdout=open(out, "wb"), stderr=subprocess.DEVNULL)
            while os.path.getsize(out) < size:
                if nc.poll() is not None and os.path.getsize(out) < size:
                    raise RuntimeError("haul nc ended early")
                time.sleep(0.005)
            secs = time.monotonic() - t
            nc.kill()
            server.wait()
        if open(out, "rb").read() != open(src, "rb").read():
            raise RuntimeError(f"{kind}: received bytes differ")
        return size * 8 / secs / 1e6
    finally:
        r.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mb", type=int, default=16)
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "haul"], cwd=ROOT, check=True)
    subprocess.run(["g++", "-O2", "-std=c++17", "-o", PEER, os.path.join(ROOT, "interop", "udt_peer.cpp"),
                    "-ludt", "-lpthread"], check=True)
    size = a.mb << 20
    src = os.path.join(ROOT, "target", "interop-bench.bin")
    with open(src, "wb") as f:
        f.write(os.urandom(size))
    kinds = ["reference -> reference", "haul (udt4) -> reference", "reference -> haul (udt4)"]
    results = {k: [] for k in kinds}
    port = 9700
    for r in range(a.rounds):
        for k in kinds:
            mbps = run_case(k, src, size, port, seed=r + 1)
            port += 2
            results[k].append(mbps)
            print(f"round {r + 1} {k:<28} {mbps:8.1f} Mbit/s", file=sys.stderr)
    lines = [BEGIN,
             f"Measured {datetime.date.today()}: {a.mb} MiB through `haul lab relay --rtt {RTT} --loss {LOSS}` "
             f"(no rate cap), {a.rounds} alternating rounds, the loss seed varying by round "
             f"(`python3 bench/interop.py --rounds {a.rounds} --mb {a.mb}`). The sender's controller "
             "decides: the reference runs DAIMD, haul its default (the model, docs/CONGESTION.md).",
             "",
             "| sender -> receiver | median Mbit/s | runs |", "|---|---|---|"]
    for k in kinds:
        lines.append(f"| {k} | {statistics.median(results[k]):.1f} | {', '.join(f'{x:.1f}' for x in results[k])} |")
    lines.append(END)
    block = "\n".join(lines)
    print(block)
    if not a.no_write:
        write_block(BEGIN, END, block, "## Interoperability: through an emulated 50 ms, 1 % loss link")

if __name__ == "__main__":
    main()
