"""compat.defaults: release facts and the scheduler defaults vLLM picks.

Expected numbers come from the era tables in shared/vllm/facts.yaml
``scheduler_defaults`` read by hand, and from real start-up logs copied into
tests/data/compat_default_logs.yaml. GPU memory totals are as CUDA reports them
(H100 80GB: 79.19 GiB in the llm-d 0.19.0 logs; B200 ~178 GiB; L4 ~22 GiB).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sched_reader.compat.defaults import SCHEDULER_FIELDS, release_facts, scheduler_defaults
from sched_reader.errors import InputError

DATA = Path(__file__).parents[1] / "data"

H100 = ("NVIDIA H100 80GB HBM3", 79.19)
A100_80 = ("NVIDIA A100-SXM4-80GB", 79.15)
L4 = ("NVIDIA L4", 22.03)
B200 = ("NVIDIA B200", 178.35)
H200 = ("NVIDIA H200", 139.81)


def sd(version, gpu, mml=8192, explicit=None, **kw):
    name, gib = gpu
    return scheduler_defaults(version, name, gib, max_model_len=mml, explicit=explicit or {}, **kw)


def val(d, key):
    return d[key][0]


# ---- tiers of the 0.11.1+ era ------------------------------------------------------

def test_019_h100_serve():
    d = sd("0.19.0", H100)
    assert val(d, "max_num_batched_tokens") == 8192
    assert val(d, "max_num_seqs") == 1024
    assert d["max_num_batched_tokens"][1] == (
        "vLLM 0.19.0 default for `vllm serve` on GPUs with >= 70 GiB (not A100): 8192")


def test_019_a100_80gb_is_excluded_from_big_tier():
    d = sd("0.19.0", A100_80)
    assert val(d, "max_num_batched_tokens") == 2048
    assert val(d, "max_num_seqs") == 256
    assert "A100" in d["max_num_seqs"][1]


def test_019_l4_small_tier():
    d = sd("0.19.0", L4)
    assert (val(d, "max_num_batched_tokens"), val(d, "max_num_seqs")) == (2048, 256)


def test_019_h100_offline_llm_class():
    d = sd("0.19.0", H100, usage_context="LLM_CLASS")
    assert (val(d, "max_num_batched_tokens"), val(d, "max_num_seqs")) == (16384, 1024)
    assert "offline LLM class" in d["max_num_seqs"][1]


def test_030_b200_and_h200():
    d = sd("0.30.0", B200)
    assert (val(d, "max_num_batched_tokens"), val(d, "max_num_seqs")) == (16384, 1024)
    assert ">= 160 GiB" in d["max_num_batched_tokens"][1]
    # H200 (139.8 GiB) is below the 160 GiB tier
    assert val(sd("0.30.0", H200), "max_num_batched_tokens") == 8192
    # before 0.28.0 there is no 160 GiB tier: B200 gets the >= 70 GiB serve value
    assert val(sd("0.27.1", B200), "max_num_batched_tokens") == 8192


def test_033_gb10_excluded():
    d = sd("0.33.0", ("NVIDIA GB10", 119.7))
    assert (val(d, "max_num_batched_tokens"), val(d, "max_num_seqs")) == (2048, 256)


def test_unknown_usage_context_falls_back_from_0111():
    d = sd("0.19.0", H100, usage_context="ENGINE_CONTEXT")
    assert (val(d, "max_num_batched_tokens"), val(d, "max_num_seqs")) == (2048, 128)
    with pytest.raises(InputError):
        sd("0.9.0", H100, usage_context="ENGINE_CONTEXT")


# ---- older eras ------------------------------------------------------------

def test_085_memory_tier_without_a100_exclusion():
    # 0.8.5: ">= 70 GiB" only; A100 80GB still qualifies
    d = sd("0.8.5", A100_80)
    assert (val(d, "max_num_batched_tokens"), val(d, "max_num_seqs")) == (8192, 1024)
    assert (val(sd("0.8.5", L4), "max_num_batched_tokens"), val(sd("0.8.5", L4), "max_num_seqs")) \
        == (2048, 256)


def test_084_and_083_name_based_tiers():
    assert (val(sd("0.8.4", H100), "max_num_batched_tokens"), val(sd("0.8.4", H100), "max_num_seqs")) \
        == (8192, 1024)
    assert val(sd("0.8.4", A100_80), "max_num_seqs") == 256
    # 0.8.0..0.8.3: 1024 sequences on every device
    assert (val(sd("0.8.3", L4), "max_num_batched_tokens"), val(sd("0.8.3", L4), "max_num_seqs")) \
        == (2048, 1024)


def test_07_v0_default_and_v1_opt_in():
    d = sd("0.7.3", H100, mml=4096)
    assert release_facts("0.7.3").engine == "V0"
    assert val(d, "max_num_seqs") == 256
    assert val(d, "enable_chunked_prefill") is False
    assert val(d, "max_num_batched_tokens") == 4096  # max(max_model_len, 2048)
    assert val(d, "enable_prefix_caching") is False
    v1 = sd("0.7.3", H100, engine="V1")
    assert (val(v1, "max_num_batched_tokens"), val(v1, "max_num_seqs")) == (8192, 1024)


def test_v0_chunked_prefill_rules():
    assert val(sd("0.6.0", L4, mml=1024), "max_num_batched_tokens") == 2048
    long = sd("0.6.0", L4, mml=65536)
    assert val(long, "enable_chunked_prefill") is True
    assert val(long, "max_num_batched_tokens") == 512  # 0.6.0..0.6.4 chunked default
    assert val(sd("0.6.5", L4, mml=65536), "max_num_batched_tokens") == 2048
    lora = sd("0.6.5", L4, mml=65536, explicit={"enable_lora": True})
    assert val(lora, "enable_chunked_prefill") is False
    assert val(lora, "max_num_batched_tokens") == 65536
    forced = sd("0.6.5", L4, mml=4096, explicit={"enable_chunked_prefill": True})
    assert val(forced, "max_num_batched_tokens") == 2048


def test_v0_fallback_in_v1_era_is_marked_assumed():
    d = sd("0.9.0", H100, mml=4096, engine="V0")
    assert val(d, "max_num_batched_tokens") == 4096
    assert "assumed" in d["max_num_batched_tokens"][1]


def test_engine_choice_is_validated():
    with pytest.raises(InputError, match="no V0"):
        sd("0.12.0", H100, engine="V0")
    with pytest.raises(InputError, match="no V1"):
        sd("0.6.3", H100, engine="V1")
    with pytest.raises(InputError):
        sd("0.12.0", H100, engine="V9")


# ---- post-processing clamps (0.11.1+) -------------------------------------------------

def test_clamp_batched_tokens_by_seqs_times_len():
    d = sd("0.19.0", L4, mml=512, explicit={"max_num_seqs": 2})
    assert "max_num_seqs" not in d
    assert val(d, "max_num_batched_tokens") == 1024  # min(2 * 512, 2048)
    assert "capped" in d["max_num_batched_tokens"][1]


def test_clamp_seqs_by_explicit_batched_tokens():
    d = sd("0.19.0", H100, explicit={"max_num_batched_tokens": 128})
    assert "max_num_batched_tokens" not in d
    assert val(d, "max_num_seqs") == 128


def test_chunked_off_raises_batched_tokens_to_max_model_len():
    d = sd("0.19.0", H100, mml=32768, explicit={"enable_chunked_prefill": False})
    assert val(d, "max_num_batched_tokens") == 32768
    assert "enable_chunked_prefill" not in d


def test_no_clamps_before_0111():
    d = sd("0.10.1", H100, explicit={"max_num_batched_tokens": 128})
    assert val(d, "max_num_seqs") == 1024


def test_performance_mode_throughput_doubles_from_0170():
    d = sd("0.19.0", H100, explicit={"performance_mode": "throughput"})
    assert (val(d, "max_num_batched_tokens"), val(d, "max_num_seqs")) == (16384, 2048)


# ---- other fields ---------------------------------------------------------

def test_gpu_memory_utilization_default():
    assert val(sd("0.19.1", H100), "gpu_memory_utilization") == 0.9
    assert val(sd("0.20.0", H100), "gpu_memory_utilization") == 0.92
    assert val(sd("0.33.0", H100), "gpu_memory_utilization") == 0.92


def test_async_scheduling_default():
    assert val(sd("0.9.2", H100), "async_scheduling") is False
    assert val(sd("0.10.0", H100), "async_scheduling") is False
    assert val(sd("0.14.0", H100), "async_scheduling") is True
    pp = sd("0.14.0", H100, explicit={"pipeline_parallel_size": 2})
    assert val(pp, "async_scheduling") is False and "pipeline" in pp["async_scheduling"][1]


def test_flag_dependent_fields():
    assert val(sd("0.17.1", H100), "swap_space") == 4
    assert val(sd("0.18.0", H100), "swap_space") is None
    assert val(sd("0.8.5", H100), "long_prefill_token_threshold") == 0
    assert val(sd("0.7.2", H100), "long_prefill_token_threshold") is None
    assert val(sd("0.26.0", H100), "max_num_partial_prefills") == 1
    assert val(sd("0.27.0", H100), "max_num_partial_prefills") is None
    assert val(sd("0.6.0", H100), "block_size") == 16
    assert val(sd("0.18.0", H100), "block_size") == 16


def test_all_fields_and_explicit_ones_left_out():
    full = sd("0.19.0", H100)
    assert set(full) == set(SCHEDULER_FIELDS)
    part = sd("0.19.0", H100, explicit={"block_size": 32, "gpu_memory_utilization": 0.8})
    assert "block_size" not in part and "gpu_memory_utilization" not in part
    for value, reason in full.values():
        assert reason.startswith("vLLM 0.19.0")


def test_explicit_none_means_unset_and_bad_explicit_raises():
    d = sd("0.19.0", H100, explicit={"max_num_seqs": None})
    assert val(d, "max_num_seqs") == 1024
    with pytest.raises(InputError, match="max_num_seqs"):
        sd("0.19.0", H100, explicit={"max_num_seqs": "many"})


@pytest.mark.parametrize("kw", [{"gpu": ("H100", 0)}, {"gpu": ("H100", float("nan"))},
                                {"mml": 0}, {"mml": "8k"}])
def test_bad_inputs_raise_input_error(kw):
    with pytest.raises(InputError):
        sd("0.19.0", kw.get("gpu", H100), mml=kw.get("mml", 8192))


# ---- release facts ---------------------------------------------------------

def test_release_facts_engine_timeline():
    assert release_facts("0.6.3").v1_available is False
    assert release_facts("0.6.4").v1_available is True  # V1 opt-in from 0.6.4
    assert release_facts("0.8.0").engine == "V1" and release_facts("0.8.0").v0_fallback
    assert release_facts("0.10.2").v0_available is True
    assert release_facts("0.11.0").v0_available is False


def test_release_facts_spec_decode():
    assert release_facts("0.8.5").spec_methods == (
        "ngram", "eagle", "medusa", "mlp_speculator", "draft_model")
    assert release_facts("0.8.2").spec_method_free_form
    assert "--speculative-model" in release_facts("0.8.2").spec_flags
    assert release_facts("0.8.3").spec_flags == ("--speculative-config",)
    assert "eagle3" in release_facts("0.9.1").spec_methods
    assert "eagle3" not in release_facts("0.9.0").spec_methods


def test_release_facts_sources_and_rules():
    f = release_facts("0.30.0")
    assert f.source_url == "https://pypi.org/project/vllm/0.30.0/"
    assert f.num_cli_flags > 200
    assert any("--no-" in r for r in release_facts("0.28.0").config_file_rules)
    assert not any("--no-" in r for r in release_facts("0.27.1").config_file_rules)
    assert release_facts("0.10.1.1").release == "0.10.1"


# ---- cross-check with real start-up logs ------------------------------------------

LOGS = yaml.safe_load((DATA / "compat_default_logs.yaml").read_text())


@pytest.mark.parametrize("row", LOGS, ids=[r["id"] for r in LOGS])
def test_matches_real_startup_logs(row):
    explicit = {k: v for k, v in row["non_default_args"].items() if k != "max_model_len"}
    d = scheduler_defaults(str(row["vllm_version"]), row["gpu"], row["gpu_mem_total_gib"],
                           max_model_len=row["max_model_len"], explicit=explicit)
    assert val(d, "max_num_batched_tokens") == row["max_num_batched_tokens"]
    assert val(d, "enable_chunked_prefill") is row["enable_chunked_prefill"]


def test_release_facts_chunked_and_prefix_caching():
    assert release_facts("0.7.3").chunked_prefill_default is False  # V0 default engine
    assert "32K" in release_facts("0.7.3").chunked_prefill_note
    assert release_facts("0.8.0").chunked_prefill_default is True
    assert release_facts("0.8.0").prefix_caching_default is True
    assert release_facts("0.6.6").prefix_caching_default is False
    assert release_facts("0.20.0").gpu_memory_utilization_default == 0.92
