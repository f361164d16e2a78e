"""One line per lab run from haul perf --json output and haul lab's stderr (queue drops).
RTT_MS (environment, default 300) is the path's RTT, against which the inflation is read."""
import json, os, re, sys
RTT_MS = float(os.environ.get('RTT_MS', 300))
for path in sys.argv[1:]:
    d = json.load(open(path))
    s = d['receiver']['seconds']
    r = [x['rtt_us'] for x in d['intervals'] if not x['omitted'] and x['rtt_us'] > 0]
    err = open(path[:-5] + '.err').read()
    m = re.search(r'queue drops (\d+)', err)
    print('%s: Jain %.3f, RTT %+.0f %%, each %s Mbit/s, queue drops %s' % (
        path[:-5], d['jain_index'], (sum(r) / len(r) / (1000 * RTT_MS) - 1) * 100,
        ' '.join('%.1f' % (b * 8 / s / 1e6) for b in d['receiver']['streams']),
        m.group(1) if m else '?'))
