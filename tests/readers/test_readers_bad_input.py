"""Bad input never produces a traceback: every case raises InputError (exit code 2) naming the file,
the line where known, and a hint. Files in tests/data/bad/ were written by hand for these cases."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from sched_reader.errors import InputError
from sched_reader.readers import read_command_line, read_path, read_text
from sched_reader.readers.source import MAX_BYTES

BAD = Path(__file__).parents[1] / "data" / "bad"


def expect(path, *words, line=None):
    with pytest.raises(InputError) as err:
        read_path(path)
    e = err.value
    assert e.exit_code == 2 and e.file == str(path)
    for w in words:
        assert w in str(e), (w, str(e))
    if line is not None:
        assert e.line == line
    return e


def test_missing_file(tmp_path):
    expect(tmp_path / "nope.yaml", "file not found")


def test_directory(tmp_path):
    expect(tmp_path, "directory")


def test_empty_file():
    expect(BAD / "empty.yaml", "empty")


def test_whitespace_only_file(tmp_path):
    p = tmp_path / "w.yaml"
    p.write_text("\n   \n\t\n")
    expect(p, "empty")


def test_binary_file():
    expect(BAD / "binary.yaml", "binary")


def test_invalid_utf8(tmp_path):
    p = tmp_path / "latin1.sh"
    p.write_bytes(b"vllm serve m\n--x caf\xe9\n")
    expect(p, "UTF-8", line=2)


def test_malformed_yaml_reports_line():
    # the flow sequence opened at line 4 is never closed; PyYAML stops at end of input (line 5)
    e = expect(BAD / "malformed.yaml", "invalid YAML")
    assert e.line in (4, 5) and e.hint


def test_alias_bomb_rejected_quickly():
    expect(BAD / "alias_bomb.yaml", "alias")


def test_recursive_alias(tmp_path):
    p = tmp_path / "r.yaml"
    p.write_text("a: &x [1, *x]\n")
    expect(p, "recursive")


def test_top_level_list_is_not_a_mapping():
    expect(BAD / "list.yaml", "mapping", "list")


def test_no_engine_in_manifest():
    expect(BAD / "no_engine_k8s.yaml", "no vLLM engine", "looked for")


def test_no_engine_in_script():
    e = expect(BAD / "no_engine.sh", "no vLLM server command")
    assert "vllm serve" in e.hint


def test_unknown_yaml_shape():
    expect(BAD / "not_deploy.yaml", "no vLLM engine")


def test_oversized_file_is_rejected_before_reading(tmp_path):
    p = tmp_path / "big.yaml"
    with open(p, "wb") as f:
        f.truncate(MAX_BYTES + 1)  # sparse: stat says > 10 MiB, nothing is read
    expect(p, "limit")


def test_unsafe_tag_is_not_evaluated(tmp_path):
    p = tmp_path / "evil.yaml"
    p.write_text("max-model-len: !!python/object/apply:os.system ['echo hi']\n")
    expect(p, "YAML tag", line=1)


def test_config_key_not_a_flag_name():
    with pytest.raises(InputError) as err:
        read_text("max-model-len: 1\n? [a, b]\n: 2\n", "c.yaml")
    assert err.value.line == 2


def test_deeply_nested_yaml(tmp_path):
    p = tmp_path / "deep.yaml"
    p.write_text("a: " + "[" * 5000 + "]" * 5000 + "\n")
    expect(p, "")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_random_text_raises_only_input_error(text):
    try:
        engines = read_text(text, "fuzz.txt")
    except InputError as e:
        assert e.exit_code == 2
    else:
        assert isinstance(engines, list) and engines


_TOKENS = st.sampled_from(["vllm", "serve", "--model", "m", "--x=1", "$V", "${V:-1}", "'", '"', "\\\n", "#",
                           "&&", ";", "<<EOF\n", "EOF\n", "\n", "-m", "vllm.entrypoints.openai.api_server",
                           "$(x)", "`", "docker", "run", "vllm/vllm-openai:v1", "2>&1", "--", "-1", " "])


@settings(max_examples=200, deadline=None)
@given(st.lists(_TOKENS, max_size=40))
def test_random_shell_like_text_raises_only_input_error(parts):
    try:
        read_text(" ".join(parts), "fuzz.sh")
    except InputError:
        pass


_YAML = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["services", "command", "image", "kind", "apiVersion", "spec", "containers", "args",
                         "servingEngineSpec", "modelSpec", "vllmConfig", "decode", "sched_reader", "model",
                         "max-model-len", "deploy", "resources", "limits", "nvidia.com/gpu", "env"]),
        inner, max_size=4),
    max_leaves=25)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_YAML)
def test_random_yaml_structures_raise_only_input_error(data):
    import yaml

    text = yaml.safe_dump(data)
    try:
        read_text(text, "fuzz.yaml")
    except InputError:
        pass


@given(st.binary(max_size=200))
@settings(max_examples=100, deadline=None)
def test_random_bytes_raise_only_input_error(tmp_path_factory, data):
    p = tmp_path_factory.mktemp("b") / "x.bin"
    p.write_bytes(data)
    try:
        read_path(p)
    except InputError:
        pass


@given(st.lists(st.text(max_size=12), max_size=12))
@settings(max_examples=100, deadline=None)
def test_random_argv_raises_only_input_error(argv):
    try:
        read_command_line(argv)
    except InputError:
        pass
