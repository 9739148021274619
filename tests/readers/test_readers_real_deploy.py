"""Real public deploy files (tests/data/deploy/, sources in tests/data/deploy/SOURCES): every form is read,
asserted per file against what the file itself states (read by hand: engines, model, TP/PP, GPU count and
type, vLLM release, flags); and a sweep shows no valid file is refused (issue 10).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sched_reader.errors import SchedReaderError
from sched_reader.analyzers.pipeline import build_specs
from sched_reader.models.spec_builder import default_release

DEPLOY = Path(__file__).parents[1] / "data" / "deploy"
DEFAULT = "default"  # the file names no vLLM release: checked against default_release()

# file -> one dict per engine, in file order. gpu: the catalog GPU name, or the accelerator as read when the
# catalog lacks it; a trailing "?" means nothing in the file names it (sched-reader assumes one, and says so).
CASES: dict[str, list[dict]] = {
    # KubeRay RayService, Ray Serve LLM: engine_kwargs are vLLM args; one replica = TP 1 -> 1 GPU of the group
    "ray/kuberay__ray-service.llm-serve.yaml": [
        dict(model="Qwen/Qwen2.5-7B-Instruct", tp=1, pp=1, gpus=1, gpu="H100 SXM5 80GB?", release=DEFAULT,
             flags={"max_model_len": 1024, "gpu_memory_utilization": 0.75, "dtype": "bfloat16"})],
    # accelerator_type: L4 in the LLM config
    "ray/kuberay__ray-service.high-throughput-llm.yaml": [
        dict(model="Qwen/Qwen3.5-4b", tp=1, pp=1, gpus=1, gpu="L4 24GB", release=DEFAULT)],
    # TPU v6e slice, 8 chips (google.com/tpu: "8"); model from env_vars is a $MODEL_ID placeholder
    "ray/kuberay__ray-service.vllm-tpu-v6e-singlehost.yaml": [
        dict(model=None, tp=1, pp=1, gpus=8, gpu="Google TPU tpu-v6e-slice", release=DEFAULT, modelled=False)],
    # AIBrix RayClusterFleet: `ray start --head ...; vllm serve ... --tensor-parallel-size 2`, head 2 GPUs
    "ray/aibrix__fleet.yaml": [
        dict(model="Qwen/Qwen2.5-Coder-7B-Instruct", tp=2, pp=1, gpus=2, gpu="H100 SXM5 80GB?", release="0.7.1",
             flags={"distributed_executor_backend": "ray"})],
    # head 8 GPUs + 1 worker x 8 GPUs = 16 = TP 16; image aibrix/vllm-openai:v0.7.3.self.post1 (custom build)
    "ray/aibrix__deepseek-r1-huggingface.yaml": [
        dict(model="deepseek-ai/DeepSeek-R1", tp=16, pp=1, gpus=16, gpu="H100 SXM5 80GB?", release="0.7.3")],
    "ray/aibrix__volcano-deepseek-r1.yaml": [
        dict(model="/models/DeepSeek-R1", tp=16, pp=1, gpus=16, gpu="H100 SXM5 80GB?", release="0.7.3")],
    # KServe LLMInferenceService
    "kserve/kserve__llm-inference-service-qwen2-7b-gpu.yaml": [
        dict(model="Qwen/Qwen2.5-7B-Instruct", tp=1, pp=1, gpus=1, gpu="H100 SXM5 80GB?", release=DEFAULT)],
    "kserve/kserve__llm-inference-service-pd-qwen2-7b-gpu.yaml": [
        dict(role="decode", model="Qwen/Qwen2.5-7B-Instruct", gpus=1, release=DEFAULT, replicas=1,
             flags={"kv_transfer_config": {"kv_connector": "NixlConnector", "kv_role": "kv_consumer"}}),
        dict(role="prefill", model="Qwen/Qwen2.5-7B-Instruct", gpus=1, release=DEFAULT, replicas=2,
             flags={"kv_transfer_config": {"kv_connector": "NixlConnector", "kv_role": "kv_producer"}})],
    "kserve/kserve__llm-inference-service-qwen2-7b-amd-no-scheduler.yaml": [
        dict(model="Qwen/Qwen2.5-7B-Instruct", gpus=1, gpu="Instinct MI300X 192GB?", release=DEFAULT, replicas=2)],
    # parallelism data 16 / dataLocal 8 -> leader + 1 worker pod x 8 GPUs; VLLM_ADDITIONAL_ARGS read as flags
    "kserve/kserve__llm-inference-service-dp-ep-deepseek-r1-gpu-naive.yaml": [
        dict(model="deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct", tp=1, gpus=16, release=DEFAULT,
             flags={"data_parallel_size": 16, "data_parallel_size_local": 8, "enable_expert_parallel": True,
                    "gpu_memory_utilization": 0.95, "max_model_len": 8192, "enforce_eager": True})],
    "kserve/kserve__llm-inference-service-pd-facebook-opt-125m-cpu.yaml": [
        dict(role="decode", model="facebook/opt-125m", gpus=0, release="0.23.0"),
        dict(role="prefill", model="facebook/opt-125m", gpus=0, release="0.23.0")],
    "kserve/kserve__e2e-gpt-oss-inference_pd_disaggregation.yaml": [
        dict(role="decode", model="RedHatAI/gpt-oss-20b", gpus=1, release=DEFAULT),
        dict(role="prefill", model="RedHatAI/gpt-oss-20b", gpus=1, release=DEFAULT)],
    # production-stack VLLMRuntime CRs; image tags 2025-05-27-v1 / 2025-05-05-v1 are dated custom builds
    "k8s/production-stack__vllmruntime-sample.yaml": [
        dict(model="meta-llama/Llama-3.1-8B-Instruct", tp=1, gpus=1, release=DEFAULT, requested="2025-05-27-v1",
             replicas=2, flags={"max_model_len": 4096, "max_num_seqs": 32, "gpu_memory_utilization": 0.8,
                                "enable_chunked_prefill": False, "enable_prefix_caching": False, "enable_lora": True,
                                "max_loras": 4, "dtype": "bfloat16"})],
    "k8s/production-stack__gateway-vllm-runtime.yaml": [
        dict(model="meta-llama/Llama-3.2-1B-Instruct", tp=1, gpus=1, release=DEFAULT, requested="2025-05-05-v1",
             flags={"max_num_seqs": 1024, "max_model_len": 4096, "gpu_memory_utilization": 0.9, "max_loras": 2})],
    # SkyPilot: run: script with envs:, accelerators, num_nodes, service replicas, pip install vllm==0.3.0
    "skypilot/skypilot__service.yaml": [
        dict(model="meta-llama/Llama-2-7b-chat-hf", tp=1, gpus=1, gpu="L4 24GB", requested="0.3.0", replicas=2,
             flags={"tokenizer": "hf-internal-testing/llama-tokenizer"})],
    "skypilot/skypilot__serve-openai-api-docker.yaml": [
        dict(model="meta-llama/Llama-2-7b-chat-hf", gpus=1, gpu="L4 24GB", requested="latest")],
    "skypilot/skypilot__mixtral-service.yaml": [
        dict(model="mistralai/Mixtral-8x7B-Instruct-v0.1", tp=8, gpus=8, gpu="L4 24GB", release=DEFAULT,
             replicas=2)],
    "skypilot/skypilot__vllm-multinode.sky.yaml": [
        dict(model="meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", tp=8, pp=2, gpus=16, gpu="H100 SXM5 80GB",
             release=DEFAULT, replicas=2, flags={"max_model_len": 32768, "trust_remote_code": True})],
    # GitHub Actions: two `CUDA_VISIBLE_DEVICES=N vllm serve` in one run: step
    "ci/production-stack__router-e2e-test.yml": [
        dict(model="facebook/opt-125m", gpus=1, release=DEFAULT, flags={"gpu_memory_utilization": 0.7, "port": 8001}),
        dict(model="facebook/opt-125m", gpus=1, release=DEFAULT, flags={"gpu_memory_utilization": 0.7, "port": 8002})],
    # Makefiles: VAR ?= "x" and $(VAR) are make variables
    "makefile/Faithful_Summarization__eval.mk": [
        dict(model="mistralai/Mistral-7B-Instruct-v0.3", tp=1, gpus=1, release=DEFAULT,
             flags={"gpu_memory_utilization": 0.4, "max_num_batched_tokens": 60000, "max_num_seqs": 256,
                    "port": 8000})],
    "makefile/llm_app/Makefile": [
        dict(model="Qwen/Qwen2.5-VL-3B-Instruct", release=DEFAULT,
             flags={"max_model_len": 32768, "gpu_memory_utilization": 0.8, "enforce_eager": True}),
        dict(model="openai/whisper-large-v3-turbo", release=DEFAULT, env={"VLLM_USE_V1": "0"})],
    # Slurm: #SBATCH --gres=gpu:A100_40GB:1; the model is the script's $1
    "slurm/manyshot-math__deploy_vllm.sh": [
        dict(model=None, gpus=1, gpu="A100 SXM4 40GB", release=DEFAULT, flags={"gpu_memory_utilization": 0.95})],
    # llm-d-deployer sampleApplication: hf:// or pvc://<pvc>/<org>/<name> artifact, shared resources
    "helm-values/llm-d-deployer__llama4-fp8.yaml": [
        dict(role="prefill", model="RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic", tp=4, gpus=4,
             flags={"max_model_len": 20000}),
        dict(role="decode", model="RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic", tp=4, gpus=4,
             flags={"max_model_len": 20000})],
    "helm-values/llm-d-deployer__pd-nixl.yaml": [
        dict(role="prefill", model="meta-llama/Llama-3.2-3B-Instruct"),
        dict(role="decode", model="meta-llama/Llama-3.2-3B-Instruct")],
    # production-stack values written as Terraform templates: path models filled by the initContainer download
    "helm-values/production-stack__gpu-gpt-qwn-gem-glm-cw.tpl": [
        dict(model="openai/gpt-oss-120b", tp=2, gpus=2, release="0.15.1", flags={"gpu_memory_utilization": 0.95}),
        dict(model="arcee-ai/Trinity-Mini", gpus=1, release="0.15.1", flags={"max_model_len": 8192}),
        dict(model="google/gemma-3-27b-it", gpus=1, release="0.15.1", flags={"max_model_len": 16384}),
        dict(model="Qwen/Qwen3-Next-80B-A3B-Instruct-FP8", tp=2, gpus=2, release="0.15.1",
             flags={"max_model_len": 32768, "gpu_memory_utilization": 0.6})],
    "helm-values/production-stack__cpu-tinyllama-light-local.tpl": [
        dict(model="TinyLlama/TinyLlama-1.1B-Chat-v1.0", gpus=0, release="0.8.5", requested="0.8.5.post1")],
    # compose with ${VAR:-default} everywhere, a YAML merge key for the GPU reservation, P/D profile
    "compose/aibrix-standalone/docker-compose.yml": [
        dict(model="Qwen/Qwen2.5-1.5B-Instruct", tp=1, gpus=1, release="0.6.6",
             flags={"max_model_len": 8192, "gpu_memory_utilization": 0.9, "enable_prefix_caching": True}),
        dict(model="Qwen/Qwen2.5-1.5B-Instruct", release="0.6.6", flags={"max_num_seqs": 64}),
        dict(model="Qwen/Qwen2.5-1.5B-Instruct", release="0.6.6", flags={"max_num_seqs": 256})],
    # docker run of a locally built image not named vllm/*: read by its arguments; no --gpus: no GPU
    "cmdline/llm_vlm_memo__run_qwen2.5-3b_cpu.sh": [
        dict(model="Qwen/Qwen2.5-VL-3B-Instruct", gpus=0, flags={"max_model_len": 116480})],
    "cmdline/MiniProd_NLP2__vllm.sh": [
        dict(model="Qwen/Qwen2.5-1.5B-Instruct", requested="0.4.2")],
    "cmdline/vLLM-Tutorial__launch_vllm.sh": [
        dict(model="models/Qwen3-8B", tp=1, release=DEFAULT,
             flags={"max_model_len": 8192, "gpu_memory_utilization": 0.85, "max_num_seqs": 64})],
}


def _specs(rel: str):
    return build_specs([str(DEPLOY / rel)], None, strict_model=False)


@pytest.mark.parametrize("rel", sorted(CASES))
def test_real_file_is_read_as_it_states(rel):
    specs = _specs(rel)
    expected = CASES[rel]
    assert len(specs) == len(expected), [s.name for s in specs]
    for spec, exp in zip(specs, expected):
        hw, eff = spec.hardware, spec.effective
        if "model" in exp:
            assert (spec.model_name or None) == exp["model"], spec.name
        if "role" in exp:
            assert spec.role == exp["role"]
        if "tp" in exp:
            assert eff.tensor_parallel_size == exp["tp"]
        if "pp" in exp:
            assert eff.pipeline_parallel_size == exp["pp"]
        if "gpus" in exp:
            assert hw.count == exp["gpus"], spec.name
        if "gpu" in exp:
            name = (hw.gpu.name if hw.modelled else hw.accelerator) + ("?" if hw.gpu_inferred else "")
            assert name == exp["gpu"], spec.name
        if "modelled" in exp:
            assert hw.modelled is exp["modelled"]
        if "release" in exp:
            want = default_release() if exp["release"] == DEFAULT else exp["release"]
            assert spec.vllm_version == want, spec.name
        if "requested" in exp:
            assert spec.vllm_version_requested == exp["requested"]
        for dest, value in exp.get("flags", {}).items():
            assert dest in spec.args, (spec.name, dest, sorted(spec.args))
            assert spec.args[dest].value == value, (spec.name, dest)
            assert spec.args[dest].origin.line is not None  # every value traceable to its line
        if exp.get("unresolved_model"):
            assert any("--model NAME" in u.reason for u in spec.unresolved)


def test_replicas_are_read_where_stated():
    from sched_reader.readers import read_path

    for rel, expected in CASES.items():
        raws = read_path(DEPLOY / rel)
        for raw, exp in zip(raws, expected):
            if "replicas" in exp:
                assert raw.replicas is not None and raw.replicas.value == exp["replicas"], (rel, raw.name)
            for k, v in exp.get("env", {}).items():
                assert raw.env[k].value == v


def test_how_each_engine_was_recognised_is_said():
    from sched_reader.readers import read_path

    [raw] = read_path(DEPLOY / "cmdline/llm_vlm_memo__run_qwen2.5-3b_cpu.sh")
    assert any("vllm-cpu-env" in n for n in raw.notes)
    [raw] = read_path(DEPLOY / "skypilot/skypilot__service.yaml")
    assert raw.detected_by == "SkyPilot run: script"
    raws = read_path(DEPLOY / "ray/kuberay__ray-service.llm-serve.yaml")
    assert raws[0].detected_by.startswith("Ray Serve LLM")


def test_skypilot_run_is_never_read_as_a_vllm_config():
    # argparse prefix matching once turned `run:` into --runner
    for spec in _specs("skypilot/skypilot__vllm-multinode.sky.yaml"):
        assert "runner" not in spec.args and "run" not in spec.args


def test_tpu_is_named_and_never_an_h100_nor_a_cpu_deployment():
    [spec] = _specs("ray/kuberay__ray-service.vllm-tpu-v6e-singlehost.yaml")
    assert spec.hardware.count == 8 and not spec.hardware.modelled
    assert "TPU" in spec.hardware.accelerator
    from sched_reader.analyzers.diagnosis import diagnose

    d = diagnose(spec, {}, performance=False)
    assert not any(f.rule == "SR116" and "CPU deployment" in f.message for f in d.findings)
    assert any("not in the GPU catalog" in f.message for f in d.findings)


# ------------------------------------------------------------------------------------------------ sweep
def _all_files() -> list[Path]:
    return sorted(p for p in DEPLOY.rglob("*") if p.is_file() and p.name not in ("README.md", "SOURCES")
                  and not p.name.startswith("."))


def test_sweep_no_valid_file_is_refused():
    """config + diagnose (capacity part) on every real file: no InputError (exit 2); every file has engines."""
    from sched_reader.analyzers.diagnosis import diagnose

    files = _all_files()
    assert len(files) >= 50
    for p in files:
        specs = build_specs([str(p)], None, strict_model=False)
        assert specs, p
        for s in specs:
            diagnose(s, {}, performance=False)


def test_sweep_lint_reads_every_file_of_the_tree():
    import json

    from typer.testing import CliRunner

    from sched_reader.cli.app import app

    r = CliRunner().invoke(app, ["lint", str(DEPLOY), "--format", "json", "--no-capacity"])
    assert r.exit_code in (0, 1), r.output
    doc = json.loads(r.stdout)
    skipped = [f for f in doc["files"] if f["skipped"]]
    walked = {str(f) for f in _all_files() if f.suffix in (".yaml", ".yml", ".sh", ".mk") or f.name == "Makefile"}
    assert not skipped and walked <= {f["file"] for f in doc["files"]}
    assert not [f for f in doc["findings"] if f["rule"] == "SR001"]


def test_several_files_one_unreadable_the_others_still_reported(tmp_path):
    bad = tmp_path / "broken.yaml"
    bad.write_text("services:\n  vllm: [unclosed\n")
    good = DEPLOY / "skypilot/skypilot__service.yaml"
    specs = build_specs([str(bad), str(good)], None, strict_model=False)
    assert [s.model_name for s in specs] == ["meta-llama/Llama-2-7b-chat-hf"]


def test_invalid_yaml_alone_is_still_one_line_exit_2(tmp_path, run_cli):
    bad = tmp_path / "broken.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nspec:\n  containers: [\n")
    for cmd in ("config", "diagnose"):
        code, _, err = run_cli(cmd, str(bad))
        assert code == 2, cmd
        assert f"{bad}:" in err and len(err.strip().splitlines()) == 1
    code, out, _ = run_cli("lint", str(bad))  # lint reports a broken file as its SR001 finding
    assert code == 1 and "SR001" in out and f"{bad}:" in out


def test_one_bad_object_does_not_hide_the_others(tmp_path):
    p = tmp_path / "two.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - name: v\n"
        "    image: vllm/vllm-openai:v0.10.1\n    args: [--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, abc]\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec:\n  containers:\n  - name: v\n"
        "    image: vllm/vllm-openai:v0.10.1\n    args: [--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, '8192']\n")
    a, b = build_specs([str(p)], None)
    assert any(f.rule in ("SR103", "SR102") and f.severity == "error" for f in a.findings)
    assert "max_model_len" not in a.args and b.args["max_model_len"].value == 8192


def test_compose_interpolation_forms(tmp_path):
    (tmp_path / ".env").write_text("MAX_NUM_SEQS=64\n")
    p = tmp_path / "docker-compose.yml"
    p.write_text(
        "services:\n  llm:\n    image: vllm/vllm-openai:${VLLM_TAG:-v0.10.1}\n"
        "    deploy:\n      resources:\n        reservations:\n          devices:\n"
        "            - capabilities: [gpu]\n              device_ids: ['0,1,2,3']\n"
        "    command: >\n      --model ${MODEL:-Qwen/Qwen2.5-7B-Instruct}\n"
        "      --tensor-parallel-size ${TP-4}\n      --max-model-len ${MAX_MODEL_LEN:-}\n"
        "      --max-num-seqs ${MAX_NUM_SEQS:?set it}\n"
        "  other:\n    image: ${REGISTRY}/llm:1\n"
        "    deploy:\n      resources:\n        reservations:\n          devices:\n"
        "            - driver: nvidia\n              count: ${GPUS:-}\n              capabilities: [gpu]\n"
        "    command: [--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, '8192']\n")
    a, b = build_specs([str(p)], None, strict_model=False)
    assert a.vllm_version == "0.10.1" and a.model_name == "Qwen/Qwen2.5-7B-Instruct"
    assert a.hardware.count == 4  # device_ids ['0,1,2,3'] is four GPUs
    assert a.args["tensor_parallel_size"].value == 4 and a.args["max_num_seqs"].value == 64  # from .env
    assert "max_model_len" not in a.args and any("MAX_MODEL_LEN" in u.text for u in a.unresolved)
    # an image not named vllm is recognised by its vLLM flags; an empty ${GPUS:-} count is not an error
    assert b.model_name == "meta-llama/Llama-3.1-8B-Instruct" and b.hardware.count_inferred


def test_model_path_gets_the_model_name_hint_never_a_fuzzy_match(run_cli):
    code, out, _ = run_cli("config", str(DEPLOY / "k8s/kserve__vllm_raw_container_isvc.yaml"))
    assert code != 2 and "--model NAME" in out and "nearest known" not in out
    code, out, _ = run_cli("diagnose", "--model", "meta-llama/Llama-3.1-8B-Instruct",
                           str(DEPLOY / "k8s/kserve__vllm_raw_container_isvc.yaml"))
    assert code != 2 and "meta-llama/Llama-3.1-8B-Instruct" in out and "KV" in out


def test_non_release_image_tags_follow_the_release_policy():
    from sched_reader.compat.releases import newest
    from sched_reader.models.spec_builder import build_spec
    from sched_reader.readers.raw import Hint, Origin, RawEngine

    def release_for(tag: str) -> str:
        raw = RawEngine(name="e", file="f", model=None, vllm_version=Hint(value=tag, origin=Origin(file="f", line=1)))
        return build_spec(raw, strict_model=False).vllm_version

    assert release_for("latest-nightly") == newest()  # moving tags: the newest known
    assert release_for("instinct_main") == newest()
    assert release_for("2025-05-27-v1") == default_release()  # dated/custom: the documented default
    assert release_for("0.10.2") == "0.10.2"
    from sched_reader.readers.images import vllm_version_from_image

    assert vllm_version_from_image("vllm/vllm-openai:v0.10.2-nixl-0.7.1") == "0.10.2"
    with pytest.raises(SchedReaderError):  # a bad --vllm on the command line is still exit 2
        build_spec(RawEngine(name="e", file="f"), vllm="banana")


def test_default_release_has_exact_data():
    from sched_reader.compat.matrix import entry

    e = entry(default_release())
    assert e and e.get("matrix") and not e.get("approximate")
