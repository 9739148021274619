"""Version-aware config checks (sched_reader.analyzers.compat_checks): SR101-SR110 on hand-built engines and on
the real deploy fixtures in tests/data/deploy/. Expected facts were read by hand from the vLLM data
(args/<version>.json, compat_matrix/<version>.md, validation_rules.yaml, facts.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sched_reader.analyzers import compat_checks as checks
from sched_reader.compat.releases import known_releases
from sched_reader.models.engine_spec import EffectiveConfig, EngineSpec, FlagValue, Hardware
from sched_reader.models.gpu import GPU
from sched_reader.readers.raw import Hint, Origin, RawEngine, Setting

DEPLOY = Path(__file__).parents[1] / "data" / "deploy"


def S(flag, value=None, line=1, file="deploy.yaml"):
    return Setting(flag=flag, value=value, origin=Origin(file=file, line=line, source="command-line", key=flag))


def raw(*settings, version=None):
    r = RawEngine(name="e", file="deploy.yaml", line=1, settings=list(settings))
    if version:
        r.vllm_version = Hint(value=version, origin=Origin(file="deploy.yaml", line=2, source="kubernetes",
                                                           key=f"vllm/vllm-openai:v{version}"))
    return r


def rules_of(findings):
    return [(f.rule, f.severity, f.line) for f in findings]


# ---- SR101 ----------------------------------------------------------------------------------------

def test_removed_flag_names_the_release_that_removed_it():
    # --swap-space is in args/0.17.1.json and absent from args/0.18.0.json
    (f,) = checks.check_raw(raw(S("--swap-space", "4", line=7)), "0.18.0")
    assert (f.rule, f.severity, f.line, f.key) == ("SR101", "error", 7, "--swap-space")
    assert "removed in 0.18.0" in f.message
    assert checks.check_raw(raw(S("--swap-space", "4")), "0.17.1") == []


def test_flag_added_later_and_did_you_mean():
    (f,) = checks.check_raw(raw(S("--enable-prompt-embeds")), "0.8.5")  # first in 0.9.0
    assert f.rule == "SR101" and "added in 0.9.0" in f.message and "0.9.0" in f.fix
    (f,) = checks.check_raw(raw(S("--max-num-seqz", "8")), "0.18.0")
    assert f.rule == "SR101" and f.fix == "did you mean --max-num-seqs?"


def test_renamed_flag_fix_names_the_successor():
    # --cuda-graph-sizes: last in 0.12.0; --cudagraph-capture-sizes carries the setting later
    (f,) = checks.check_raw(raw(S("--cuda-graph-sizes", "2048")), "0.18.0")
    assert "removed in 0.13.0" in f.message and f.fix == "use --cudagraph-capture-sizes"


FRONTEND = [("--host", "0.0.0.0"), ("--port", "8000"), ("--served-model-name", "m"), ("--api-key", "k"),
            ("--chat-template", "t.jinja"), ("--uvicorn-log-level", "info"), ("--enable-auto-tool-choice", None),
            ("--tool-call-parser", "hermes")]


@pytest.mark.parametrize("version", known_releases())
def test_front_end_flags_are_never_unknown(version):
    findings = checks.check_raw(raw(*[S(f, v, line=i) for i, (f, v) in enumerate(FRONTEND, 1)]), version)
    assert [f for f in findings if f.rule == "SR101"] == []


# ---- SR102 / SR103 / SR108 ------------------------------------------------------------------------

def test_bad_choice_suggests_the_closest():
    # 0.8.5 --kv-cache-dtype choices: auto, fp8, fp8_e4m3, fp8_e5m2
    (f,) = checks.check_raw(raw(S("--kv-cache-dtype", "fp9")), "0.8.5")
    assert f.rule == "SR102" and "auto, fp8, fp8_e4m3, fp8_e5m2" in f.message and f.fix == "did you mean 'fp8'?"
    assert checks.check_raw(raw(S("--kv-cache-dtype", "fp8_e5m2")), "0.8.5") == []


def test_wrong_types_and_missing_values():
    out = checks.check_raw(raw(S("--max-num-seqs", "lots", line=3), S("--max-model-len", None, line=4),
                               S("--gpu-memory-utilization", "nan", line=5)), "0.18.0")
    assert rules_of(out) == [("SR103", "error", 3), ("SR103", "error", 4), ("SR103", "error", 5)]


def test_abbreviations():
    out = checks.check_raw(raw(S("--max-num-batched-token", "65536", line=2), S("--max-num", "4", line=3)), "0.18.0")
    assert rules_of(out) == [("SR108", "warning", 2), ("SR108", "error", 3)]
    assert "--max-num-batched-tokens" in out[0].fix and "--max-num-seqs" in out[1].message


def test_negated_and_underscore_flags_are_known():
    assert checks.check_raw(raw(S("--no-enable-prefix-caching"), S("--max_num_seqs", "8")), "0.18.0") == []


# ---- SR104 / SR109 --------------------------------------------------------------------------------

def test_deprecated_flag():
    # args/0.12.0.json --disable-log-requests: deprecated "[DEPRECATED] Disable logging requests."
    (f,) = checks.check_raw(raw(S("--disable-log-requests")), "0.12.0")
    assert (f.rule, f.severity) == ("SR104", "warning") and "removed in 0.17.0" in f.fix
    assert checks.check_raw(raw(S("--disable-log-requests")), "0.8.5") == []  # not yet deprecated


def test_help_text_mentioning_deprecation_is_not_a_deprecated_flag():
    assert checks.check_raw(raw(S("--allow-deprecated-quantization")), "0.18.0") == []


def test_unknown_speculative_method():
    # facts.yaml: 0.8.5 methods ngram, eagle, medusa, mlp_speculator, draft_model; eagle3 from 0.9.1
    cfg = '{"method": "eagle3", "model": "x", "num_speculative_tokens": 3}'
    (f,) = checks.check_raw(raw(S("--speculative-config", cfg, line=9)), "0.8.5")
    assert (f.rule, f.line) == ("SR109", 9) and "added in 0.9.1" in f.message
    assert checks.check_raw(raw(S("--speculative-config", cfg)), "0.9.1") == []
    (f,) = checks.check_raw(raw(S("--speculative-config", '{"method": "eagel"}')), "0.18.0")
    assert f.fix == "did you mean 'eagle'?"


# ---- SR105 / SR106 on values ----------------------------------------------------------------------

def vals(version, **explicit):
    return checks.values_from_explicit(version, explicit, engine="v1")


def test_matrix_spec_decode_with_lora_in_0_18_0():
    spec_cfg = {"method": "eagle", "model": "m", "num_speculative_tokens": 3}
    origins = {"enable_lora": Origin(file="d.yaml", line=3), "speculative_config": Origin(file="d.yaml", line=5)}
    out = checks.check_values(vals("0.18.0", enable_lora=True, speculative_config=spec_cfg, max_num_seqs=8,
                                   max_num_batched_tokens=8192), "0.18.0", origins=origins)
    sr105 = [f for f in out if f.rule == "SR105"]
    assert len(sr105) == 1 and sr105[0].severity == "warning" and sr105[0].line == 5
    assert "LoRA" in sr105[0].message and "SD" in sr105[0].message


def test_matrix_spec_decode_with_chunked_prefill():
    spec_cfg = {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}
    ok = checks.check_values(vals("0.18.0", enable_chunked_prefill=True, speculative_config=spec_cfg), "0.18.0")
    assert [f for f in ok if f.rule == "SR105"] == []  # 0.18.0: SD x CP = ✅
    old = checks.check_values(vals("0.6.3", enable_chunked_prefill=True, speculative_model="[ngram]",
                                   num_speculative_tokens=3), "0.6.3")
    assert [f.rule for f in old if "CP" in f.message] == ["SR105"]  # 0.6.3: SD x CP = ✗


def test_matrix_hardware_column():
    out = checks.check_values(vals("0.18.0", enable_chunked_prefill=True, enable_prefix_caching=False), "0.18.0",
                              hardware="volta")
    (f,) = [f for f in out if f.rule == "SR105"]
    assert "Volta" in f.message and "https://github.com/vllm-project/vllm/issues/2729" in f.message


def test_documented_spec_decode_pipeline_parallel():
    spec_cfg = {"method": "eagle", "model": "m", "num_speculative_tokens": 2}
    out = checks.check_values(vals("0.10.0", pipeline_parallel_size=2, speculative_config=spec_cfg), "0.10.0")
    assert any(f.rule == "SR105" and "pipeline parallelism" in f.message for f in out)
    out = checks.check_values(vals("0.18.0", pipeline_parallel_size=2, speculative_config=spec_cfg), "0.18.0")
    assert not any("pipeline parallelism" in f.message for f in out)


def test_startup_rule_located_at_the_setting():
    origins = {"max_num_batched_tokens": Origin(file="d.yaml", line=4, key="--max-num-batched-tokens"),
               "max_num_seqs": Origin(file="d.yaml", line=6, key="--max-num-seqs")}
    out = checks.check_values(vals("0.18.0", max_num_batched_tokens=64, max_num_seqs=128), "0.18.0",
                              origins=origins)
    (f,) = [f for f in out if f.rule.startswith("SR106.")]
    assert f.severity == "error" and (f.line, f.key) == (6, "--max-num-seqs")
    assert "max_num_batched_tokens (64) must be greater than or equal to max_num_seqs (128)" in f.message


# ---- check_spec on a hand-built EngineSpec ----------------------------------------------------------

V100 = GPU(id="nvidia-v100-sxm2-32gb", vendor="NVIDIA", name="V100", arch="Volta GV100", memory_bytes=32 * 2**30,
           cuda_total_bytes=31 * 2**30, hbm_bandwidth_tb_s=0.9, tflops={"fp16": 125.0}, interconnect="nvlink",
           compute_capability="7.0", source_url="https://example.invalid/v100")


def spec(version, args, gpu_inferred=False, **eff):
    o = lambda line: Origin(file="d.yaml", line=line, key="--x")  # noqa: E731
    fvs = {d: FlagValue(dest=d, flag="--" + d.replace("_", "-"), value=v, origin=Origin(file="d.yaml", line=i + 3,
                        key="--" + d.replace("_", "-"))) for i, (d, v) in enumerate(args.items())}
    base = dict(vllm_version=version, max_model_len=4096, gpu_memory_utilization=0.9, dtype="bfloat16",
                max_num_seqs=256, max_num_batched_tokens=8192, enable_chunked_prefill=True,
                enable_prefix_caching=True)
    base.update(eff)
    return EngineSpec(name="e", file="d.yaml", line=1, vllm_version=version, model_name="m", model_origin=o(2),
                      hardware=Hardware(gpu=V100, count=1, gpu_inferred=gpu_inferred), args=fvs,
                      effective=EffectiveConfig(**base))


def test_check_spec_bfloat16_on_volta():
    out = checks.check_spec(spec("0.18.0", {"dtype": "bfloat16"}, dtype="bfloat16"))
    sr106 = [f for f in out if f.rule.startswith("SR106.")]
    assert len(sr106) == 1 and "Bfloat16 is only supported on GPUs with compute capability of at least 8.0" in sr106[0].message
    assert sr106[0].line == 3  # the --dtype setting
    assert any(f.rule == "SR105" and "Volta" in f.message for f in out)  # CP and APC on Volta: ❌
    assert [f for f in checks.check_spec(spec("0.18.0", {"dtype": "half"}, dtype="float16")) if f.rule.startswith("SR106.")] == []


def test_check_spec_ignores_assumed_values():
    s = spec("0.18.0", {"max_num_batched_tokens": 2048, "enable_chunked_prefill": False},
             max_num_batched_tokens=2048, enable_chunked_prefill=False, dtype="float16",
             reasons={"max_model_len": "unknown model: assumed 4096 tokens"})
    assert [f for f in checks.check_spec(s) if f.rule.startswith("SR106.")] == []
    s2 = spec("0.18.0", {"max_num_batched_tokens": 2048, "enable_chunked_prefill": False, "max_model_len": 4096},
              max_num_batched_tokens=2048, enable_chunked_prefill=False, dtype="float16")
    assert [f.rule for f in checks.check_spec(s2) if f.rule.startswith("SR106.")] == ["SR106.batched-tokens-below-max-model-len"]


def test_check_spec_unknown_gpu_is_not_checked_against_hardware():
    out = checks.check_spec(spec("0.18.0", {}, gpu_inferred=True, dtype="bfloat16"))
    assert out == []


# ---- SR107 ----------------------------------------------------------------------------------------

def test_default_changes():
    # README spot check: 0.19.1 -> 0.20.0 gpu_memory_utilization 0.9 -> 0.92
    where = Origin(file="d.yaml", line=2, key="vllm/vllm-openai:v0.19.1")
    (f,) = checks.check_default_changes("0.19.1", "0.20.0", [], where)
    assert f.rule == "SR107" and "0.9" in f.message and "0.92" in f.message and f.line == 2
    assert checks.check_default_changes("0.19.1", "0.20.0", ["gpu_memory_utilization"], where) == []
    assert checks.check_default_changes("0.20.0", "0.20.0", [], where) == []


def test_sorted_and_deduplicated():
    a = checks.check_raw(raw(S("--b-unknown", "1", line=9), S("--a-unknown", "1", line=2)), "0.18.0")
    assert [f.line for f in a] == [2, 9]
    assert checks.sort_findings(a + a) == a


# ---- the real deploy fixtures -----------------------------------------------------------------------

FIXTURES = sorted(p for p in DEPLOY.rglob("*") if p.is_file() and p.name != "README.md")


def _check(path, vllm=None):
    from sched_reader.analyzers import compat_engines as command

    return command.check_configs([str(path)], None, vllm=vllm)


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_fixture_has_no_false_unknown_front_end_flag(path):
    for engine in _check(path):
        for f in engine["findings"]:
            if f.rule == "SR101":
                flag = f.message.split()[2]
                assert flag not in checks.FRONTEND_FLAGS, f
                assert engine["vllm_version"] not in ("0.6.0",)


def _by(engines, rule):
    return [(f.line, f.key, f.severity) for e in engines for f in e["findings"] if f.rule == rule]


def test_fixture_kubeai_70b():
    p = DEPLOY / "k8s" / "kubeai__llama-3.1-70b-instruct-fp8-h100.yaml"
    newest = _check(p)  # no image tag: newest release
    assert _by(newest, "SR108") == [(14, "--max-num-batched-token", "warning")]
    assert _by(newest, "SR101") == [(19, "--disable-log-requests", "error")]
    assert _by(newest, "SR110") == [(9, None, "info")]
    old = _check(p, vllm="0.16.0")
    assert _by(old, "SR101") == [] and _by(old, "SR104") == [(19, "--disable-log-requests", "warning")]


def test_fixture_gpt_oss_recipe_cuda_graph_sizes():
    p = DEPLOY / "vllm-config" / "recipes__GPT-OSS_Hopper.yaml"
    (e,) = _check(p, vllm="0.18.0")
    (f,) = [f for f in e["findings"] if f.rule == "SR101"]
    assert f.line == 6 and f.fix == "use --cudagraph-capture-sizes"
    (e,) = _check(p, vllm="0.12.0")
    assert [f.rule for f in e["findings"] if f.line == 6] == ["SR104"]


def test_fixture_image_tags_pick_the_release():
    (e,) = _check(DEPLOY / "k8s" / "aibrix__quickstart_model_deployment.yaml")
    assert e["vllm_version"] == "0.7.1" and [f for f in e["findings"] if f.severity == "error"] == []
    (e,) = _check(DEPLOY / "helm-values" / "production-stack__values-25-v100-multi-gpu-tp2.yaml")
    # 0.8.5 re-parses the chat template per chat request (SR120, info); nothing else to say about it
    assert e["vllm_version"] == "0.8.5" and [f.rule for f in e["findings"]] == ["SR120"]


def test_fixture_latest_tag_is_approximate():
    engines = _check(DEPLOY / "compose" / "multi-model-server__docker-compose-vllm.yml")
    assert len(engines) == 3
    assert all([f.rule for f in e["findings"]] == ["SR110"] for e in engines)
    assert all(e["findings"][0].severity == "warning" for e in engines)
