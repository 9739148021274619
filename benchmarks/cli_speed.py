"""Wall time of whole CLI processes (start-up included), best and median of N runs.

Run: python benchmarks/cli_speed.py [N]. Prints one line per command: best / median seconds.
Goals (issues): `config` on one file < 0.3 s; `compat --vllm 0.18.0` < 0.3 s.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = [
    ["config", "examples/llama3-8b-h100.yaml"],
    ["config", "tests/data/deploy/k8s/kubeai__llama-3.1-70b-instruct-fp8-h100.yaml"],
    ["compat", "--vllm", "0.18.0"],
    ["diagnose", "examples/llama3-8b-h100.yaml"],
    ["diagnose", "examples/llama70b-fp8-tp4.yaml"],
]


def wall(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sched_reader", *argv], cwd=ROOT, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    wall(["--help"])  # warm the bytecode cache
    for argv in COMMANDS:
        times = sorted(wall(argv) for _ in range(n))
        print(f"{' '.join(argv):75} best {times[0]:.3f} s  median {statistics.median(times):.3f} s  (n={n})")


if __name__ == "__main__":
    main()
