"""Helm values (production-stack, llm-d modelservice): expected values read by hand from
tests/data/deploy/helm-values/* and the chart templates cited in sched_reader/readers/data/chart_rendering.yaml."""

from pathlib import Path

from sched_reader.readers import read_path, read_text

DATA = Path(__file__).parents[1] / "data" / "deploy" / "helm-values"


def flags(engine):
    return [(s.flag, s.value, s.origin.line, s.origin.source) for s in engine.settings]


def test_basic_config_renders_negations_and_extra_args():
    [e] = read_path(DATA / "production-stack__values-02-basic-config.yaml")
    assert e.name == "llama3" and e.model.value == "meta-llama/Llama-3.1-8B-Instruct" and e.model.origin.line == 9
    assert flags(e) == [
        ("--no-enable-chunked-prefill", None, 21, "helm-field"),
        ("--no-enable-prefix-caching", None, 22, "helm-field"),
        ("--max-model-len", "4096", 23, "helm-field"),
        ("--dtype", "bfloat16", 24, "helm-field"),
        ("--gpu-memory-utilization", "0.8", 25, "helm-extra-args"),
    ]
    assert e.gpu_count.value == 1 and e.vllm_version.value == "latest"


def test_multiple_models_prefix_caching_unset_is_chart_default_off():
    llama, mistral = read_path(DATA / "production-stack__values-04-multiple-models.yaml")
    assert (llama.name, mistral.name) == ("llama3", "mistral")
    pc = [s for s in llama.settings if s.flag == "--no-enable-prefix-caching"]
    assert len(pc) == 1 and pc[0].origin.source == "chart-default"
    gmu = [s for s in mistral.settings if s.flag == "--gpu_memory_utilization"]  # the chart writes underscores
    assert gmu[0].value == "0.95" and gmu[0].origin.line == 39
    assert [s.value for s in llama.settings if s.flag == "--max_loras"] == ["4"]
    assert not any(s.flag == "--enable-lora" for s in llama.settings)  # maxLoras without enableLoRA


def test_raycluster_pipeline_parallel_and_gpu_split():
    [e] = read_path(DATA / "production-stack__values-15-a-minimal-pipeline-parallel-example-raycluster.yaml")
    f = {s.flag: s for s in e.settings}
    assert f["--pipeline-parallel-size"].value == "2" and f["--pipeline-parallel-size"].origin.line == 19
    assert f["--distributed-executor-backend"].value == "ray"
    assert f["--distributed-executor-backend"].origin.source == "chart-default"
    assert "--no-enable-prefix-caching" not in f  # the Ray template renders no negation
    assert e.gpu_count.value == 2  # head requestGPU 1 + 1 worker x requestGPU 1
    assert e.env["VLLM_USE_V1"].value == "0" and e.env["VLLM_USE_V1"].origin.source == "chart-default"


def test_v100_tp2_version_and_enforce_eager():
    [e] = read_path(DATA / "production-stack__values-25-v100-multi-gpu-tp2.yaml")
    f = {s.flag: s for s in e.settings}
    assert f["--tensor-parallel-size"].value == "2" and f["--tensor-parallel-size"].origin.line == 48
    assert f["--dtype"].value == "half" and f["--max-model-len"].value == "8192"
    assert f["--enforce-eager"].origin.source == "helm-extra-args" and f["--enforce-eager"].origin.line == 53
    assert e.vllm_version.value == "0.8.5" and e.gpu_count.value == 2
    assert e.env["VLLM_USE_V1"].value == "0"  # v0: "1" at line 44
    assert e.env["VLLM_ENABLE_CUDA_COMPATIBILITY"].value == "1"


def test_extra_args_override_typed_field_order():
    text = """\
servingEngineSpec:
  modelSpec:
  - name: m
    repository: vllm/vllm-openai
    tag: v0.9.2
    modelURL: org/m
    requestGPU: 1
    nodeSelectorTerms:
      - matchExpressions:
          - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-A100-SXM4-80GB]}
    vllmConfig:
      enablePrefixCaching: true
      gpuMemoryUtilization: 0.95
      extraArgs: ["--gpu-memory-utilization", "0.4"]
"""
    [e] = read_text(text, "values.yaml")
    gmu = [(s.flag, s.value, s.origin.line) for s in e.settings if "memory" in s.flag]
    assert gmu == [("--gpu_memory_utilization", "0.95", 13), ("--gpu-memory-utilization", "0.4", 14)]  # last wins
    assert [s.flag for s in e.settings][0] == "--enable-prefix-caching"
    assert e.gpu_type.value == "NVIDIA-A100-SXM4-80GB" and e.vllm_version.value == "0.9.2"


def test_llmd_modelservice_parallelism_implies_tp_and_gpus():
    [e] = read_path(DATA / "llm-d-modelservice__inference-scheduling_values.yaml")
    assert e.role == "decode" and e.model.value == "Qwen/Qwen3-32B"
    f = {s.flag: s for s in e.settings}
    assert f["--tensor-parallel-size"].value == "2" and f["--tensor-parallel-size"].origin.line == 36
    assert f["--gpu-memory-utilization"].value == "0.95" and f["--gpu-memory-utilization"].origin.line == 51
    assert e.gpu_count.value == 2 and e.replicas.value == 8
    assert e.vllm_version is None  # ghcr.io/llm-d/llm-d-cuda:v0.5.0 is llm-d's release, not vLLM's
    assert any("prefill" in n and "not deployed" in n for n in e.notes)
