"""Sum Spark job durations per variant window by the job descriptions Hudi sets (from Spark's event log).

Usage: python tools/spark_job_times.py EVENTLOG_DIR MARKS_FILE (the "mark" lines hudi_update_paths.py printed).
"""
import collections
import glob
import json
import sys

log = glob.glob(f"{sys.argv[1]}/*")[0]
marks = []
for line in open(sys.argv[2]):
    if " mark " in line:
        parts = line.split(); marks.append((parts[0], float(parts[2]), float(parts[-1]) * 1000))
jobs = []
starts = {}
for line in open(log):
    e = json.loads(line); ev = e.get("Event")
    if ev == "SparkListenerJobStart":
        p = e.get("Properties") or {}
        starts[e["Job ID"]] = (e["Submission Time"], (p.get("spark.job.description") or p.get("callSite.short") or "?")[:80])
    elif ev == "SparkListenerJobEnd" and e["Job ID"] in starts:
        t, d = starts[e["Job ID"]]; jobs.append((t, e["Completion Time"], d))
for name, dur, end in marks:
    start = end - dur * 1000
    tot = collections.defaultdict(float)
    for t, c, d in jobs:
        if start <= t <= end: tot[d] += (c - t) / 1000
    print(f"== {name} {dur}s (in jobs {sum(tot.values()):.1f}s)")
    for k, v in sorted(tot.items(), key=lambda x: -x[1])[:8]:
        print(f"   {v:6.2f}s  {k}")
