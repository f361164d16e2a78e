#!/usr/bin/env python3
"""Sync benchmark on an emulated WAN link: bringing an out-of-date copy up to date with
`haul sync` and `haul rsync -a --delete` against `rsync -a --delete -e ssh`.

Builds a lab link (default 1 Gbit/s, 100 ms RTT, 1 % loss; needs root) with a private sshd in the
server namespace (shared with bench/copy.py). Two cases, each starting from a fresh copy of the
old version at the destination: one large file with a few bytes changed in a few places, and a
tree of small files of which some changed, some are gone and some are new. Each tool's result is
checked (every file's BLAKE3 against the source). Writes the table into docs/BENCHMARKS.md between
the SYNC markers. Not a test: it measures.

    sudo python3 bench/sync.py [--rate 1G --rtt 100ms --loss 1%] [--big 2G] [--files 10000]
                               [--limit 120] [--no-write]
"""
import datetime
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time

from docblock import write_block

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("copy_bench", os.path.join(HERE, "copy.py"))
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

HAUL, SERVER = bench.HAUL, bench.SERVER
WORK = "/var/tmp/haul-sync-bench"
BEGIN = "<!-- SYNC BEGIN (bench/sync.py writes this) -->"
END = "<!-- SYNC END -->"
TOOLS = ["haul sync", "haul rsync", "rsync -e ssh (bbr)", "rsync -e ssh (cubic)"]
EDITS = 16


def make_versions(big, files):
    """old/ and new/: the new large file differs in EDITS places of 8 bytes; of the small files
    1 % changed, 1 % deleted and 1 % added."""
    old, new = os.path.join(WORK, "old"), os.path.join(WORK, "new")
    stamp = os.path.join(WORK, "made")
    if os.path.exists(stamp) and open(stamp).read() == f"{big} {files}":
        return old, new
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(os.path.join(old, "tree"))
    with open(os.path.join(old, "big.bin"), "wb") as f:
        left = big
        while left:
            n = min(left, 64 << 20)
            f.write(os.urandom(n))
            left -= n
    for i in range(files):
        d = os.path.join(old, "tree", f"d{i // 100:03}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{i % 100:02}"), "wb") as f:
            f.write(os.urandom(4096))
    subprocess.run(["cp", "-a", old, new], check=True)
    with open(os.path.join(new, "big.bin"), "r+b") as f:
        for k in range(EDITS):
            f.seek(k * big // EDITS + 12345)
            f.write(os.urandom(8))
    step = 100
    for i in range(0, files, step):
        path = os.path.join(new, "tree", f"d{i // 100:03}", f"f{i % 100:02}")
        with open(path, "r+b") as f:
            f.write(os.urandom(16))
        os.remove(os.path.join(new, "tree", f"d{i // 100:03}", f"f{(i + 1) % 100:02}"))
        with open(os.path.join(new, "tree", f"d{i // 100:03}", "added"), "wb") as f:
            f.write(os.urandom(4096))
    open(stamp, "w").write(f"{big} {files}")
    return old, new


def file_hash(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def same_file(a, b):
    return file_hash(a) == file_hash(b)


def digest(root):
    """(relative path, SHA-256 of the content) of every file below root, sorted."""
    return sorted((os.path.relpath(os.path.join(d, n), root), file_hash(os.path.join(d, n)))
                  for d, _, names in os.walk(root) for n in names)


def inner(args):
    """Runs in the client namespace: every case and tool, results as JSON on stdout."""
    ssh = args.ssh
    old, new = os.path.join(WORK, "old"), os.path.join(WORK, "new")
    cases = {"big": "big.bin", "small": "tree"}
    results = {}
    for case, name in cases.items():
        src = os.path.join(new, name)
        expected = digest(src) if os.path.isdir(src) else None
        for i, tool in enumerate(TOOLS):
            dest = os.path.join(WORK, f"dest-{case}-{i}")
            shutil.rmtree(dest, ignore_errors=True)
            os.makedirs(dest)
            subprocess.run(["cp", "-a", os.path.join(old, name), dest], check=True)
            rsync = ["rsync", "-a", "--delete", "-e", ssh, src, f"root@{SERVER}:{dest}/"]
            cmd = {
                "haul sync": [HAUL, "sync", "--quiet", "--ssh-cmd", ssh, "--remote-haul", HAUL,
                              src, f"{SERVER}:{dest}"],
                "haul rsync": [HAUL, "rsync", "--ssh-cmd", ssh, "--remote-haul", HAUL, "-a",
                               "--delete", src, f"root@{SERVER}:{dest}/"],
            }.get(tool, rsync)
            if "(" in tool:
                cc = tool.split("(")[-1].rstrip(")")
                subprocess.run(["sysctl", "-qw", f"net.ipv4.tcp_congestion_control={cc}"],
                               check=True)
            subprocess.run(["sync"])
            start = time.monotonic()
            try:
                proc = subprocess.run(cmd, capture_output=True, timeout=args.limit)
                seconds = time.monotonic() - start
                if proc.returncode != 0:
                    raise SystemExit(f"{tool} failed: {proc.stderr.decode()[-500:]}")
                got = os.path.join(dest, name)
                same = digest(got) == expected if expected is not None else same_file(got, src)
                results[f"{case}/{tool}"] = {"seconds": seconds, "finished": True, "same": same}
            except subprocess.TimeoutExpired:
                results[f"{case}/{tool}"] = {"seconds": args.limit, "finished": False,
                                             "same": False}
            print(f"{case:5} {tool:20} {results[f'{case}/{tool}']}", file=sys.stderr)
            shutil.rmtree(dest, ignore_errors=True)
    print(json.dumps(results))


def table(r, args):
    rows = ["| out-of-date copy | tool (TCP sender's controller) | time | vs rsync | result |",
            "|---|---|---|---|---|"]
    labels = {"big": f"one {args.big} file, {EDITS} places of 8 bytes changed",
              "small": f"{args.files} files of 4 KiB, 1 % changed, 1 % gone, 1 % new"}
    for case, label in labels.items():
        for tool in TOOLS:
            c = r[f"{case}/{tool}"]
            when = f"{c['seconds']:.1f} s" if c["finished"] else f"stopped at {c['seconds']} s"
            vs = " / ".join(
                f"{r[f'{case}/rsync -e ssh ({cc})']['seconds'] / c['seconds']:.1f}× ({cc})"
                for cc in ["bbr", "cubic"]) if "(" not in tool else "—"
            ok = "identical" if c["same"] else "**differs**"
            rows.append(f"| {label} | {tool} | {when} | {vs} | {ok} |")
    return "\n".join(rows)


def main():
    args = bench.parse_args(120)
    if args.inner:
        return inner(args)
    bench.ensure("rsync", "rsync")
    bench.ensure("/usr/sbin/sshd", "openssh-server")
    make_versions(bench.parse_size(args.big), args.files)
    sshd, ssh = bench.make_sshd()
    results = bench.run_in_lab(args, sshd, [sys.executable, os.path.abspath(__file__), "--inner",
                                            "--ssh", ssh, "--limit", str(args.limit),
                                            "--big", args.big, "--files", str(args.files)])
    command = (f"sudo python3 bench/sync.py --rate {args.rate} --rtt {args.rtt} --loss {args.loss}"
               f" --big {args.big} --files {args.files} --limit {args.limit}")
    block = (f"{BEGIN}\nMeasured {datetime.date.today()} on the lab link {args.rate}, {args.rtt} "
             f"RTT, {args.loss} loss (both directions), 1-BDP queue, one run, tools in turn, each "
             f"from a fresh copy of the old version:\n\n{table(results, args)}\n\n"
             f"Times include starting the far side over ssh.\n\nReproduce: `{command}`\n{END}")
    print(block)
    if not args.no_write:
        write_block(BEGIN, END, block,
                    "## Bringing a copy up to date over an emulated WAN: haul sync, rsync")


if __name__ == "__main__":
    main()
