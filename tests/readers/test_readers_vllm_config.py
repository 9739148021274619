"""vLLM --config YAML and sched-reader's own file."""

from pathlib import Path

import pytest

from sched_reader.errors import InputError
from sched_reader.readers import read_path, read_text

ROOT = Path(__file__).parents[2]
DATA = Path(__file__).parents[1] / "data" / "deploy" / "vllm-config"


def test_llama33_recipe_negated_key_and_yaml_types():
    [e] = read_path(DATA / "recipes__Llama3.3_Hopper.yaml")
    assert e.model is None
    assert [(s.flag, s.value, s.origin.line) for s in e.settings] == [
        ("--kv-cache-dtype", "fp8", 3), ("--async-scheduling", True, 4),
        ("--no-enable-prefix-caching", True, 5), ("--max-num-batched-tokens", 8192, 6)]
    assert all(s.origin.source == "config-file" for s in e.settings)


def test_gpt_oss_recipe_json_string_value():
    [e] = read_path(DATA / "recipes__GPT-OSS_Hopper.yaml")
    cc = e.settings[0]
    assert (cc.flag, cc.value, cc.origin.line) == ("--compilation-config", '{"cudagraph_mode":"PIECEWISE"}', 3)
    assert [s.value for s in e.settings if s.flag == "--max-model-len"] == [10240]
    assert [s.value for s in e.settings if s.flag == "--cuda-graph-sizes"] == [2048]


def test_vllm_test_config_snake_case_and_model():
    [e] = read_path(DATA / "vllm-tests__test_config_with_model.yaml")
    assert e.model.value == "config-model" and e.model.origin.line == 4
    assert [(s.flag, s.value) for s in e.settings] == [
        ("--port", 12312), ("--served_model_name", "mymodel"), ("--tensor_parallel_size", 2),
        ("--trust_remote_code", True)]


def test_dict_list_and_false_values_keep_types():
    [e] = read_text("enable-prefix-caching: false\ncompilation-config: {level: 3}\ncuda-graph-sizes: [1, 2]\n", "c.yaml")
    assert [s.value for s in e.settings] == [False, {"level": 3}, [1, 2]]


def test_example_own_files():
    [a] = read_path(ROOT / "examples" / "llama3-8b-h100.yaml")
    assert a.model.value == "meta-llama/Llama-3.1-8B-Instruct"
    assert (a.gpu_type.value, a.gpu_count.value, a.vllm_version.value) == ("h100-sxm5-80gb", 1, "0.19.0")
    assert a.gpu_type.origin.source == "sched-reader" and a.workload["arrival"] == {"process": "poisson", "rate": 8}
    assert [s.value for s in a.settings if s.flag == "--max-model-len"] == ["8192"]
    [b] = read_path(ROOT / "examples" / "llama70b-fp8-tp4.yaml")
    assert b.model.value == "RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic" and b.gpu_count.value == 4
    assert [s.value for s in b.settings if s.flag == "--tensor-parallel-size"] == [4]


def test_own_file_deploy_and_config_references(tmp_path):
    (tmp_path / "c.yaml").write_text("max-model-len: 2048\n")
    (tmp_path / "own.yaml").write_text("sched_reader: 1\nmodel: org/m\nconfig: c.yaml\nhardware: {gpu: l4, count: 1}\n")
    [e] = read_path(tmp_path / "own.yaml")
    assert e.model.value == "org/m" and e.settings[0].value == 2048 and e.gpu_type.value == "l4"
    (tmp_path / "d.yaml").write_text("sched_reader: 1\nvllm_version: '0.9.0'\ndeploy: ../d/x.sh\n")
    with pytest.raises(InputError) as err:
        read_path(tmp_path / "d.yaml")
    assert err.value.key == "deploy" and err.value.line == 3


@pytest.mark.parametrize("text,key,words", [
    ("sched_reader: 2\nserve: vllm serve m\n", "sched_reader", "version"),
    ("sched_reader: 1\nserve: vllm serve m\ngpu: h100\n", "gpu", "unknown key"),
    ("sched_reader: 1\n", None, "exactly one"),
    ("sched_reader: 1\nserve: echo hi\n", "serve", "found 0"),
    ("sched_reader: 1\nserve: vllm serve m\nhardware: {count: 0}\n", "hardware.count", "positive"),
])
def test_own_file_errors(text, key, words):
    with pytest.raises(InputError) as err:
        read_text(text, "own.yaml")
    assert err.value.key == key and words in str(err.value) and err.value.exit_code == 2
