"""NVIDIA's measured vLLM runs (aiconfigurator silicon data) through benchmarks/silicon_accuracy.py.

Pinned to the published measurements of tests/data/silicon/aiconfigurator_vllm_agg.csv (mean TPOT of a
closed loop at a stated concurrency), not to this model's own arithmetic."""

from __future__ import annotations

import csv

import pytest
from conftest import load_script

SIL = load_script("benchmarks/silicon_accuracy.py")
DERIVE = load_script("tools/derive_silicon_refs.py")
ROWS = {r["id"]: r for r in SIL.load_rows()}


@pytest.mark.parametrize("row_id, published_tpot_ms, tolerance", [
    # Qwen3-32B BF16, one H100 SXM node at TP 8, vLLM 0.12.0, 4,096 in / 128 out at concurrency 8
    ("qwen_qwen3_32b_qwen_qwen3_32b_h100_sxm_vllm_agg_4096x128_c8_tp8_epnone_48", 11.166, 0.15),
    # Qwen3-32B BF16 at TP 2, 1,024 in / 1,024 out at concurrency 64
    ("qwen_qwen3_32b_qwen_qwen3_32b_h100_sxm_vllm_agg_1024x1024_c64_tp2_epnone_40", 26.09, 0.20),
])
def test_closed_loop_tpot_matches_nvidia_measurement(row_id, published_tpot_ms, tolerance):
    row = ROWS[row_id]
    assert float(row["silicon_tpot_ms"]) == pytest.approx(published_tpot_ms, abs=0.01)
    res = SIL.evaluate_row(row)
    assert res["status"] == "ok"
    assert res["tpot"]["predicted"] == pytest.approx(published_tpot_ms, rel=tolerance)


def test_nvfp4_runs_name_nvidias_checkpoint_and_other_fp4_rows_are_skipped():
    nvfp4 = next(r for r in ROWS.values() if r["precision"] == "fp4" and r["model_path"] == "MiniMaxAI/MiniMax-M2.5")
    assert nvfp4["moe_quant_mode"] == "nvfp4"
    assert SIL.row_argv(nvfp4)[2] == "nvidia/MiniMax-M2.5-NVFP4"
    # an fp4 row whose quant modes are not NVFP4 names no format this package can read: skipped, not guessed
    assert SIL.row_argv(dict(nvfp4, moe_quant_mode="", gemm_quant_mode="")) is None


def test_derive_keeps_vllm_aggregated_runs_once(tmp_path, monkeypatch):
    cols = ["id", "backend", "mode", "backend_version", "attention_dp_size", "batch_size", "silicon_tpot_ms",
            "silicon_ttft_ms", "model_path", "system", "isl", "osl", "tp_size"]
    base = dict(backend="vllm", mode="agg", backend_version="0.18.0", attention_dp_size="1", batch_size="8",
                silicon_tpot_ms="10.0", silicon_ttft_ms="90.0", model_path="m", system="h100_sxm", isl="1024",
                osl="128", tp_size="1")
    rows = [dict(base, id="a"), dict(base, id="b"),                      # the same run listed twice
            dict(base, id="c", mode="disagg"), dict(base, id="d", backend="sglang"),
            dict(base, id="e", attention_dp_size="4"), dict(base, id="f", backend_version=""),
            dict(base, id="g", batch_size="16")]
    src = tmp_path / "silicon_sample.csv"
    with open(src, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    out = tmp_path / "out.csv"
    monkeypatch.setattr(DERIVE, "OUT", out)
    monkeypatch.setattr(DERIVE, "ROOT", tmp_path)
    assert DERIVE.main([str(src)]) == 0
    kept = [r["id"] for r in csv.DictReader(open(out))]
    assert kept == ["a", "g"]
