"""Facts about vLLM's tuned Triton fused-MoE config files, read from the release wheels
(data/fused_moe_tuned_configs.json, built by tools/build_fused_moe_configs.py), and the penalty data file."""

from __future__ import annotations

import yaml
from conftest import load_script

from sched_reader.models import data_files
from sched_reader.models import fused_moe_configs as fm

SUMMARY = load_script("tools/summarize_fused_moe_penalty.py")

DSV3_TP8_H200 = fm.config_file_name(256, 256, "NVIDIA_H200", "fp8_w8a8", [128, 128])


def test_every_release_060_to_0191_read():
    # PyPI's vllm releases 0.6.0 .. 0.19.1 (pip index versions vllm): 47, post releases included.
    rels = fm.table()["releases"]
    assert rels[0] == "0.6.0" and rels[-1] == "0.19.1" and len(rels) == 47
    assert {"0.6.1.post2", "0.9.0.1", "0.10.1.1", "0.8.5.post1"} <= set(rels)


def test_deepseek_v3_tp8_h200_block_fp8_file():
    # DeepSeek-V3/R1 at TP8: 256 experts, moe_intermediate 2048 / 8 = 256, block FP8 [128, 128].
    assert DSV3_TP8_H200 == "E=256,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json"
    assert fm.ships("0.8.4", DSV3_TP8_H200) is True
    assert fm.ships("0.19.1", DSV3_TP8_H200) is True
    assert fm.ships("0.7.0", DSV3_TP8_H200) is False          # 0.7.0 names carry no block_shape at all
    # 0.7.1 wrote "[128, 128]" (with a space) in both its code and its file name.
    spaced = fm.config_file_name(256, 256, "NVIDIA_H200", "fp8_w8a8", [128, 128], release="0.7.1")
    assert spaced.endswith("block_shape=[128, 128].json") and fm.ships("0.7.1", spaced) is True
    assert fm.config_file_name(256, 256, "NVIDIA_H200", "fp8_w8a8", [128, 128], release="0.6.6") == \
        "E=256,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8.json"


def test_gpt_oss_120b_tp8_bf16_never_tuned():
    # gpt-oss-120b BF16 at TP8: 128 experts, intermediate 2880 / 8 = 360 -> default config in every release.
    for dev in ("NVIDIA_H200", "NVIDIA_H100_80GB_HBM3", "NVIDIA_B200"):
        name = fm.config_file_name(128, 360, dev)
        assert fm.ships("0.14.1", name) is False
        assert name not in fm.table()["files"]


def test_qwen3_b200_file_from_pr31448():
    # vLLM PR #31448 (merged 2025-12-28) added E=128,N=768 bf16 for B200: absent in 0.13.0, shipped from 0.14.0.
    name = fm.config_file_name(128, 768, "NVIDIA_B200")
    assert fm.ships("0.13.0", name) is False and fm.ships("0.14.0", name) is True


def test_default_config_kind_matches_each_wheel():
    facts = fm.table()["source_facts"]
    assert facts["0.16.0"]["default_config"] == "two_branch_M_le_E"
    assert facts["0.17.0"]["default_config"] == "batch_aware_pr34846"
    for rel, f in facts.items():
        assert fm.default_config_kind(rel) == f["default_config"], rel


def test_h200_family_folds_from_0111():
    assert fm.vllm_device_name("H200 NVL 141GB", "0.11.0") == "NVIDIA_H200_NVL"
    assert fm.vllm_device_name("H200 NVL 141GB", "0.11.1") == "NVIDIA_H200"
    assert fm.vllm_device_name("H100 SXM5 80GB") == "NVIDIA_H100_80GB_HBM3"
    assert fm.vllm_device_name("A100 SXM4 80GB") == "NVIDIA_A100-SXM4-80GB"


def test_device_names_cover_catalog_names_only():
    names = {g["name"] for g in data_files.load("gpus")["gpus"]}
    mapped = fm.table()["catalog_device_names"]
    assert set(mapped) <= names
    for gpu in ("H100 SXM5 80GB", "H100 PCIe 80GB", "H200 SXM 141GB", "A100 SXM4 80GB", "B200 180GB",
                "L40S 48GB", "GeForce RTX 4090 24GB"):
        assert mapped[gpu]["confirmed_by_shipped_file"], gpu


def test_penalty_file_and_summary():
    with open(SUMMARY.DATA) as f:
        doc = yaml.safe_load(f)
    for s in doc["kernel_series"]:
        assert s["url"].startswith("https://github.com/") and s["default"] in ("old", "new", "unknown"), s["id"]
    table = SUMMARY.summarize(doc)
    # vLLM #44152, H20, Mixtral bf16, M=32: 0.447 ms old default vs 0.279 ms tuned -> 1.602.
    assert table["old/tuned bf16"]["24-64"]["median"] == 1.602
    # Block FP8 at M > 64: old default == new default, so #45142's M=96 point (493.35 / 331.07) counts as old.
    assert table["old/tuned fp8-block"]["96-256"]["max"] >= 1.49


def test_corpus_rows_lookup():
    # gpt-oss-120b: 128 experts, intermediate 2880; TP8 and TP4 x DP2 both split it 8 ways -> N = 360.
    rows_tool = load_script("benchmarks/fused_moe_default_rows.py")
    rows = {r["id"]: r for r in rows_tool.ta.load_rows()}
    for rid in ("scicom-v0141-gpt-oss-120b-8xh200-tp8dp1-random1024-128-n100-c100",
                "scicom-v0141-gpt-oss-120b-8xh200-tp4dp2-random1024-128-n100-c100"):
        f = rows_tool.row_facts(rows[rid])
        assert f["file"] == "E=128,N=360,device_name=NVIDIA_H200.json" and f["shipped"] is False
        assert f["path"] == "triton" and f["default"] == "two_branch_M_le_E"
    # DeepSeek-R1 FP8 at TP8 on H200 with vLLM 0.8.4: 256 experts, 2048 / 8 = 256, tuned file shipped.
    f = rows_tool.row_facts(rows["michaelvll-v084-deepseek-r1-8xh200-tp8-random1000-2000-n50-rate10"])
    assert f["file"] == DSV3_TP8_H200 and f["shipped"] is True
