#!/usr/bin/env python3
"""Reads the JSON reports of bench/run-figures.sh (one per line) and prints, per workload, the
median and the range of each numeric figure over the runs."""
import json
import statistics
import sys
from collections import defaultdict

runs = defaultdict(list)
for line in sys.stdin:
    line = line.strip()
    if line.startswith("{"):
        d = json.loads(line)
        runs[d["workload"]].append(d)

def flatten(d, prefix=""):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from flatten(v, prefix + k + ".")
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            yield prefix + k, v

for workload, reports in runs.items():
    print(f"== {workload} ({len(reports)} runs)")
    values = defaultdict(list)
    for r in reports:
        for k, v in flatten(r):
            values[k].append(v)
    for k, vs in values.items():
        print(f"  {k:40s} median {statistics.median(vs):14.2f}   range {min(vs):.2f} .. {max(vs):.2f}")
    for r in reports:
        for w in r.get("warnings", []):
            print(f"  warning: {w}")
