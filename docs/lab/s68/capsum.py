"""Capacity in a haul trace's round lines: half-second buckets, and a replay of sender-side filters."""
import sys, re, collections
def rows_of(path):
    rows = []
    for l in open(path):
        if 'model round' not in l: continue
        m = re.search(r'tv_sec: (\d+), tv_nsec: (\d+).*phase=(\w+).*bw_pps=([0-9.]+).*capacity=Some\(([0-9.]+)\)', l)
        if m: rows.append((int(m.group(1)) + int(m.group(2)) / 1e9, m.group(3), float(m.group(4)), float(m.group(5))))
    return rows
def replay(rows, period, n, high):
    ring, last, over = [], None, 0
    for t, ph, bw, c in rows:
        if last is None or t - last >= period:
            ring.append(c); ring = ring[-n:]; last = t
        med = sorted(ring)[len(ring) // 2]
        over += ph == 'Cruise' and med > high
    return over
path = sys.argv[1]; link = float(sys.argv[2]) if len(sys.argv) > 2 else 83333
rows = rows_of(path); t0 = rows[0][0]
b = collections.defaultdict(list)
for t, ph, bw, c in rows: b[int((t - t0) * 2) / 2].append((bw, c))
print(f'{path}: {len(rows)} rounds; C in the round lines by half second: least / median / most, rounds with bw < 0.9 C')
for k in sorted(b):
    cs = sorted(c for _, c in b[k])
    print(f'  {k:5.1f} s  {cs[0]:8.0f} {cs[len(cs)//2]:8.0f} {cs[-1]:8.0f}  {sum(1 for bw, c in b[k] if bw / c < 0.9):3d} of {len(cs)}')
cruise = sum(1 for r in rows if r[1] == 'Cruise')
print(f'cruising rounds whose C reads above the link / 0.9 ({link/0.9:.0f}), of {cruise}:')
print(f'  as read: {replay(rows, 0, 1, link/0.9)}')
for period, n in ((0.0, 15), (0.1, 15), (0.2, 15)):
    print(f'  median of the last {n} reports, one kept each {period*1000:.0f} ms: {replay(rows, period, n, link/0.9)}')
