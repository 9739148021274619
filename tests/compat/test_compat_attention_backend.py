"""default_block_size: KV block size vLLM uses on CUDA per release x GPU for MLA models.

Each expectation below was read from the release's PyPI wheel sources (the quoted line is
from vllm/platforms/cuda.py unless another file is named). Facts and commit-pinned URLs:
sched_reader/compat/data/attention_backends.json.
"""

from __future__ import annotations

import json

import pytest

from sched_reader.compat.defaults import default_block_size
from sched_reader.compat.releases import DATA_DIR, known_releases, version_key

AMPERE, HOPPER, BLACKWELL, B300 = "8.0", "9.0", "10.0", "10.3"


def bs(version, cc, explicit=None, **kw):
    return default_block_size(version, cc, is_mla=True, explicit=explicit, **kw)[0]


def test_real_log_0_19_0_h100_deepseek_v2_lite_is_16():
    # tests/data/kv_logs.yaml first row: vLLM 0.19.0, DeepSeek-V2-Lite-Chat, H100 80GB,
    # FLASH_ATTN_MLA, 1,505,552 tokens / 94,097 blocks = 16.
    assert 1_505_552 // 94_097 == 16
    value, reason = default_block_size("0.19.0", HOPPER, is_mla=True, explicit=None)
    assert value == 16
    assert "FLASH_ATTN_MLA" in reason
    assert "2a69949bdadf0e8942b7a1619b229cb475beef20" in reason


@pytest.mark.parametrize("version", ["0.6.0", "0.6.4", "0.6.5", "0.7.0"])
@pytest.mark.parametrize("cc", [AMPERE, HOPPER, BLACKWELL])
def test_before_mla_backends_16(version, cc):
    # 0.6.5..0.7.0: "if cache_config and cache_config.block_size is None:
    #     cache_config.block_size = 16" and no use_mla branch at all.
    assert bs(version, cc) == 16


@pytest.mark.parametrize("cc", [AMPERE, HOPPER, BLACKWELL])
def test_0_7_triton_mla_only_16(cc):
    # 0.7.1..0.7.3 get_attn_backend_cls: "if use_mla: logger.info("Using Triton MLA backend.")"
    assert bs("0.7.2", cc) == 16


@pytest.mark.parametrize("version", ["0.8.0", "0.8.5", "0.9.2", "0.10.0"])
def test_0_8_to_0_10_0_flashmla_on_hopper_only(version):
    # "if use_flashmla and is_flashmla_supported()[0] and cache_config.block_size != 64:
    #     cache_config.block_size = 64"; vllm/attention/ops/flashmla.py:
    # "if current_platform.get_device_capability()[0] != 9: return False, ..."
    assert bs(version, HOPPER) == 64
    assert bs(version, AMPERE) == 16
    assert bs(version, BLACKWELL) == 16          # Triton MLA: CUTLASS only via env var
    assert bs(version, HOPPER, explicit=16) == 64  # forced even over --block-size
    assert bs(version, AMPERE, explicit=32) == 32


@pytest.mark.parametrize("version", ["0.10.1", "0.10.2", "0.11.0"])
def test_0_10_1_cutlass_on_exactly_sm100(version):
    # "if cls.is_device_capability(100):  # Blackwell => Force CutlassMLA."
    # "if use_cutlass_mla and cache_config.block_size != 128: cache_config.block_size = 128"
    assert bs(version, BLACKWELL) == 128
    assert bs(version, B300) == 16     # is_device_capability(100) is exact: 10.3 -> Triton MLA
    assert bs(version, HOPPER) == 64
    assert bs(version, AMPERE) == 16
    assert bs(version, BLACKWELL, explicit=64) == 128


def test_0_11_0_sparse_forced_64():
    # "# TODO(Chen): remove this hacky code
    #  if use_sparse and cache_config.block_size != 64: cache_config.block_size = 64"
    for cc in (HOPPER, BLACKWELL):
        assert bs("0.11.0", cc, is_sparse=True) == 64
    # no sparse branch before 0.11.0: sparse flag falls back to the dense rule
    assert bs("0.10.2", HOPPER, is_sparse=True) == 64


@pytest.mark.parametrize("version", ["0.11.1", "0.12.0"])
def test_0_11_1_forced_sizes_with_priority_selection(version):
    # "if use_flashmla and is_flashmla_dense_supported()[0] and cache_config.block_size % 64 != 0:"
    value, reason = default_block_size(version, HOPPER, is_mla=True, explicit=None)
    assert value == 64 and "FLASH_ATTN_MLA" in reason  # priority list puts FLASH_ATTN_MLA first
    assert bs(version, HOPPER, explicit=128) == 128    # multiple of 64 kept
    assert bs(version, HOPPER, explicit=16) == 64
    # "if use_cutlass_mla and cache_config.block_size % 128 != 0:" (still exact cc 10.0)
    assert bs(version, BLACKWELL) == 128
    assert bs(version, B300) == 16
    assert bs(version, AMPERE) == 16


@pytest.mark.parametrize("version", ["0.13.0", "0.14.1"])
def test_0_13_cutlass_for_blackwell_family(version):
    # "if cls.is_device_capability_family(100) and not use_sparse:
    #     # Blackwell => Force CutlassMLA (unless sparse, i.e. DSv3.2)."
    assert bs(version, BLACKWELL) == 128
    assert bs(version, B300) == 128
    assert bs(version, BLACKWELL, is_sparse=True) == 64
    assert bs(version, HOPPER) == 64


@pytest.mark.parametrize("version", ["0.15.0", "0.16.0", "0.17.1"])
def test_0_15_flashinfer_mla_on_blackwell_forced_64(version):
    # "if cls.is_device_capability_family(100) and not use_sparse and qk_nope_head_dim == 128:"
    # "if use_flashinfer_mla and cache_config.block_size != 32 and cache_config.block_size % 64 != 0:
    #     cache_config.block_size = 64"
    value, reason = default_block_size(version, BLACKWELL, is_mla=True, explicit=None)
    assert value == 64 and "FLASHINFER_MLA" in reason
    assert bs(version, BLACKWELL, explicit=32) == 32
    assert bs(version, BLACKWELL, explicit=16) == 64
    # "elif cls.is_device_capability_family(100) and not use_sparse:
    #     # Fall back to CUTLASS_MLA as 2nd priority on Blackwell"
    assert bs(version, BLACKWELL, qk_nope_head_dim=64) == 128
    # "elif is_flashmla_dense_supported()[0]:  # Non-Blackwell with FlashMLA support"
    assert bs(version, HOPPER) == 64
    assert bs(version, AMPERE) == 16
    assert bs(version, HOPPER, is_sparse=True) == 64


@pytest.mark.parametrize("version", ["0.18.0", "0.18.1", "0.19.0", "0.19.1", "0.24.0", "0.28.0",
                                     "0.32.0", "0.33.0"])
def test_0_18_preferred_block_size(version):
    # vllm/v1/attention/backend.py get_preferred_block_size:
    #   "if cls.supports_block_size(default_block_size): return default_block_size
    #    return min(s.base if isinstance(s, MultipleOf) else s for s in supported_sizes)"
    # FlashAttnMLABackend: "return [MultipleOf(16)]", "return capability.major == 9"
    assert bs(version, HOPPER) == 16
    # FlashInferMLABackend (first on cc major 10): "return [32, 64]" -> min = 32
    value, reason = default_block_size(version, BLACKWELL, is_mla=True, explicit=None)
    assert value == 32 and "FLASHINFER_MLA" in reason
    # qk_nope_head_dim outside FlashInfer's list -> CutlassMLABackend "return [128]"
    assert bs(version, BLACKWELL, qk_nope_head_dim=96) == 128
    # Ampere: only TritonMLABackend is valid: "[MultipleOf(16)]"
    assert bs(version, AMPERE) == 16
    # FLASH_ATTN_MLA supported_kv_cache_dtypes = ["auto", "float16", "bfloat16"] -> FLASHMLA [64]
    assert bs(version, HOPPER, kv_cache_dtype="fp8") == 64
    # "if cache_config.user_specified_block_size: # User specified --block-size; keep it."
    assert bs(version, HOPPER, explicit=32) == 32
    assert bs(version, BLACKWELL, explicit=64) == 64


def test_flashinfer_mla_qk_nope_list_changed_in_0_19():
    # 0.18.0: "if qk_nope_head_dim not in [64, 128]:"; 0.19.0: "not in [64, 128, 192]:"
    assert bs("0.18.0", BLACKWELL, qk_nope_head_dim=192) == 128
    assert bs("0.19.0", BLACKWELL, qk_nope_head_dim=192) == 32


def test_sparse_mla_preferred_sizes():
    # 0.19.0 cc major 10: fp8 KV -> [FLASHINFER_MLA_SPARSE, FLASHMLA_SPARSE];
    # bf16 "if num_heads is not None and num_heads <= 16:" -> FlashInfer sparse first.
    assert bs("0.19.0", BLACKWELL, is_sparse=True, num_heads=128) == 64
    assert bs("0.19.0", BLACKWELL, is_sparse=True, num_heads=16) == 32
    assert bs("0.19.0", BLACKWELL, is_sparse=True, num_heads=128, kv_cache_dtype="fp8") == 32
    assert bs("0.19.0", HOPPER, is_sparse=True) == 64   # FlashMLASparseBackend "return [64]"


def test_unknown_gpu_and_non_mla():
    value, reason = default_block_size("0.19.0", None, is_mla=True, explicit=None)
    assert value == 16 and "assumed" in reason
    assert default_block_size("0.8.5", None, is_mla=True, explicit=None)[0] == 16
    assert default_block_size("0.7.2", None, is_mla=True, explicit=None)[0] == 16
    for v in ("0.6.0", "0.10.2", "0.19.0", "0.33.0"):
        for cc in (AMPERE, HOPPER, BLACKWELL):
            assert default_block_size(v, cc, is_mla=False, explicit=None)[0] == 16
    assert default_block_size("0.19.0", HOPPER, is_mla=False, explicit=32)[0] == 32


def test_data_file_covers_every_release_once_with_pinned_sources():
    with open(DATA_DIR.parent / "attention_backends.json", encoding="utf-8") as fh:
        data = json.load(fh)
    for rel in known_releases():
        key = version_key(rel)
        hits = [e["id"] for e in data["eras"]
                if version_key(e["first"]) <= key <= version_key(e["last"])]
        assert len(hits) == 1, (rel, hits)
    for era in data["eras"]:
        assert era["quotes"]
        src = era["source"]
        assert ("/blob/" in src and len(src.split("/blob/")[1].split("/")[0]) == 40) \
            or src.startswith("https://pypi.org/project/vllm/")
