"""Measured fused-MoE efficiency (models/cost/kernels.py, data derived from NVIDIA aiconfigurator)."""

from __future__ import annotations

import numpy as np
import pytest

from sched_reader.models.cost.kernels import efficiency_at, moe_efficiency_curve, moe_format


def test_format_keys():
    assert moe_format(None, 2.0) == "bf16"
    assert moe_format("fp8", 1.0) == "fp8"
    assert moe_format("fp8", 1.000244140625) == "fp8_block"   # DeepSeek: one scale per 128 x 128 block
    assert moe_format("mxfp4", 0.53125) == "mxfp4"
    assert moe_format("awq", 0.5) == "int4"


def test_nearest_shape_is_the_exact_measured_one():
    # Qwen3-30B-A3B on one GPU: hidden 2048, expert intermediate 768, 128 experts, top-8 is measured
    curve = moe_efficiency_curve("H100 SXM5 80GB", "bf16", 2048, 768, 128, 8)
    if curve is None:
        pytest.skip("no kernel table shipped")
    assert "h=2048 i=768 E=128 k=8" in curve[2]


def test_efficiency_is_a_fraction_and_prefill_sized_steps_fall_off():
    curve = moe_efficiency_curve("H100 SXM5 80GB", "bf16", 7168, 2048, 256, 8)
    if curve is None:
        pytest.skip("no kernel table shipped")
    e = efficiency_at(curve, np.array([1, 64, 256, 16384]))
    assert ((e > 0) & (e <= 1)).all()
    # measured: large-token steps reach a smaller fraction of the dense peak than mid-size batches
    assert e[3] < max(e[1], e[2])


def test_unmeasured_gpu_has_no_curve():
    assert moe_efficiency_curve("Instinct MI300X 192GB", "bf16", 2048, 768, 128, 8) is None
