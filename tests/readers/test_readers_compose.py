"""docker compose: expected values read by hand from tests/data/deploy/compose/*."""

from pathlib import Path

from sched_reader.readers import read_path, read_text

DATA = Path(__file__).parents[1] / "data" / "deploy" / "compose"


def one(engine, flag):
    found = [s for s in engine.settings if s.flag == flag]
    assert len(found) == 1, (flag, found)
    return found[0]


def test_h2ogpt_entrypoint_python_command_list_tp2():
    [e] = read_path(DATA / "h2ogpt__docker-compose-vllm.yml")  # the h2ogpt service is not vLLM
    assert e.name == "vllm" and e.model.value == "h2oai/h2ogpt-4096-llama2-7b-chat" and e.model.origin.line == 48
    assert one(e, "--tensor-parallel-size").value == "2" and one(e, "--tensor-parallel-size").origin.line == 50
    assert one(e, "--trust-remote-code").value is None
    assert e.gpu_count.value == 2 and e.gpu_count.origin.line == 61
    assert not any(s.flag.startswith("--base_model") for s in e.settings)
    assert any("h2ogpt" in n for n in e.notes)


def test_chatbot_string_command_two_engines_share_gpu0():
    a, b = read_path(DATA / "Chatbot_IA_Ceprud__docker-compose-vllm.yml")
    assert (a.name, b.name) == ("vllm-openai", "vllm-openai-embeddings")
    assert a.model.value == "/models/TinyLlama--TinyLlama-1.1B-Chat-v1.0" and a.model.origin.line == 21
    assert one(a, "--gpu-memory-utilization").value == "0.7" and one(b, "--gpu-memory-utilization").value == "0.2"
    assert one(a, "--max-num-seqs").value == "8"
    assert a.shared_gpu_group == b.shared_gpu_group is not None
    assert any("add up" in n for n in a.notes)
    assert a.vllm_version.value == "latest"


def test_multi_model_flow_list_count_1_share_first_gpu():
    engines = read_path(DATA / "multi-model-server__docker-compose-vllm.yml")
    assert [e.name for e in engines] == ["qwen-model", "llama-model", "gemma-model"]  # nginx gateway skipped
    assert [one(e, "--gpu-memory-utilization").value for e in engines] == ["0.33", "0.33", "0.30"]
    assert [one(e, "--gpu-memory-utilization").origin.line for e in engines] == [19, 49, 78]
    assert {e.shared_gpu_group for e in engines} == {"compose:devices=0"}
    assert all(e.gpu_count.value == 1 for e in engines)
    assert one(engines[0], "--trust-remote-code").value is None


def test_compose_interpolation_default_and_unresolved():
    text = """\
services:
  llm:
    image: vllm/vllm-openai:v0.8.5.post1
    command: ["--model", "${MODEL:-org/m}", "--max-model-len", "$LEN", "--port", "$$PORT"]
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}
"""
    [e] = read_text(text, "docker-compose.yml")
    assert e.model.value == "org/m" and e.vllm_version.value == "0.8.5.post1"
    assert [u.origin.key for u in e.unresolved] == ["--max-model-len"]
    assert one(e, "--port").value == "$PORT"  # $$ is compose's escape for a literal $
    assert e.gpu_count.value == "all"
