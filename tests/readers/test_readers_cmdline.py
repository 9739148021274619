"""Shell scripts and argv: expected values read by hand from tests/data/deploy/cmdline/* (copied files:
original line N is line N+2)."""

from pathlib import Path

import pytest

from sched_reader.errors import InputError
from sched_reader.readers import read_command_line, read_path, read_text

DATA = Path(__file__).parents[1] / "data" / "deploy" / "cmdline"


def settings(engine, flag):
    return [s for s in engine.settings if s.flag == flag]


def one(engine, flag):
    found = settings(engine, flag)
    assert len(found) == 1, (flag, found)
    return found[0]


def test_medical_rag_vllm_serve_with_continuations():
    [e] = read_path(DATA / "Medical-Agentic-RAG__vlm_server.sh")  # the commented-out 2nd command is ignored
    assert e.model.value == "Qwen/Qwen3-VL-4B-Instruct" and e.model.origin.line == 5
    assert (one(e, "--tensor-parallel-size").value, one(e, "--tensor-parallel-size").origin.line) == ("1", 11)
    assert one(e, "--pipeline-parallel-size").value == "1"
    assert one(e, "--data-parallel-size").value == "1"
    assert (one(e, "--max-model-len").value, one(e, "--max-model-len").origin.line) == ("4096", 13)
    assert one(e, "--max-num-seqs").value == "256"
    assert (one(e, "--gpu-memory-utilization").value, one(e, "--gpu-memory-utilization").origin.line) == ("0.8", 15)
    assert one(e, "--served-model-name").origin.line == 16
    assert e.env["CUDA_VISIBLE_DEVICES"].value == "0" and e.env["CUDA_VISIBLE_DEVICES"].origin.line == 4
    assert e.gpu_count.value == 1 and e.gpu_count.origin.source == "inferred"
    assert e.unresolved == []
    # the commented-out command sets --tensor-parallel-size 2 and --dtype float32; neither may appear
    assert [s.value for s in settings(e, "--dtype")] == ["bfloat16"]


def test_inferencemax_heredoc_config_then_cli_and_unresolved_vars():
    [e] = read_path(DATA / "InferenceMAX-fork__gptoss_fp4_h100_docker.sh")
    flags = [s.flag for s in e.settings]
    # config.yaml written by the here-document (lines 14-18) comes first, then the command line (24-29)
    assert flags == ["--async-scheduling", "--no-enable-prefix-caching", "--cuda-graph-sizes",
                     "--max-num-batched-tokens", "--max-model-len", "--host", "--gpu-memory-utilization",
                     "--disable-log-requests"]
    assert one(e, "--max-model-len").value == 10240 and one(e, "--max-model-len").origin.line == 18
    assert one(e, "--max-model-len").origin.source == "config-file"
    assert one(e, "--no-enable-prefix-caching").value is True and one(e, "--no-enable-prefix-caching").origin.line == 15
    assert one(e, "--gpu-memory-utilization").value == "0.9" and one(e, "--gpu-memory-utilization").origin.line == 26
    assert one(e, "--disable-log-requests").value is None
    assert e.model is None
    unresolved = {(u.origin.key, u.origin.line) for u in e.unresolved}
    assert unresolved == {("model (positional)", 24), ("--port", 24), ("--tensor-parallel-size", 27),
                          ("--max-num-seqs", 28)}
    assert all("$" in u.text for u in e.unresolved)
    assert e.env["PYTHONNOUSERSITE"].value == "1"


def test_kvcached_variable_substitution_and_mixed_forms():
    [e] = read_path(DATA / "kvcached__start_vllm_server.sh")
    assert e.model.value == "meta-llama/Llama-3.2-1B"  # MODEL= assigned at line 13, used quoted at line 17
    assert e.model.origin.line == 17
    assert one(e, "--port").value == "8000" and one(e, "--port").origin.line == 21  # --port="$PORT", PORT=8000
    assert one(e, "--tensor-parallel-size").value == "1"
    assert one(e, "--gpu-memory-utilization").value == "0.5" and one(e, "--gpu-memory-utilization").origin.line == 20
    assert one(e, "--no-enable-prefix-caching").value is None
    assert e.env["VLLM_USE_V1"].value == "1" and e.env["VLLM_USE_V1"].origin.line == 9
    assert e.unresolved == []


def test_script_with_two_engines_and_config_file_on_disk(tmp_path):
    (tmp_path / "cfg.yaml").write_text("max-num-seqs: 64\nenable-prefix-caching: false\n")
    script = tmp_path / "run.sh"
    script.write_text(
        "#!/bin/bash\n"
        "TP=${TP:-2}\n"
        "CUDA_VISIBLE_DEVICES=0 vllm serve org/a --config cfg.yaml --max-num-seqs 32 &\n"
        "CUDA_VISIBLE_DEVICES=0 vllm serve org/b --tensor-parallel-size $TP --config missing.yaml > log 2>&1 &\n"
        "wait\n")
    a, b = read_path(script)
    assert (a.name, b.name) == ("run#1", "run#2")
    # config file values first (cfg.yaml lines 1-2), then the command line's --max-num-seqs (wins)
    assert [(s.flag, s.value, s.origin.line) for s in a.settings] == [
        ("--max-num-seqs", 64, 1), ("--enable-prefix-caching", False, 2), ("--max-num-seqs", "32", 3)]
    assert a.settings[0].origin.file.endswith("cfg.yaml")
    assert one(b, "--tensor-parallel-size").value == "2"  # ${TP:-2}: default used
    assert [u.origin.key for u in b.unresolved] == ["--config"] and "not found" in b.unresolved[0].reason
    assert a.shared_gpu_group == b.shared_gpu_group == "CUDA_VISIBLE_DEVICES=0"
    assert not any(s.flag == "2" or s.value == "1" for s in b.settings)  # 2>&1 is not an argument


def test_docker_run_gives_version_gpus_and_args():
    text = ("docker run --runtime nvidia --gpus '\"device=0,1\"' -v ~/.cache:/root/.cache -p 8000:8000 \\\n"
            "  --ipc=host vllm/vllm-openai:v0.10.1.1 \\\n"
            "  --model mistralai/Mistral-7B-v0.1 --tensor-parallel-size 2\n")
    [e] = read_text(text, "run.sh")
    assert e.vllm_version.value == "0.10.1.1" and e.vllm_version.origin.line == 2
    assert e.gpu_count.value == 2
    assert e.model.value == "mistralai/Mistral-7B-v0.1" and e.model.origin.line == 3
    assert one(e, "--tensor-parallel-size").value == "2"


def test_docker_run_image_then_vllm_serve_keeps_the_image_release_devices_and_env():
    # AMD's rocm/vllm images have no vLLM entrypoint: the command is written after the image; the image tag
    # names the release (vllm_0.9.1) and the build date (20250702, kept as a local version label: the ROCm/vllm fork
    # build runs code newer than 0.9.1, compat/rocm_builds.py), --device /dev/kfd gives all GPUs, -e / --env reach
    # the engine
    text = ("docker run --device /dev/kfd --device /dev/dri -e VLLM_ROCM_USE_AITER=1 --env VLLM_USE_V1=1 \\\n"
            "  rocm/vllm:rocm6.4.1_vllm_0.9.1_20250702 \\\n"
            "  vllm serve Qwen/Qwen3-8B --max-num-seqs 128\n")
    [e] = read_text(text, "run.sh")
    assert e.vllm_version.value == "0.9.1+rocm.20250702" and e.vllm_version.origin.line == 2
    assert e.env["VLLM_ROCM_USE_AITER"].value == "1" and e.env["VLLM_USE_V1"].value == "1"
    assert e.gpu_count.value == "all"
    assert e.model.value == "Qwen/Qwen3-8B" and one(e, "--max-num-seqs").value == "128"


def test_read_command_line_forms():
    [e] = read_command_line(["vllm", "serve", "MODEL", "--tensor-parallel-size", "2", "--max_num_seqs", "8",
                             "--enforce-eager", "--max-model-len=4096", "--cuda-graph-sizes", "1", "2", "4"])
    assert e.model.value == "MODEL"
    assert [(s.flag, s.value) for s in e.settings] == [
        ("--tensor-parallel-size", "2"), ("--max_num_seqs", "8"), ("--enforce-eager", None),
        ("--max-model-len", "4096"), ("--cuda-graph-sizes", ["1", "2", "4"])]
    [e] = read_command_line(["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "X", "--seed", "-1"])
    assert e.model.value == "X" and one(e, "--seed").value == "-1"
    [e] = read_command_line(["--model", "Y", "--max-num-seqs", "4"])
    assert e.model.value == "Y" and one(e, "--max-num-seqs").value == "4"
    # positional model wins over --model for vllm serve
    [e] = read_command_line(["vllm", "serve", "--model", "A", "B"])
    assert e.model.value == "B" and any("overridden" in n for n in e.notes)


def test_read_command_line_rejects_non_vllm():
    with pytest.raises(InputError) as err:
        read_command_line(["python", "train.py", "--lr", "1"])
    assert err.value.exit_code == 2 and "no vLLM server command" in str(err.value)
    with pytest.raises(InputError):
        read_command_line([])


def test_unresolved_command_substitution_is_never_run(tmp_path):
    [e] = read_text("vllm serve $(cat model.txt) --max-model-len `echo 4096` --port ${PORT}\n", "x.sh")
    assert e.model is None
    reasons = " ".join(u.reason for u in e.unresolved)
    assert "never run" in reasons and len(e.unresolved) == 3


def test_attached_optimization_level_is_read_as_argparse_does():
    """`vllm serve M -O3` (vLLM's docs spell it so): argparse gives a one-letter option the rest of the word as
    its value, so -O3 is -O with value 3, never a flag missing its value."""
    from sched_reader.analyzers.pipeline import build_specs

    [e] = read_command_line(["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "-O3", "-tp", "1"])
    assert (one(e, "-O").value, one(e, "-tp").value) == ("3", "1")
    # 0.19.0 has --optimization-level (its parser rewrites -O3 to it); 0.8.5 reads -O as --compilation-config
    [new] = build_specs([], ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "-O3"], gpu="H100", vllm="0.19.0")
    [old] = build_specs([], ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "-O3"], gpu="H100", vllm="0.8.5")
    assert new.args["optimization_level"].value == 3
    assert "compilation_config" in old.args
