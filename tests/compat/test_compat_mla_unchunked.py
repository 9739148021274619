"""vLLM 0.7.1-0.7.3 switch chunked prefill and prefix caching off for MLA models, over any flag; later V0
engines (0.7.4 nightlies to 0.10.x) leave it off for MLA models by default, the flag turning it on.

Pinned to vLLM's own log lines: PR #12638's run of DeepSeek-Coder-V2-Lite on v0.7.1.dev100 (CUDA) prints
"Chunked prefill is enabled with max_num_batched_tokens=2048." and then "MLA is enabled; forcing chunked
prefill and prefix caching to be disabled."; ROCm/vllm#457's DeepSeek-R1 on a v0.7.4.dev4 ROCm build prints
"MLA is enabled on a non-cuda platform; forcing chunked prefill and prefix caching to be disabled." The
token budget then becomes max(max_model_len, 2048) (vLLM's DEFAULT_MAX_NUM_BATCHED_TOKENS).
"""

import pytest

from sched_reader.analyzers.pipeline import build_specs

R1 = ["vllm", "serve", "deepseek-ai/DeepSeek-R1", "-tp", "8"]


def eff(argv, gpu, vllm):
    [spec] = build_specs([], argv, gpu=gpu, vllm=vllm)
    return spec.effective


def test_v071_cuda_forces_chunked_prefill_off_even_when_asked():
    e = eff(R1 + ["--enable-chunked-prefill", "--enable-prefix-caching", "--max-model-len", "65536"], "H200", "0.7.1")
    assert (e.enable_chunked_prefill, e.enable_prefix_caching, e.max_num_batched_tokens) == (False, False, 65536)
    assert "MLA" in e.reasons["enable_chunked_prefill"]


def test_short_context_keeps_the_2048_floor():
    e = eff(R1 + ["--max-model-len", "1024"], "H200", "0.7.3")
    assert (e.enable_chunked_prefill, e.max_num_batched_tokens) == (False, 2048)


@pytest.mark.parametrize("vllm", ["0.7.4.dev181+gf35f8e22", "0.8.0", "0.10.1"])
def test_cuda_builds_after_pr_12639_run_chunked_prefill_when_asked(vllm):
    # PR #12639 gave MLA a chunked-prefill path on CUDA: the flag is honoured again (V0 budget 2048 tokens)
    e = eff(R1 + ["--enable-chunked-prefill"], "H200", vllm)
    assert e.enable_chunked_prefill is True
    if e.engine == "v0":
        assert e.max_num_batched_tokens == 2048


def test_v1_default_keeps_chunked_prefill_for_mla():
    # 0.8.0 runs DeepSeek-R1 on V1 by default, where chunked prefill is always on
    e = eff(R1, "H200", "0.8.0")
    assert (e.engine, e.enable_chunked_prefill) == ("v1", True)


@pytest.mark.parametrize("vllm,env", [("0.7.4.dev181+gf35f8e22", []), ("0.8.0", ["VLLM_USE_V1=0"]),
                                      ("0.9.2", ["VLLM_USE_V1=0"]), ("0.10.1", ["VLLM_USE_V1=0"])])
def test_v0_leaves_chunked_prefill_off_for_mla_by_default(vllm, env):
    # vLLM 0.8.0-0.10.1.1 vllm/engine/arg_utils.py _set_default_args_v0: "Chunked prefill not supported for
    # Multimodal or MLA in V0" sets enable_chunked_prefill = False before the > 32K long-context rule, and
    # SchedulerConfig then takes max(max_model_len, 2048): DeepSeek-R1's 163,840-token context -> 163,840.
    e = eff(env + R1, "H200", vllm)
    assert (e.engine, e.enable_chunked_prefill, e.max_num_batched_tokens) == ("v0", False, 163840)
    assert "MLA" in e.reasons["enable_chunked_prefill"]
    # prefix caching is V0's own default (off), not forced: the flag still turns it on
    assert eff(env + R1 + ["--enable-prefix-caching"], "H200", vllm).enable_prefix_caching is True


def test_v0_mla_default_keeps_an_explicit_token_budget():
    e = eff(["VLLM_USE_V1=0"] + R1 + ["--max-num-batched-tokens", "32768"], "H200", "0.8.4")
    assert (e.enable_chunked_prefill, e.max_num_batched_tokens) == (False, 32768)


def test_v0_long_context_dense_model_still_gets_chunked_prefill():
    # the MLA rule must not reach other models: Llama-3.1-8B (131,072-token context > 32K) on V0 0.8.4
    e = eff(["VLLM_USE_V1=0", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"], "H100", "0.8.4")
    assert (e.engine, e.enable_chunked_prefill, e.max_num_batched_tokens) == ("v0", True, 2048)


def test_rocm_nightly_of_0_7_4_still_forces_it_off():
    e = eff(R1 + ["--max-model-len", "65536"], "MI300X", "0.7.4.dev4")
    assert (e.enable_chunked_prefill, e.max_num_batched_tokens) == (False, 65536)


def test_dense_models_are_untouched():
    e = eff(["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--enable-chunked-prefill"], "H100", "0.7.2")
    assert e.enable_chunked_prefill is True


def test_sr205_names_the_forced_switch_instead_of_suggesting_the_flag(run_cli):
    code, out, err = run_cli("diagnose", "--gpu", "H200", "--vllm", "0.7.2", "--", *R1)
    line = next(ln for ln in out.splitlines() if "SR205" in ln)
    assert "turns it off for MLA models" in line and "upgrade vLLM" in line and "--enable-chunked-prefill" not in line
