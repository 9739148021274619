"""Spec builder: flags as written -> normalized, typed, version-aware engine specs.

Expected values are read by hand from vLLM's release facts (shared/vllm/facts.yaml, copied into the
package data) and the fixtures; each test names where its number comes from.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sched_reader.errors import InputError, UnknownGPUError, UnknownModelError
from sched_reader.analyzers.pipeline import build_specs
from sched_reader.models.spec_builder import derived_max_model_len

DEPLOY = Path(__file__).parents[1] / "data" / "deploy"


def one(argv: list[str], **kw):
    [spec] = build_specs([], argv, **kw)
    return spec


def rules(spec) -> list[str]:
    return [f.rule for f in spec.findings]


def test_underscores_and_unambiguous_prefixes_normalize_to_dest_names():
    spec = one(
        ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max_num_seqs", "8",
         "--max-num-batched-token", "4096"],
        vllm="0.19.0",
    )
    assert spec.args["max_num_seqs"].value == 8
    assert spec.args["max_num_seqs"].flag == "--max-num-seqs"
    assert spec.args["max_num_batched_tokens"].value == 4096
    assert spec.effective.max_num_seqs == 8
    assert spec.effective.max_num_batched_tokens == 4096
    assert "SR101" not in rules(spec)


def test_later_setting_wins_and_the_loser_is_kept():
    spec = one(["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "4096",
                "--max-model-len=8192"], vllm="0.19.0")
    fv = spec.args["max_model_len"]
    assert fv.value == 8192
    assert len(fv.overridden) == 1


def test_command_line_overrides_config_file(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("max-model-len: 4096\nmax_num_seqs: 32\n")
    script = tmp_path / "serve.sh"
    script.write_text(f"vllm serve meta-llama/Llama-3.1-8B-Instruct --config {cfg.name} --max-model-len 2048\n")
    [spec] = build_specs([script], vllm="0.19.0")
    assert spec.args["max_model_len"].value == 2048
    assert spec.args["max_model_len"].origin.source == "command-line"
    assert spec.args["max_model_len"].overridden[0].source == "config-file"
    assert spec.args["max_num_seqs"].value == 32
    assert spec.args["max_num_seqs"].origin.line == 2


def test_yaml_false_is_dropped_before_0_28_and_negated_after(tmp_path):
    # facts.yaml config_file: 0.12.0..0.27.1 "bool false -> omitted"; 0.28.0+ "--no-<key> when that option exists"
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("model: meta-llama/Llama-3.1-8B-Instruct\nenable-prefix-caching: false\n")
    [old] = build_specs([cfg], vllm="0.19.0")
    assert "SR111" in rules(old)
    assert old.effective.enable_prefix_caching is True  # the default survives
    [new] = build_specs([cfg], vllm="0.30.0")
    assert "SR111" not in rules(new)
    assert new.effective.enable_prefix_caching is False


def test_no_flag_negation_on_command_line():
    spec = one(["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--no-enable-prefix-caching"], vllm="0.19.0")
    assert spec.effective.enable_prefix_caching is False


@pytest.mark.parametrize(
    "flag,value,needle",
    [
        ("--max-num-seqs", "abc", "--max-num-seqs"),
        ("--gpu-memory-utilization", "nan", "--gpu-memory-utilization"),
        ("--kv-cache-dtype", "fp7", "--kv-cache-dtype"),
    ],
)
def test_values_vllm_would_reject_raise_input_error_with_flag(flag, value, needle):
    with pytest.raises(InputError) as exc:
        one(["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", flag, value], vllm="0.19.0")
    assert needle in str(exc.value)
    assert exc.value.exit_code == 2


def test_unknown_flag_is_a_finding_with_did_you_mean():
    spec = one(["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-nm-seqs", "8"], vllm="0.19.0")
    [f] = [f for f in spec.findings if f.rule == "SR101"]
    assert f.severity == "error"
    assert "--max-num-seqs" in (f.fix or "")


def test_removed_flag_names_the_release_that_removed_it():
    # --use-v2-block-manager is in the 0.6.0 argument table and absent from 0.18.0's.
    argv = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--use-v2-block-manager"]
    assert "SR101" not in rules(one(argv, vllm="0.6.0"))
    new = one(argv, vllm="0.18.0")
    [f] = [f for f in new.findings if f.rule == "SR101"]
    assert "removed in" in f.message


def test_scheduler_defaults_follow_gpu_tier_and_release():
    # facts.yaml scheduler_defaults 0.11.1..0.27.1: >= 70 GiB and not A100 -> OPENAI_API_SERVER 8192 tokens,
    # 1024 seqs; otherwise 2048 / 256. gpu_memory_utilization 0.9 until 0.19.1, 0.92 from 0.20.0.
    argv = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
    h100 = one(argv, vllm="0.19.0", gpu="H100").effective
    assert (h100.max_num_batched_tokens, h100.max_num_seqs, h100.gpu_memory_utilization) == (8192, 1024, 0.9)
    a100 = one(argv, vllm="0.19.0", gpu="A100-40GB").effective
    assert (a100.max_num_batched_tokens, a100.max_num_seqs) == (2048, 256)
    assert one(argv, vllm="0.20.0", gpu="H100").effective.gpu_memory_utilization == 0.92
    assert h100.enable_chunked_prefill is True


def test_v0_release_without_chunked_prefill_budgets_max_model_len():
    # facts.yaml 0.6.0..0.6.4 (V0): no chunked prefill below 32K context -> max(max_model_len, 2048) tokens.
    eff = one(["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "20000"],
              vllm="0.6.3", gpu="H100").effective
    assert eff.engine == "v0"
    assert eff.enable_chunked_prefill is False
    assert eff.max_num_batched_tokens == 20000
    assert eff.max_num_seqs == 256


def test_max_model_len_derived_from_the_model_config():
    # Llama-3.1-8B: max_position_embeddings 131072 with llama3 rope scaling (not multiplied).
    assert one(["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"], vllm="0.19.0").effective.max_model_len == 131072
    # YaRN: original 4096 x factor 40 = 163840 (DeepSeek-V2-Lite config).
    assert derived_max_model_len({"max_position_embeddings": 163840,
                                  "rope_scaling": {"type": "yarn", "factor": 40,
                                                   "original_max_position_embeddings": 4096}}) == 163840


def test_hardware_default_is_an_assumed_h100():
    spec = one(["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "2"], vllm="0.19.0")
    assert spec.hardware.gpu.id == "nvidia-h100-sxm5-80gb"
    assert spec.hardware.gpu_inferred is True
    assert spec.hardware.count == 2 and spec.hardware.count_inferred


def test_unknown_gpu_and_model_are_errors_with_suggestions():
    with pytest.raises(UnknownGPUError) as exc:
        one(["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"], gpu="Z100")
    assert exc.value.exit_code == 2
    with pytest.raises(UnknownModelError) as exc:
        one(["vllm", "serve", "acme/Llama-9-1T"])
    assert exc.value.hint


def test_unknown_model_is_unresolved_when_not_strict():
    [spec] = build_specs([], ["vllm", "serve", "acme/Llama-9-1T"], strict_model=False)
    assert spec.arch is None
    assert spec.unresolved and "acme/Llama-9-1T" in spec.unresolved[0].text


def test_version_from_image_tag_and_cli_override():
    path = DEPLOY / "k8s" / "aibrix__quickstart_model_deployment.yaml"
    [spec] = build_specs([path])
    assert spec.vllm_version == "0.7.1"
    assert spec.vllm_version_origin.source == "kubernetes"
    [spec] = build_specs([path], vllm="0.19.0")
    assert spec.vllm_version == "0.19.0"


def test_compose_services_sharing_a_gpu_add_their_memory_fractions():
    # multi-model-server: three services, `count: 1` each, so all land on GPU 0 (gmu 0.33 + 0.33 + 0.3).
    specs = build_specs([DEPLOY / "compose" / "multi-model-server__docker-compose-vllm.yml"], strict_model=False)
    shared = [f for s in specs for f in s.findings if f.rule == "SR113"]
    assert len(shared) == 3
    assert "0.96" in shared[0].message


def test_unresolved_variable_in_a_flag_is_a_warning():
    specs = build_specs([DEPLOY / "cmdline" / "InferenceMAX-fork__gptoss_fp4_h100_docker.sh"], strict_model=False)
    keys = {f.key for s in specs for f in s.findings if f.rule == "SR114"}
    assert "--tensor-parallel-size" in keys


def test_amd_gpu_request_assumes_an_amd_part(tmp_path):
    p = tmp_path / "amd.yaml"
    p.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: amd}\nspec:\n  template:\n    spec:\n"
                 "      containers:\n      - name: vllm\n        image: rocm/vllm:v0.10.1\n"
                 "        args: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct]\n"
                 "        resources: {limits: {amd.com/gpu: 1}}\n")
    [spec] = build_specs([p])
    assert spec.hardware.gpu.vendor == "AMD" and spec.hardware.gpu_inferred
    assert any("amd.com/gpu" in n for n in spec.notes)


def test_unquoted_version_in_own_file_is_an_error_with_a_fix(tmp_path):
    p = tmp_path / "own.yaml"
    p.write_text("sched_reader: 1\nvllm_version: 0.10\nserve: vllm serve meta-llama/Llama-3.1-8B-Instruct\n")
    with pytest.raises(InputError) as exc:
        build_specs([p])
    assert exc.value.line == 2 and "quote" in (exc.value.hint or "")


def test_sched_reader_key_in_a_vllm_config_says_how_to_mark_the_file(tmp_path):
    p = tmp_path / "v.yaml"
    p.write_text("model: meta-llama/Llama-3.1-8B-Instruct\nhardware: {gpu: H100, count: 1}\n")
    [spec] = build_specs([p], vllm="0.19.0")
    [f] = [f for f in spec.findings if f.rule == "SR101"]
    assert "sched_reader: 1" in f.fix
