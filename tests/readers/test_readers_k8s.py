"""Kubernetes manifests: expected values read by hand from tests/data/deploy/k8s/* (copied files: original
line N is line N+2)."""

from pathlib import Path

from sched_reader.readers import read_path, read_text

DATA = Path(__file__).parents[1] / "data" / "deploy" / "k8s"


def one(engine, flag):
    found = [s for s in engine.settings if s.flag == flag]
    assert len(found) == 1, (flag, found)
    return found[0]


def test_kserve_raw_container_api_server():
    [e] = read_path(DATA / "kserve__vllm_raw_container_isvc.yaml")
    assert e.name == "llama-2-7b"
    assert e.model.value == "/mnt/models" and e.model.origin.line == 13
    assert one(e, "--port").value == "8080"
    assert e.gpu_count.value == 1 and e.gpu_count.origin.line == 28  # limits: nvidia.com/gpu: "1"
    assert e.vllm_version is None  # kserve/vllmserver:latest is not a vLLM image
    assert any("legacy" in n for n in e.notes)


def test_kserve_hf_runtime_cpu_no_gpu_and_kserve_args_kept_out():
    [e] = read_path(DATA / "kserve__hf_runtime_vllm_cpu_isvc.yaml")
    assert e.model.value == "Qwen/Qwen2-0.5B-Instruct" and e.model.origin.line == 16  # storageUri hf://
    assert [s.flag for s in e.settings] == ["--dtype", "--max-model-len"]
    assert one(e, "--max-model-len").value == "2048" and one(e, "--max-model-len").origin.line == 15
    assert e.gpu_count.value == 0
    assert e.env["VLLM_CPU_KVCACHE_SPACE"].value == "4" and e.env["VLLM_CPU_KVCACHE_SPACE"].origin.line == 18
    assert any("--model_name=qwen2" in n for n in e.notes)


def test_kserve_multinode_workerspec_tp_pp_gpus():
    [e] = read_path(DATA / "kserve__multinode_workerspec_isvc.yaml")
    assert one(e, "--pipeline-parallel-size").value == "2" and one(e, "--pipeline-parallel-size").origin.line == 18
    assert one(e, "--tensor-parallel-size").value == "1" and one(e, "--tensor-parallel-size").origin.line == 19
    assert e.gpu_count.value == 2  # KServe: total GPUs = TP x PP = 1 x 2
    assert e.model.value == "pvc://llama-3-8b-pvc/hf/8b_instruction_tuned"


def test_kubeai_70b_profile_and_abbreviated_flag():
    [e] = read_path(DATA / "kubeai__llama-3.1-70b-instruct-fp8-h100.yaml")
    assert e.model.value == "neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8" and e.model.origin.line == 10
    assert one(e, "--tensor-parallel-size").value == "2" and one(e, "--tensor-parallel-size").origin.line == 17
    assert one(e, "--max-model-len").value == "65536"
    assert one(e, "--max-num-batched-token").value == "65536"  # kept as written; the builder resolves prefixes
    assert one(e, "--enable-prefix-caching").value is None
    assert one(e, "--gpu-memory-utilization").value == "0.9"
    assert (e.gpu_count.value, e.gpu_type.value, e.gpu_count.origin.line) == (2, "nvidia-gpu-h100", 21)


def test_kubeai_405b_tp8_fp8_kv():
    [e] = read_path(DATA / "kubeai__llama-3.1-405b-instruct-fp8-h100.yaml")
    assert one(e, "--tensor-parallel-size").value == "8"
    assert one(e, "--kv-cache-dtype").value == "fp8" and one(e, "--kv-cache-dtype").origin.line == 20
    assert e.gpu_count.value == 8


def test_aibrix_deployment_multidoc_with_comments():
    [e] = read_path(DATA / "aibrix__quickstart_model_deployment.yaml")  # Deployment + Service
    assert e.name == "deepseek-r1-distill-llama-8b"
    assert e.model.value == "deepseek-ai/DeepSeek-R1-Distill-Llama-8B" and e.model.origin.line == 32
    assert one(e, "--max-model-len").value == "12288" and one(e, "--max-model-len").origin.line == 37
    assert one(e, "--served-model-name").value == "deepseek-r1-distill-llama-8b"  # comment between flag and value
    assert e.vllm_version.value == "0.7.1" and e.vllm_version.origin.line == 39
    assert e.gpu_count.value == 1 and e.replicas.value == 1


def test_aibrix_stormservice_roles_sh_c():
    prefill, decode = read_path(DATA / "aibrix__pd_stormservice.yaml")
    assert (prefill.role, decode.role) == ("prefill", "decode")
    assert prefill.model.value == "deepseek-ai/DeepSeek-R1-Distill-Llama-8B" and prefill.model.origin.line == 41
    kv = one(prefill, "--kv-transfer-config")
    assert kv.value == '{"kv_connector":"NixlConnector","kv_role":"kv_both"}' and kv.origin.line == 43
    assert one(decode, "--kv-transfer-config").origin.line == 96
    assert one(prefill, "--port").value == "8000"
    assert prefill.vllm_version.value == "0.9.1" and prefill.gpu_count.value == 1 and decode.gpu_count.value == 1
    assert prefill.env["VLLM_NIXL_SIDE_CHANNEL_PORT"].value == "5558"


def test_llmd_patch_decode_positional_model_and_json_item():
    [e] = read_path(DATA / "llm-d__pd_patch-decode.yaml")
    assert e.role == "decode"
    assert e.model.value == "openai/gpt-oss-120b" and e.model.origin.line == 15
    assert one(e, "--tensor-parallel-size").value == "4"
    assert one(e, "--block-size").value == "128" and one(e, "--block-size").origin.line == 18
    kv = one(e, "--kv-transfer-config")
    assert kv.value == '{"kv_connector":"NixlConnector", "kv_role":"kv_both"}' and kv.origin.line == 19
    assert one(e, "--no-disable-hybrid-kv-cache-manager").value is None
    assert e.gpu_count.value == 4 and e.replicas.value == 2


def test_sidecar_skipped_gpu_type_from_affinity_and_lws():
    text = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: big}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
                - matchExpressions:
                    - key: nvidia.com/gpu.product
                      operator: In
                      values: [NVIDIA-H100-80GB-HBM3]
        containers:
          - name: vllm
            image: vllm/vllm-openai:v0.11.0rc2
            command: ["sh", "-c", "vllm serve org/m --tensor-parallel-size 8 --pipeline-parallel-size 2"]
            resources: {limits: {nvidia.com/gpu: 8}}
          - name: proxy
            image: nginx
            args: ["--port", "80"]
"""
    [e] = read_text(text, "lws.yaml")
    assert e.name == "big" and e.vllm_version.value == "0.11.0rc2"
    assert e.gpu_type.value == "NVIDIA-H100-80GB-HBM3" and e.gpu_type.origin.line == 15
    assert e.gpu_count.value == 16  # 2 pods x 8 GPUs
    assert any("'proxy'" in n for n in e.notes)
