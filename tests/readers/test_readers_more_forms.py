"""Forms and accelerators of issue 10 without a real fixture small enough to copy: each file below is written
the way the tool's own documentation shows it (GitLab CI, Slurm + apptainer, compose build context, Intel
Gaudi, TPU resources); the expected values are read off the text by hand."""

from __future__ import annotations

from sched_reader.analyzers.pipeline import build_specs


def _one(tmp_path, name: str, text: str):
    p = tmp_path / name
    p.write_text(text)
    return build_specs([str(p)], None, strict_model=False)


def test_gitlab_ci_script_lines(tmp_path):
    [s] = _one(tmp_path, ".gitlab-ci.yml",
               "variables:\n  MODEL: Qwen/Qwen2.5-7B-Instruct\nserve:\n  stage: test\n  script:\n"
               "    - pip install vllm==0.10.1\n    - vllm serve $MODEL --max-model-len 4096 --tensor-parallel-size 2\n")
    assert s.model_name == "Qwen/Qwen2.5-7B-Instruct" and s.line == 7
    assert s.args["max_model_len"].value == 4096 and s.effective.tensor_parallel_size == 2


def test_slurm_apptainer_gpus_per_node_times_nodes(tmp_path):
    [s] = _one(tmp_path, "serve.sbatch",
               "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=h100:4\n"
               "srun apptainer exec --nv vllm.sif vllm serve meta-llama/Llama-3.1-70B-Instruct "
               "--tensor-parallel-size 4 --pipeline-parallel-size 2\n")
    assert s.hardware.count == 8 and "H100" in s.hardware.gpu.name and not s.hardware.gpu_inferred
    assert (s.effective.tensor_parallel_size, s.effective.pipeline_parallel_size) == (4, 2)


def test_compose_build_context_from_vllm_image(tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM vllm/vllm-openai:v0.9.2\nRUN pip install extra\n")
    [s] = _one(tmp_path, "docker-compose.yml",
               "services:\n  api:\n    build: .\n    image: myorg/llm-api:dev\n"
               "    command: [--model, Qwen/Qwen2.5-7B-Instruct, --max-num-seqs, '64']\n")
    assert s.vllm_version == "0.9.2" and s.args["max_num_seqs"].value == 64
    assert any("FROM vllm/vllm-openai:v0.9.2" in n for n in s.notes)


def test_gaudi_resource_is_named_never_an_h100(tmp_path):
    [s] = _one(tmp_path, "gaudi.yaml",
               "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: g}\nspec:\n  template:\n    spec:\n"
               "      containers:\n      - name: vllm\n        image: vault.habana.ai/gaudi-docker/1.21.0/vllm:latest\n"
               "        command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct]\n"
               "        resources:\n          limits:\n            habana.ai/gaudi: 2\n")
    assert s.hardware.count == 2 and not s.hardware.modelled and "Gaudi" in s.hardware.accelerator


def test_llmd_values_intel_gaudi_accelerator_type(tmp_path):
    specs = _one(tmp_path, "values.yaml",
                 "modelArtifacts:\n  uri: hf://Qwen/Qwen3-0.6B\n  name: Qwen/Qwen3-0.6B\naccelerator:\n  type: intel-gaudi\n"
                 "decode:\n  create: true\n  parallelism:\n    tensor: 1\n  containers:\n  - name: vllm\n"
                 "    modelCommand: vllmServe\n    args: [--max-model-len, '4096']\n")
    assert specs and all(not s.hardware.modelled and "Gaudi" in s.hardware.accelerator for s in specs)


def test_tpu_resource_with_gke_label(tmp_path):
    [s] = _one(tmp_path, "tpu.yaml",
               "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: t}\nspec:\n  template:\n    spec:\n"
               "      nodeSelector:\n        cloud.google.com/gke-tpu-accelerator: tpu-v5-lite-podslice\n"
               "      containers:\n      - name: vllm\n        image: vllm/vllm-tpu:nightly\n"
               "        command: [vllm, serve, google/gemma-3-27b-it, --tensor-parallel-size, '4']\n"
               "        resources:\n          limits:\n            google.com/tpu: '4'\n")
    assert s.hardware.count == 4 and not s.hardware.modelled
    assert "TPU" in s.hardware.accelerator and "tpu-v5-lite-podslice" in s.hardware.accelerator


def test_helm_template_value_is_never_a_model(tmp_path):
    [s] = _one(tmp_path, "rt.yaml",
               "apiVersion: serving.kserve.io/v1alpha1\nkind: ServingRuntime\nmetadata: {name: vllm}\nspec:\n"
               "  containers:\n  - name: kserve-container\n    image: vllm/vllm-openai:v0.10.1\n"
               "    command: [python, -m, vllm.entrypoints.openai.api_server]\n"
               "    args: ['--model={{ .Values.model }}', '--max-model-len=4096']\n")
    assert s.arch is None and s.args["max_model_len"].value == 4096
    assert any("{{" in u.text for u in s.unresolved)


def test_helm_chart_template_with_the_vllm_command_inline(tmp_path):
    [s] = _one(tmp_path, "deployment.yaml",
               "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ include \"chart.fullname\" . }}\n"
               "  labels:\n    {{- include \"chart.labels\" . | nindent 4 }}\nspec:\n"
               "  replicas: {{ .Values.replicaCount }}\n  template:\n    spec:\n      containers:\n"
               "        - name: vllm\n          image: \"vllm/vllm-openai:{{ .Values.image.tag }}\"\n"
               "          command: [\"vllm\", \"serve\", \"{{ .Values.model }}\"]\n"
               "          args: [--gpu-memory-utilization, \"0.85\"]\n"
               "          {{- if .Values.gpus }}\n          resources:\n            limits:\n"
               "              nvidia.com/gpu: {{ .Values.gpus }}\n          {{- end }}\n")
    assert s.args["gpu_memory_utilization"].value == 0.85 and s.args["gpu_memory_utilization"].origin.line == 15
    assert not s.model_name and any("{{ .Values.model }}" in u.text for u in s.unresolved)
    assert s.vllm_version_requested is None and any("template" in n for n in s.notes)
