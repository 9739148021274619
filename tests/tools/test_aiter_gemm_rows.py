"""tools/aiter_gemm_rows.py: an AITER tuned-GEMM CSV -> rocm_kernel_paths.yaml gemm_measured shape rows.

A hand-written CSV in AITER's columns (cu_num, M, N, K, ..., us): the tool keeps the asked GPU's rows, power-of-two M,
the fastest of repeated rows, and shapes with enough M points.
"""

from __future__ import annotations

from conftest import load_script

CSV = """cu_num,M,N,K,kernelId,splitK,us,kernelName
304,1,1280,8192,34,0,15.78,a
304,16,1280,8192,34,0,12.82,a
304,16,1280,8192,35,0,13.50,b
304,48,1280,8192,34,0,13.00,a
304,64,1280,8192,34,0,12.94,a
80,1,1280,8192,34,0,20.56,a
304,64,192,1024,1,0,4.0,a
"""


def test_rows_keep_gpu_pow2_fastest_and_enough_points(tmp_path):
    mod = load_script("tools/aiter_gemm_rows.py")
    p = tmp_path / "t.csv"
    p.write_text(CSV)
    rows = mod.read_rows(str(p), 304, None)
    assert rows[(1280, 8192)] == {1: 15.78, 16: 12.82, 64: 12.94}    # M 48 dropped, 13.50 slower, cu_num 80 not read
    lines = mod.yaml_lines(rows, 3)
    assert lines == ["- {n: 1280, k: 8192, tokens: [1, 16, 64], us: [15.78, 12.82, 12.94]}"]   # 192 x 1024: 1 point
    assert mod.yaml_lines(rows, 1)[0].startswith("- {n: 192, k: 1024")                         # smaller weight first
