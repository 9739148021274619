#!/usr/bin/env python3
"""Summarise sched_reader/models/data/fused_moe_default_penalty.yaml: default-config / tuned kernel-time ratio
by tokens per step (M), median and range over the published series, split by which default was measured.

Ratios > 1 mean vLLM's get_default_config tiles are slower than a tuned table for the same call. Only the
per-M `points` enter the table; the `ranges` (numbers a page states only as a span) are listed below it.

    tools/summarize_fused_moe_penalty.py [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "sched_reader", "models", "data", "fused_moe_default_penalty.yaml")

# Token buckets (M = tokens in the step): label, lowest M, highest M.
BUCKETS = [("1-2", 1, 2), ("4-16", 3, 23), ("24-64", 24, 95), ("96-256", 96, 383), ("512-1024", 384, 1535),
           ("1536-4096", 1536, 6143), (">=8192", 6144, 10**9)]


def dtype_class(series: dict) -> str:
    shape = series.get("shape") or {}
    if shape.get("dtype") == "fp8_w8a8":
        return "fp8-block" if shape.get("block_shape") else "fp8-tensor"
    return shape.get("dtype") or "?"


def group_of(series: dict, default: str | None = None) -> str:
    compare = series.get("compare", "tuned")
    return f"{default or series.get('default', 'unknown')}/{compare} {dtype_class(series)}"


def groups_of_point(series: dict, m: int) -> list[str]:
    """The point's own group, plus old/... where the page measured the new default at an M for which vLLM's
    old default is the same tile config (`old_equals_new_above_M`: block FP8, M > 64)."""
    out = [group_of(series)]
    above = series.get("old_equals_new_above_M")
    if series.get("default") == "new" and above is not None and m > above:
        out.append(group_of(series, "old"))
    return out


def bucket(m: int) -> str:
    for label, lo, hi in BUCKETS:
        if lo <= m <= hi:
            return label
    raise ValueError(m)


def summarize(doc: dict) -> dict:
    """{group: {bucket: {"n_series", "median", "min", "max", "ids"}}}: per series the mean ratio of its points
    in the bucket counts once, so a series with many points in one bucket does not outweigh the others."""
    per: dict = {}
    for s in doc["kernel_series"]:
        for m, base, other in s.get("points", []):
            for g in groups_of_point(s, m):
                per.setdefault(g, {}).setdefault(bucket(m), {}).setdefault(s["id"], []).append(base / other)
    out: dict = {}
    for g, buckets in per.items():
        for b, by_id in buckets.items():
            vals = [statistics.fmean(v) for v in by_id.values()]
            out.setdefault(g, {})[b] = {"n_series": len(vals), "median": round(statistics.median(vals), 3),
                                        "min": round(min(vals), 3), "max": round(max(vals), 3),
                                        "ids": sorted(by_id)}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    with open(DATA) as f:
        doc = yaml.safe_load(f)
    table = summarize(doc)
    if args.json:
        print(json.dumps(table, indent=1, sort_keys=True))
        return 0
    for g in sorted(table):
        print(f"\n== default/compared = {g}   (ratio = default time / compared time)")
        print(f"{'tokens M':>10} | {'series':>6} | {'median':>6} | {'min':>6} | {'max':>6} | ids")
        for label, _, _ in BUCKETS:
            if label in table[g]:
                r = table[g][label]
                print(f"{label:>10} | {r['n_series']:>6} | {r['median']:>6.3f} | {r['min']:>6.3f} | {r['max']:>6.3f} | "
                      + ", ".join(r["ids"]))
    print("\nstated only as ranges:")
    for s in doc["kernel_series"]:
        for r in s.get("ranges", []):
            print(f"  {s['id']} ({group_of(s)}): M={r.get('M')} ratio={r.get('ratio', r.get('ratio_geomean'))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
