"""Turn one of AITER's GEMM tuning tables into the shape rows of rocm_kernel_paths.yaml ``gemm_measured``.

AITER (github.com/ROCm/aiter) ships, per kernel family, a CSV of tuned GEMMs: one row per (GPU, M, N, K) with the
time ``us`` of the fastest kernel its tuner found (bf16_tuned_gemm.csv, a8w8_tuned_gemm.csv,
a8w8_blockscale_tuned_gemm*.csv...). The GPU is named by ``cu_num`` (304: MI300X / MI325X; 256: MI355X / MI350X;
80: MI308X) and, in newer files, ``gfx``. This reads such a CSV (a local copy, e.g. ``git show
<commit>:aiter/configs/a8w8_tuned_gemm.csv > /tmp/t.csv``) and prints one YAML flow line per N x K:
``{n: N, k: K, tokens: [...], us: [...]}``, keeping

  * the rows of the GPU asked for (``--cu-num``, and ``--gfx`` when the file has that column);
  * power-of-two M only (the grid the existing tables use; gemm_curve interpolates in log2 M);
  * the fastest row where a (M, N, K) appears more than once;
  * shapes measured at ``--min-points`` or more such M (a lone point would be held at every M).

Units: tokens = M (rows of the activation, tokens per step); us = microseconds per GEMM call; n, k: output and input
features of the weight on one GPU, as AITER's columns N and K. Nothing of AITER is imported or copied; the numbers
are data read once, offline, and written into the catalog with the source URL at a pinned commit.

Usage:
  python tools/aiter_gemm_rows.py /tmp/t.csv --cu-num 304 [--gfx gfx942] [--min-points 6]
"""

from __future__ import annotations

import argparse
import csv
import sys


def _pow2(m: int) -> bool:
    return m > 0 and m & (m - 1) == 0


def read_rows(path: str, cu_num: int, gfx: str | None) -> dict[tuple[int, int], dict[int, float]]:
    """{(N, K): {M: fastest us}} of the rows for ``cu_num`` (and ``gfx`` where the file names it), power-of-two M."""
    out: dict[tuple[int, int], dict[int, float]] = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            if int(float(row["cu_num"])) != cu_num:
                continue
            if gfx and row.get("gfx") and row["gfx"] != gfx:
                continue
            m, n, k = int(row["M"]), int(row["N"]), int(row["K"])
            us = float(row["us"])
            if not _pow2(m) or us <= 0:
                continue
            cell = out.setdefault((n, k), {})
            cell[m] = min(us, cell.get(m, us))
    return out


def yaml_lines(rows: dict[tuple[int, int], dict[int, float]], min_points: int) -> list[str]:
    """One ``{n, k, tokens, us}`` flow line per shape with at least ``min_points`` M, sorted by weight size."""
    lines = []
    for (n, k), by_m in sorted(rows.items(), key=lambda kv: (kv[0][0] * kv[0][1], kv[0])):
        if len(by_m) < min_points:
            continue
        ms = sorted(by_m)
        tokens = ", ".join(str(m) for m in ms)
        us = ", ".join(f"{round(by_m[m], 2):g}" for m in ms)
        lines.append(f"- {{n: {n}, k: {k}, tokens: [{tokens}], us: [{us}]}}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--cu-num", type=int, required=True)
    ap.add_argument("--gfx", default=None)
    ap.add_argument("--min-points", type=int, default=6)
    a = ap.parse_args(argv)
    for line in yaml_lines(read_rows(a.csv, a.cu_num, a.gfx), a.min_points):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
