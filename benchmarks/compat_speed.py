#!/usr/bin/env python3
"""Wall time of `sched-reader compat` in a fresh interpreter (target: --vllm 0.18.0 under 0.3 s).

Each case runs N times with subprocess; prints min / median / max seconds.
Usage: python benchmarks/compat_speed.py [-n 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENTRY = "from sched_reader.cli.app import main; main()"
CASES = [
    ("compat --vllm 0.18.0", ["compat", "--vllm", "0.18.0"]),
    ("compat --vllm 0.18.0 -f json", ["compat", "--vllm", "0.18.0", "-f", "json"]),
    ("compat --diff 0.17.1 0.18.0", ["compat", "--diff", "0.17.1", "0.18.0"]),
    ("compat --flag --max-num-seqs", ["compat", "--flag", "--max-num-seqs"]),
    ("compat --vllm 0.18.0 kubeai fixture", ["compat", "--vllm", "0.18.0",
                                              "tests/data/deploy/k8s/kubeai__llama-3.1-70b-instruct-fp8-h100.yaml"]),
    ("python -c pass (interpreter floor)", None),
]
TARGET = {"compat --vllm 0.18.0": 0.3}


def measure(argv: list[str] | None, n: int) -> list[float]:
    cmd = [sys.executable, "-c", "pass"] if argv is None else [sys.executable, "-c", ENTRY, *argv]
    times = []
    for _ in range(n):
        t = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True)
        times.append(time.perf_counter() - t)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=7)
    args = ap.parse_args()
    failed = False
    print(f"{'case':<42} {'min':>7} {'median':>7} {'max':>7}  target")
    for name, argv in CASES:
        ts = measure(argv, args.n)
        target = TARGET.get(name)
        ok = "" if target is None else ("ok" if statistics.median(ts) < target else f"OVER {target}s")
        failed |= ok.startswith("OVER")
        print(f"{name:<42} {min(ts):7.3f} {statistics.median(ts):7.3f} {max(ts):7.3f}  {ok}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
