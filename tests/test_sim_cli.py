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
    assert "STATIC" in out and "CHUNKED" in out and "p99 ITL ms" in out


@pytest.mark.parametrize("bad", [["--policy", "fifo"], ["--request-rate", "-3"], ["--format", "yaml"],
                                 ["--workload", "/nonexistent/w.yaml"], ["--compare", "naive,bogus"]])
def test_bad_input_exits_2_with_one_line(capsys, bad):
    code, out, err = _run(capsys, ["simulate", *bad, *CMD])
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
