# The table of a scripts/files-partition-ab.sh summary (partition-ab-sf<N>.txt): per query, joins and aggregates
# partitioned, cold time, peak device memory, MiB read from files (and read again) with partitions on and off.
# Usage: python3 scripts/partition-ab-table.py partition-ab-sf10.txt
import re, sys
def parse(path):
    runs={}; cur=None
    for l in open(path):
        m=re.match(r"== partitions (on|off)",l)
        if m: cur=m.group(1); runs[cur]={}; continue
        m=re.match(r"gpu (q\d+) cold: ([\d.]+) ms",l)
        if m and cur: runs[cur].setdefault(m.group(1),{})['cold']=float(m.group(2))
        m=re.match(r"gpu (q\d+) device memory: peak ([\d,]+) MiB",l)
        if m and cur: runs[cur].setdefault(m.group(1),{})['peak']=int(m.group(2).replace(',',''))
        m=re.match(r"gpu (q\d+) read from files: ([\d,]+) column chunks, ([\d,]+) MiB on the device \(read again after the budget dropped them: ([\d,]+), ([\d,]+) MiB",l)
        if m and cur: runs[cur].setdefault(m.group(1),{}).update(read=int(m.group(3).replace(',','')), reread=int(m.group(5).replace(',','')))
        m=re.match(r"gpu (q\d+) chunk scans .*skipped by statistics or partition values: ([\d,]+); joins and aggregates run in partitions: ([\d,]+)",l)
        if m and cur: runs[cur].setdefault(m.group(1),{}).update(skipped=int(m.group(2).replace(',','')), parts=int(m.group(3).replace(',','')))
    return runs
r=parse(sys.argv[1])
on,off=r['on'],r['off']
print("query | partitioned joins+aggs | cold ms on / off | peak MiB on / off | MiB read on (again) / off (again) | chunks skipped by statistics (on)")
for q in sorted(on,key=lambda x:int(x[1:])):
    a=on[q]; b=off.get(q,{})
    print("%-4s | %2d | %7.1f / %7.1f | %6d / %6d | %6d (%6d) / %6d (%6d) | %d" % (q, a.get('parts',0), a['cold'], b.get('cold',0), a['peak'], b.get('peak',0), a.get('read',0), a.get('reread',0), b.get('read',0), b.get('reread',0), a.get('skipped',0)))
print("max peak on %d MiB (%s), off %d MiB (%s)" % (max(v['peak'] for v in on.values()), max(on,key=lambda q:on[q]['peak']), max(v['peak'] for v in off.values()), max(off,key=lambda q:off[q]['peak'])))
print("sum cold on %.0f ms, off %.0f ms; read on %d MiB (again %d), off %d MiB (again %d)" % (sum(v['cold'] for v in on.values()), sum(v['cold'] for v in off.values()), sum(v.get('read',0) for v in on.values()), sum(v.get('reread',0) for v in on.values()), sum(v.get('read',0) for v in off.values()), sum(v.get('reread',0) for v in off.values())))
