"""Peak memory and time of the largest simulation sched-reader accepts (issue 16).

Run: python benchmarks/sim_bounds.py. Runs, in a fresh process each, the largest allowed run by the
up-front bound (``limits.MAX_SIM_TOKENS`` request-steps: 20,000 prompts x 999 output tokens) and the
largest request count at the default lengths that fits it, then prints exit code, wall and CPU seconds
and peak RSS (MiB). Also shows that one step over the bound is refused at once.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time

MODEL = ["--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
RUNS = [
    ("largest allowed: 20,000 x 999 output tokens", ["simulate", "--num-prompts", "20000", "--random-output-len", "999"]),
    ("largest allowed at 128 output tokens: 156,000 prompts", ["simulate", "--num-prompts", "156000"]),
    ("one over the bound: 20,001 x 1,000", ["simulate", "--num-prompts", "20001", "--random-output-len", "1000"]),
]


def main() -> None:
    for label, argv in RUNS:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "sched_reader", *argv, *MODEL], capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        rss = after.ru_maxrss / 1024  # KiB on Linux; the largest child so far
        last = (r.stderr.strip().splitlines() or [""])[-1][:160]
        print(f"{label:55} exit {r.returncode}  wall {wall:6.1f} s  cpu {cpu:6.1f} s  peak RSS <= {rss:6.0f} MiB  {last}")


if __name__ == "__main__":
    main()
