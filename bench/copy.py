#!/usr/bin/env python3
"""File copy benchmark on an emulated WAN link: `haul copy` and `haul rsync` against `scp` and
`rsync -e ssh`.

Builds a lab link (default 1 Gbit/s, 100 ms RTT, 1 % loss; needs root), runs a private sshd in the server
namespace, and in the client namespace copies one large file and
a tree of many small files with each tool in turn, plus haul copy of the large file from tmpfs to
tmpfs (memory to memory: same program, no disk) for the disk-to-disk ratio. A tool that does not finish within --limit seconds is stopped and
credited with the bytes that reached the destination. Writes the table into docs/BENCHMARKS.md
between the COPY markers. Not a test: it measures.

    sudo python3 bench/copy.py [--rate 1G --rtt 100ms --loss 1%] [--big 2G] [--files 10000]
                               [--limit 60] [--no-write]
"""
import argparse
import datetime
import glob
import json
import os
import shutil
import subprocess
import sys
import time

from docblock import write_block

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HAUL = os.path.join(ROOT, "target", "release", "haul")
WORK = "/var/tmp/haul-copy-bench"
SERVER = "10.77.0.2"
BEGIN = "<!-- COPY BEGIN (bench/copy.py writes this) -->"
END = "<!-- COPY END -->"
TOOLS = ["haul copy", "haul rsync", "rsync -e ssh (bbr)", "rsync -e ssh (cubic)", "scp (bbr)",
         "scp (cubic)"]


def sh(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def ensure(binary, package):
    if shutil.which(binary) or os.path.exists(binary):
        return
    print(f"installing {package} (apt-get)...", file=sys.stderr)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", package], check=True, env=env)


def make_data(big, files):
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "big.bin")
    if not os.path.exists(path) or os.path.getsize(path) != big:
        with open(path, "wb") as f:
            left = big
            while left:
                n = min(left, 64 << 20)
                f.write(os.urandom(n))
                left -= n
    small = os.path.join(WORK, "small")
    if not os.path.isdir(small) or sum(len(fs) for _, _, fs in os.walk(small)) != files:
        shutil.rmtree(small, ignore_errors=True)
        for i in range(files):
            d = os.path.join(small, f"d{i // 100:03}")
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, f"f{i % 100:02}"), "wb") as f:
                f.write(os.urandom(4096))


def make_sshd():
    d = os.path.join(WORK, "ssh")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for key in ["host_key", "client_key"]:
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/{key}"], check=True)
    shutil.copy(f"{d}/client_key.pub", f"{d}/authorized_keys")
    os.makedirs("/run/sshd", exist_ok=True)
    with open(f"{d}/sshd_config", "w") as f:
        f.write(f"ListenAddress {SERVER}\nPort 22\nHostKey {d}/host_key\n"
                f"AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin prohibit-password\n"
                "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
                f"StrictModes no\nPidFile {d}/sshd.pid\nLogLevel ERROR\n"
                "Subsystem sftp internal-sftp\n")
    ssh = (f"ssh -i {d}/client_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
           "-o BatchMode=yes -o LogLevel=ERROR")
    return f"/usr/sbin/sshd -D -e -f {d}/sshd_config", ssh


def dest_bytes(path):
    total = 0
    for dirpath, _, names in os.walk(path):
        for n in names:
            try:
                total += os.lstat(os.path.join(dirpath, n)).st_size
            except FileNotFoundError:
                pass
    return total


def timed(cmd, dest, expected, limit):
    """Runs a copy into the new directory `dest`; (seconds, bytes there, finished). Every tool
    gets a fresh directory, removed only at the end: re-creating names just deleted is several
    times slower on this file system (it is mounted with `discard`)."""
    os.makedirs(dest)
    subprocess.run(["sync"])
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        _, err = proc.communicate(timeout=limit)
        seconds = time.monotonic() - start
        if proc.returncode != 0:
            raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {err.decode()[-500:]}")
        got = dest_bytes(dest)
        return seconds, got, got >= expected
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()
        return limit, dest_bytes(dest), False


def inner(args):
    """Runs in the client namespace: every case, results as JSON on stdout."""
    ssh = args.ssh
    big = os.path.join(WORK, "big.bin")
    small = os.path.join(WORK, "small")
    sets = {"big": (big, os.path.getsize(big)), "small": (small, dest_bytes(small))}
    results = {}
    for stale in glob.glob(os.path.join(WORK, "dest-*")):
        shutil.rmtree(stale)
    shm = "/dev/shm/haul-copy-bench"
    shutil.rmtree(shm, ignore_errors=True)
    os.makedirs(shm)
    shutil.copy(big, shm)
    memory = [HAUL, "copy", "--quiet", "--ssh-cmd", ssh, "--remote-haul", HAUL,
              os.path.join(shm, "big.bin"), f"{SERVER}:{shm}/dest"]
    seconds, got, done = timed(memory, f"{shm}/dest", sets["big"][1], args.limit)
    results["memory_bps"] = got * 8 / seconds
    shutil.rmtree(shm, ignore_errors=True)
    dests = []
    for name, (src, size) in sets.items():
        rsync = ["rsync", "-a", "-e", ssh, src, f"root@{SERVER}:@DEST@/"]
        scp = ["scp", "-q", "-r", *ssh.split()[1:], src, f"root@{SERVER}:@DEST@"]
        tools = {
            "haul copy": (None, [HAUL, "copy", "--quiet", "--ssh-cmd", ssh, "--remote-haul", HAUL,
                                 src, f"{SERVER}:@DEST@"]),
            "haul rsync": (None, [HAUL, "rsync", "--ssh-cmd", ssh, "--remote-haul", HAUL, "-a",
                                  src, f"root@{SERVER}:@DEST@/"]),
            "rsync -e ssh (bbr)": ("bbr", rsync),
            "rsync -e ssh (cubic)": ("cubic", rsync),
            "scp (bbr)": ("bbr", scp),
            "scp (cubic)": ("cubic", scp),
        }
        for i, (tool, (cc, cmd)) in enumerate(tools.items()):
            dest = os.path.join(WORK, f"dest-{name}-{i}")
            dests.append(dest)
            cmd = [a.replace("@DEST@", dest) for a in cmd]
            if cc:
                # The sender's controller decides; the sender is in this namespace.
                subprocess.run(["sysctl", "-qw", f"net.ipv4.tcp_congestion_control={cc}"],
                               check=True)
            seconds, got, done = timed(cmd, dest, size, args.limit)
            results[f"{name}/{tool}"] = {"seconds": seconds, "bytes": got, "size": size,
                                        "finished": done, "bps": got * 8 / seconds}
            print(f"{name:5} {tool:13} {seconds:7.1f} s {got * 8 / seconds / 1e6:9.1f} Mbit/s"
                  f"{'' if done else ' (stopped)'}", file=sys.stderr)
    for dest in dests:
        shutil.rmtree(dest, ignore_errors=True)
    print(json.dumps(results))


def table(r, args):
    rows = ["| data | tool (TCP sender's controller) | time | goodput | vs rsync |",
            "|---|---|---|---|---|"]
    for name, label in [("big", f"one {args.big} file"), ("small", f"{args.files} files of 4 KiB")]:
        for tool in TOOLS:
            c = r[f"{name}/{tool}"]
            base = r[f"{name}/rsync -e ssh ({tool.split('(')[-1]}"]["bps"] if "(" in tool else None
            when = f"{c['seconds']:.1f} s" if c["finished"] else \
                f"stopped at {c['seconds']:.0f} s ({100 * c['bytes'] / c['size']:.1f} % done)"
            if base is None:
                vs = " / ".join(f"{c['bps'] / r[f'{name}/rsync -e ssh ({cc})']['bps']:.1f}× ({cc})"
                                for cc in ["bbr", "cubic"])
            else:
                vs = f"{c['bps'] / base:.2f}×"
            rows.append(f"| {label} | {tool} | {when} | {c['bps'] / 1e6:.1f} Mbit/s | {vs} |")
    ratio = r["big/haul copy"]["bps"] / r["memory_bps"]
    return "\n".join(rows), ratio


def run_in_lab(args, sshd, inner):
    """Runs the command `inner` in the client namespace of a lab link (args.rate, args.rtt,
    args.loss) whose server namespace runs `sshd`; the JSON on its last line of output."""
    cmd = [HAUL, "lab", "link", "--rate", args.rate, "--rtt", args.rtt, "--loss", args.loss,
           "--server", sshd, "--", *inner]
    # A namespace may only pick controllers on the host's allowed list (here: reno bbr), so the
    # run allows cubic too, and puts the list back afterwards.
    allowed_key = "net.ipv4.tcp_allowed_congestion_control"
    allowed = sh(["sysctl", "-n", allowed_key]).strip()
    subprocess.run(["sysctl", "-qw", f"{allowed_key}={allowed} cubic"], check=True)
    try:
        out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    finally:
        subprocess.run(["sysctl", "-qw", f"{allowed_key}={allowed}"], check=True)
    return json.loads(out.strip().splitlines()[-1])


def parse_args(limit):
    """The options both copy benchmarks take; `limit` is the default of --limit (seconds)."""
    p = argparse.ArgumentParser()
    p.add_argument("--rate", default="1G")
    p.add_argument("--rtt", default="100ms")
    p.add_argument("--loss", default="1%")
    p.add_argument("--big", default="2G")
    p.add_argument("--files", type=int, default=10000)
    p.add_argument("--limit", type=int, default=limit)
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--ssh", help=argparse.SUPPRESS)
    return p.parse_args()


def main():
    args = parse_args(60)
    if args.inner:
        return inner(args)
    ensure("rsync", "rsync")
    ensure("/usr/sbin/sshd", "openssh-server")
    make_data(parse_size(args.big), args.files)
    sshd, ssh = make_sshd()
    results = run_in_lab(args, sshd, [sys.executable, os.path.abspath(__file__), "--inner",
                                      "--ssh", ssh, "--limit", str(args.limit)])
    rows, ratio = table(results, args)
    command = (f"sudo python3 bench/copy.py --rate {args.rate} --rtt {args.rtt} --loss {args.loss}"
               f" --big {args.big} --files {args.files} --limit {args.limit}")
    block = (f"{BEGIN}\nMeasured {datetime.date.today()} on the lab link {args.rate}, {args.rtt} RTT, "
             f"{args.loss} loss (both directions), 1-BDP queue, one run, tools in turn:\n\n{rows}\n\n"
             f"haul copy of the large file disk to disk (verified, synced) moved "
             f"{results['big/haul copy']['bps'] / 1e6:.1f} Mbit/s; the same copy from tmpfs to tmpfs "
             f"(memory to memory) {results['memory_bps'] / 1e6:.1f} Mbit/s: disk-to-disk is "
             f"**{ratio:.2f}×** memory-to-memory. Times include starting the far side over ssh.\n\nReproduce: `{command}`\n{END}")
    print(block)
    if not args.no_write:
        write_block(BEGIN, END, block, "## Copying files over an emulated WAN: haul copy, rsync, scp")


if __name__ == "__main__":
    main()
