"""Wall time of `sched-reader lint` over many deploy files (issue 14 goal: 1,000 files <= 10 s on 2 cores).

Run: python benchmarks/lint_speed.py [N_FILES] [JOBS...]   (default: 1000 files; jobs 1 and 0=auto)

The files are the deploy fixtures of tests/data/deploy/ (every form: vLLM --config, shell, Kubernetes,
Helm values, compose) copied round-robin, each with a distinct trailing comment, into a temporary
directory. Each run is a whole CLI process (start-up included) writing JSON to /dev/null. Printed per
run: wall time and the CPU time of the process and its workers (on a loaded machine the wall time
mostly measures the queue for a core; CPU time / cores is what an idle runner needs).

Measured 2026-12-01 on the 2-core development box shared by 9 agents (load average 8-9), 1,000 files:
  --jobs 1: CPU 7.0-9.7 s (7-10 ms per file, start-up included), wall 26-54 s under that load
  --jobs 2: CPU 6.3-9.1 s in all, wall 24-43 s under that load
so an idle 2-core runner needs about 7-10 s in one process and about 4-5 s with two workers (goal: 10 s).
The copies share models and releases (as a real repository's files mostly do); the 22 (later 49)
distinct fixtures linted once cost 1.7-2.1 s of CPU including the ~0.6 s start-up, about 30-50 ms per
file with nothing to share. Before this work: 200 copies took 5.1 s of CPU (25 ms per file) in one
process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "deploy"


def make_tree(dest: Path, n: int) -> None:
    files = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".yaml", ".yml", ".sh"))
    for i in range(n):
        src = files[i % len(files)]
        (dest / f"{i:04d}_{src.name}").write_text(src.read_text(encoding="utf-8") + f"\n# copy {i}\n",
                                                 encoding="utf-8")


def run(directory: Path, jobs: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its workers)."""
    import resource

    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "sched_reader", "lint", str(directory), "--format", "json",
                           "-o", os.devnull, "--jobs", str(jobs), "--isolated", "--vllm", "0.19.0"],
                          cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"lint failed ({proc.returncode}): {proc.stderr}")
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    jobs_list = [int(j) for j in sys.argv[2:]] or [1, 0]
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{n} deploy files, {cpus} CPUs available, load average {load:.1f}")
    wall, cpu = run(FIXTURES, 1)
    n_fix = len([p for p in FIXTURES.rglob("*") if p.suffix in (".yaml", ".yml", ".sh")])
    print(f"the {n_fix} distinct fixtures once (no repeats to share), --jobs 1: wall {wall:.2f} s, CPU {cpu:.2f} s "
          f"(start-up included)")
    with tempfile.TemporaryDirectory(prefix="sr-lint-speed-") as tmp:
        make_tree(Path(tmp), n)
        run(Path(tmp), 1) if n <= 50 else None  # warm the bytecode cache on small runs
        for jobs in jobs_list:
            wall, cpu = run(Path(tmp), jobs)
            label = "auto" if jobs == 0 else str(jobs)
            print(f"--jobs {label:4}  wall {wall:6.2f} s ({1000 * wall / n:.1f} ms per file)   "
                  f"CPU {cpu:6.2f} s ({1000 * cpu / n:.1f} ms per file, all processes)")
    print("On a shared machine wall time includes waiting for the CPU; CPU time is the work itself.")


if __name__ == "__main__":
    main()
