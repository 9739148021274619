"""Wall and CPU time of whole CLI processes (start-up included), best and median of N runs.

Run: python benchmarks/cli_speed.py [N] [--against DIR]. Prints one line per command: best / median wall seconds
and best CPU seconds (user + system of the child: less sensitive to other load on the machine than wall time).
``--against DIR`` also times another checkout (for example the first release in a git worktree, with its own
``.venv``), run by run interleaved with this one so both see the same machine load; the lines are paired.
Goals (issues): `config` on one file < 0.3 s; `compat --vllm 0.18.0` < 0.3 s; `diagnose` <= 0.5 s and no slower
than the first release (issue 9, issue 12).
"""

from __future__ import annotations

import argparse
import os
import resource
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


def _python(checkout: Path) -> str:
    """The checkout's own interpreter (``.venv``), else this one."""
    venv = checkout / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def timed(checkout: Path, argv: list[str]) -> tuple[float, float]:
    """One process: (wall seconds, CPU seconds). Bytecode is written (a first run warms the cache)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([_python(checkout), "-m", "sched_reader", *argv], cwd=checkout, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", nargs="?", type=int, default=7, help="runs per command (default 7)")
    ap.add_argument("--against", type=Path, help="another checkout to time interleaved with this one")
    args = ap.parse_args()
    checkouts = {"this": ROOT} | ({"against": args.against.resolve()} if args.against else {})
    for where in checkouts.values():
        timed(where, ["--help"])  # warm the bytecode cache
    for argv in COMMANDS:
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in checkouts}
        for _ in range(args.n):
            for name, where in checkouts.items():
                runs[name].append(timed(where, argv))
        for name, got in runs.items():
            walls = sorted(w for w, _ in got)
            cpu = min(c for _, c in got)
            label = " ".join(argv) + ("" if name == "this" else f"  [{name}]")
            print(f"{label:80} best {walls[0]:.3f} s  median {statistics.median(walls):.3f} s  "
                  f"cpu best {cpu:.3f} s  (n={args.n})")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
