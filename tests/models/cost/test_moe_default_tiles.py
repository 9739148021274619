"""Which runs use vLLM's old default fused-MoE tiles (models/cost/moe_default_tiles.py), named in the breakdown."""

from sched_reader.models.cost.moe_default_tiles import old_default_tiles_note, untuned_old_default


def test_gpt_oss_bf16_at_tp8_runs_old_default_tiles_on_0_14_1():
    # gpt-oss-120b BF16 at TP 8: 128 experts, w2's last dimension 2880 / 8 = 360; no release ships an E=128,N=360
    # tile table for any device (0.6.0-0.19.1 wheels), and 0.14.1's get_default_config is the two-branch one
    name = untuned_old_default("0.14.1", "H200 SXM 141GB", "bf16", 128, 360)
    assert name == "E=128,N=360,device_name=NVIDIA_H200.json"
    note = old_default_tiles_note("0.14.1", "H200 SXM 141GB", "bf16", 128, 360)
    assert name in note and "not priced" in note


def test_no_note_where_a_tuned_table_ships_or_the_new_defaults_run():
    # DeepSeek-V3/R1 at TP 8 on H200: E=256,N=256 block-FP8 tiles ship from 0.7.2 (so in 0.8.4)
    assert untuned_old_default("0.8.4", "H200 SXM 141GB", "fp8_block", 256, 256) == ""
    # vLLM 0.17.0 runs PR #34846's batch-aware defaults: nothing to name
    assert untuned_old_default("0.17.0", "H200 SXM 141GB", "bf16", 128, 360) == ""
    # MXFP4 experts run OpenAI's triton_kernels / Marlin / FlashInfer, which read no Triton tile table
    assert untuned_old_default("0.14.1", "H200 SXM 141GB", "mxfp4", 128, 360) == ""
    assert untuned_old_default(None, "H200 SXM 141GB", "bf16", 128, 360) == ""


# ---------------------------------------------------------------- the old default tiles' streaming cap (M <= E)
import pytest  # noqa: E402

from sched_reader.analyzers.pipeline import build_specs  # noqa: E402
from sched_reader.models.cost.iteration import IterationCostModel  # noqa: E402
from sched_reader.models.cost.moe_default_tiles import (  # noqa: E402
    OLD_DEFAULT_SMALL_M_BYTES_PER_SM_S, old_default_stream_cap,
)
from sched_reader.models.gpu_catalog import resolve_gpu  # noqa: E402


def test_cap_is_pr_39902_h100_timing_per_sm():
    # vLLM PR #39902 (H100 SXM5, 132 SMs), gpt-oss-120b experts at TP 1: E = 128, hidden = intermediate = 2880,
    # top-4, BF16, M = 8 tokens, old default tiles: 562.57 us. Worked by hand: 8 tokens x 4 experts each hit on
    # average 128 * (1 - (124/128)**8) = 28.68 experts; each holds w13 (5760 x 2880) and w2 (2880 x 2880) BF16 =
    # 49,766,400 B; 28.68 * 49.77 MB = 1.4275 GB in 562.57 us = 2.5375 TB/s; / 132 SMs = 19.22 GB/s per SM.
    experts_hit = 28.68
    bytes_read = experts_hit * 49_766_400
    assert bytes_read / 562.57e-6 / 132 == pytest.approx(OLD_DEFAULT_SMALL_M_BYTES_PER_SM_S, rel=0.01)


def test_cap_applies_only_to_old_small_tiles_on_nvidia():
    h200 = resolve_gpu("H200 SXM 141GB").gpu
    assert old_default_stream_cap("0.14.1", h200, "bf16", 128, 360) == pytest.approx(132 * 19.2e9)
    assert old_default_stream_cap("0.17.0", h200, "bf16", 128, 360) is None       # PR #34846's defaults
    assert old_default_stream_cap("0.14.1", h200, "fp8_block", 128, 360) is None  # 64 x 128 x 128 tiles
    assert old_default_stream_cap("0.8.4", h200, "fp8_block", 256, 256) is None   # a tuned table ships
    assert old_default_stream_cap("0.14.1", resolve_gpu("MI300X").gpu, "bf16", 128, 360) is None


# Scicom's gpt-oss-120b BF16 runs on vLLM 0.14.1, 8 GPUs at TP 8, 100 requests decoding (llm-benchmaxxing at
# 36be1ae, benchmarks/runpod_*/gpt-oss-120b/*_TP8_DP1_CTX1024_C100_P100_O128.json): median ITL 14.45 ms (H100),
# 13.67 ms (H200), 12.50 ms (B200). The bandwidth-bound tuned tables would give the H200 ~25% and the B200 ~33%
# less than the H100; the published steps differ by 5% and 13%, as SMs (132, 132, 148) and not HBM do.
@pytest.mark.parametrize("gpu,median_itl_ms", [("H100 SXM5 80GB", 14.45), ("H200 SXM 141GB", 13.67),
                                               ("B200 180GB", 12.50)])
def test_gpt_oss_bf16_decode_step_follows_sms_not_bandwidth(gpu, median_itl_ms):
    [spec] = build_specs([], ["vllm", "serve", "Scicom-intl/gpt-oss-120b-Malaysian-Reasoning-SFT-v0.1",
                              "--tensor-parallel-size", "8"], gpu=gpu, vllm="0.14.1")
    m = IterationCostModel(spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization)
    step = m.breakdown(100, 100 * 1088, 0, 0.0, 0)
    assert step.step_time_s * 1e3 == pytest.approx(median_itl_ms, rel=0.10)
    assert "OLD_DEFAULT_SMALL_M_BYTES_PER_SM_S" in step.terms["moe_experts"].source
