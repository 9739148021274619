"""`sched-reader simulate` end to end (no /work/shared: the command line after -- is the input)."""

import json

import pytest

from sched_reader.cli.app import main

CMD = ["--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-num-seqs", "32"]


def _run(capsys, args):
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


def test_json_compare(capsys):
    code, out, err = _run(capsys, ["simulate", "--compare", "naive,continuous,vllm", "--num-prompts", "40",
                                   "--random-input-len", "256", "--random-output-len", "32", "--format", "json",
                                   *CMD])
    assert code in (0, None), err
    doc = json.loads(out)
    assert doc["schema_version"] == 1
    res = doc["engines"][0]["results"]
    assert list(res) == ["naive", "continuous", "vllm"]
    for r in res.values():
        assert r["completed"] == 40 and r["total_output_tokens"] == 40 * 32
        assert r["p99_itl_ms"] >= r["median_itl_ms"] > 0
        assert "batch_size" in r["timeseries"]
    assert res["continuous"]["request_throughput"] > res["naive"]["request_throughput"]


def test_text_table(capsys):
    code, out, _ = _run(capsys, ["simulate", "--compare", "static,chunked", "--num-prompts", "20", *CMD])
    assert code in (0, None)
    lines = out.splitlines()
    # engine and workload as plain lines above the table (no wrapped table title)
    assert lines[0] == "engine    command-line (<command line>)"
    assert lines[1] == "workload  random 1024 in / 128 out tokens, 20 prompts, all at once"
    assert lines[2].split() == ["metric", "STATIC", "CHUNKED"]
    rows = {ln.split("  ")[0]: ln.split() for ln in lines[3:] if ln and not ln.startswith("-")}
    # per-policy parameters: why the policies differ
    assert rows["max-num-seqs"][-2:] == ["32", "32"]
    assert rows["token budget"][-3:] == ["unlimited", "512", "(chunked)"]
    kv = rows["KV blocks of 16 tokens"][-2:]
    assert kv[0] == kv[1] and "," in kv[0]       # same budget for both, thousands separator
    # units in the cells, chosen per value
    assert rows["output throughput"][-1] == "tok/s"
    assert rows["p99 ITL"][-1] == "ms" and rows["request throughput"][-1] == "req/s"
    assert rows["mean TTFT"][-1] in ("ms", "s", "min")
    assert "p99 ITL ms" not in out and "Traceback" not in out


def test_text_is_deterministic(capsys):
    args = ["simulate", "--compare", "naive,vllm", "--num-prompts", "30", "--request-rate", "5", "--seed", "3", *CMD]
    first = _run(capsys, args)
    assert first == _run(capsys, args)
    assert first[0] in (0, None)


def test_long_latencies_read_in_seconds(capsys):
    # naive serves one request at a time: 200 x 1024-token prompts queue for well over 10 s
    code, out, _ = _run(capsys, ["simulate", "--policy", "naive", "--num-prompts", "200", *CMD])
    assert code in (0, None)
    [p99] = [ln for ln in out.splitlines() if ln.startswith("p99 TTFT")]
    value, unit = p99.split()[-2:]
    assert unit == "s" and float(value) >= 10 and "," not in value


@pytest.mark.parametrize("bad,needle", [
    (["--policy", "fifo"], "--policy: unknown policy 'fifo'"),
    (["--request-rate", "-3"], "--request-rate"),
    (["--request-rate", "fast"], "not a number"),
    (["--workload", "/nonexistent/w.yaml"], "/nonexistent/w.yaml"),
    (["--compare", "naive,bogus"], "unknown policy 'bogus'"),
    (["--compare", ","], "--compare"),
    (["--gpu", "H1000"], "H100"),
])
def test_bad_input_exits_2_with_one_line(capsys, bad, needle):
    code, out, err = _run(capsys, ["simulate", *bad, *CMD])
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sched-reader: error: ") and "Traceback" not in err
    assert needle in lines[0]
    assert out == ""


def test_bad_file_exits_2(capsys, tmp_path):
    code, out, err = _run(capsys, ["simulate", str(tmp_path / "missing.yaml")])
    assert code == 2 and err.startswith("sched-reader: error: ") and "missing.yaml" in err


@pytest.mark.parametrize("typo,suggestion", [("naive,continous", "continuous"), ("chunkd", "chunked"),
                                             ("VLLM", "vllm")])
def test_unknown_policy_did_you_mean(capsys, typo, suggestion):
    code, _, err = _run(capsys, ["simulate", "--compare", typo, *CMD])
    assert code == 2
    assert f"did you mean '{suggestion}'?" in err
    assert "choose from naive, static, continuous, chunked, vllm" in err


@pytest.mark.parametrize("bad", [["--format", "yaml"], ["--dataset-name", "alpaca"]])
def test_enum_options_reject_other_values(capsys, bad):
    code, out, err = _run(capsys, ["simulate", *bad, *CMD])
    assert code == 2 and out == ""
    assert "is not one of" in err and bad[0] in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and err.startswith("sched-reader: error: ")


def test_dataset_name_enum_and_short_format(capsys):
    code, out, err = _run(capsys, ["simulate", "--dataset-name", "sharegpt", "--num-prompts", "20", "-f", "json", *CMD])
    assert code in (0, None), err
    assert json.loads(out)["engines"][0]["results"]["vllm"]["completed"] == 20


def test_help_documents_options_exit_codes_and_examples(capsys):
    code, out, _ = _run(capsys, ["simulate", "--help"])
    assert code == 0
    flat = " ".join(out.split())
    assert "Exit codes: 0" in flat and "2 unreadable or invalid input" in flat
    assert out.count("sched-reader simulate ") >= 4          # usage line + 3 examples, kept on their own lines
    assert "GPU to assume" in flat and "vLLM release to check against" in flat and "local HF config.json" in flat
    assert "<text|json>" in out and "<random|sharegpt>" in out


def test_command_line_does_not_outlive_its_call(capsys):
    """`main` keeps the words after `--` for its own call only: a later call in the same process (an
    embedding program, another test driving the app) must not analyse this command line again."""
    from sched_reader.cli.common import COMMAND_LINE

    _run(capsys, ["simulate", "--num-prompts", "5", *CMD])
    assert COMMAND_LINE.get() is None
