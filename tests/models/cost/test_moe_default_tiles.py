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
