"""Read every deploy fixture N times and print files per second.

Usage: python benchmarks/read_speed.py [--repeat 100]
Reads tests/data/deploy/** (the copied public fixtures) and examples/*.yaml through
``sched_reader.readers.read_path``; imports only the readers (yaml, shlex, re, pydantic).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sched_reader.readers import read_path  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=100, help="times each file is read (default 100)")
    args = parser.parse_args()
    files = sorted(p for p in (ROOT / "tests" / "data" / "deploy").rglob("*")
                   if p.is_file() and p.name not in ("README.md", "SOURCES")) + sorted((ROOT / "examples").glob("*.yaml"))
    engines = sum(len(read_path(f)) for f in files)  # warm-up, and a check that every file reads
    start = time.perf_counter()
    for _ in range(args.repeat):
        for f in files:
            read_path(f)
    elapsed = time.perf_counter() - start
    reads = len(files) * args.repeat
    print(f"{len(files)} files ({engines} engines) x {args.repeat} = {reads} reads in {elapsed:.2f} s: "
          f"{reads / elapsed:.0f} files/s, {1000 * elapsed / reads:.2f} ms/file")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
