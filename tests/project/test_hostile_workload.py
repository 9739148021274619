"""Workload files, traces and the bench flags of simulate/diagnose over a bound (issue 16).

Each case failed before its fix (internal error, a Python exception name, a hang or memory exhaustion)."""

from __future__ import annotations

import os
import sys

import pytest

from hostile import SERVE, bounded, one_line_error, usage_error


BIG = "9" * 5000


DEEP_JSON = "[" * 20000 + "]" * 20000


def test_num_prompts_of_5000_digits_in_workload(run_cli, tmp_path):
    w = tmp_path / "w.yaml"
    w.write_text(f"num_prompts: {BIG}\nclasses: [{{input: 10, output: 10}}]\n")
    one_line_error(*run_cli("simulate", "--workload", str(w), *SERVE)[::2], f"{w}:1:")


def test_deep_trace_line(run_cli, tmp_path):
    (tmp_path / "t.jsonl").write_text('{"prompt_len": 10, "output_len": 10}\n' + DEEP_JSON + "\n")
    (tmp_path / "w.yaml").write_text("trace: t.jsonl\n")
    one_line_error(*run_cli("simulate", "--workload", str(tmp_path / "w.yaml"), *SERVE)[::2], "t.jsonl:2:",
                   "nested more than")


def test_workload_yaml_10000_deep(run_cli, tmp_path):
    p = tmp_path / "w.yaml"
    p.write_text("classes:\n  - " + "[" * 10000 + "]" * 10000 + "\n")
    with bounded(10):
        one_line_error(*run_cli("simulate", "--workload", str(p), *SERVE)[::2], f"{p}:2:")


@pytest.mark.parametrize("cmd", ["simulate", "diagnose"])
@pytest.mark.parametrize("rate", ["1e-9", "1e-300", "nan", "-inf"])
def test_request_rate_out_of_range(run_cli, cmd, rate):
    with bounded(20):
        code, _, err = run_cli(cmd, "--request-rate", rate, "--num-prompts", "5", *SERVE)
    one_line_error(code, err, "--request-rate")


@pytest.mark.parametrize("field,value,needle", [
    ("prompt_len", "Infinity", "Infinity"),
    ("prompt_len", "1e308", "prompt_len"),
    ("output_len", "NaN", "NaN"),
    ("prefix_id", "99999999999999999999", "digit"),
    ("arrival_s", "1e308", "arrival_s"),
])
def test_trace_numbers_out_of_range(run_cli, tmp_path, field, value, needle):
    row = {"prompt_len": "10", "output_len": "10", "prefix_len": "4", field: value}
    (tmp_path / "t.jsonl").write_text("{" + ", ".join(f'"{k}": {v}' for k, v in row.items()) + "}\n")
    (tmp_path / "w.yaml").write_text("trace: t.jsonl\n")
    with bounded(20):
        code, _, err = run_cli("simulate", "--workload", str(tmp_path / "w.yaml"), *SERVE)
    one_line_error(code, err, "t.jsonl:1:", needle)


@pytest.mark.parametrize("cmd", ["simulate", "diagnose"])
def test_random_output_len_of_20_digits(run_cli, cmd):
    with bounded(20):
        code, _, err = run_cli(cmd, "--random-output-len", "99999999999999999999", *SERVE)
    usage_error(code, err, "--random-output-len")


def test_seed_flag_minus_one(run_cli):
    usage_error(*run_cli("simulate", "--seed", "-1", "--num-prompts", "5", *SERVE)[::2], "--seed")


def test_seed_minus_one_in_workload(run_cli, tmp_path):
    p = tmp_path / "w.yaml"
    p.write_text("num_prompts: 5\nseed: -1\nclasses: [{input: 10, output: 10}]\n")
    one_line_error(*run_cli("simulate", "--workload", str(p), *SERVE)[::2], f"{p}:2:", "seed")


def test_workload_with_latin1_bytes(run_cli, tmp_path):
    p = tmp_path / "w.yaml"
    p.write_bytes(b"num_prompts: 5\nclasses: [{name: caf\xe9, input: 10, output: 10}]\n")
    one_line_error(*run_cli("simulate", "--workload", str(p), *SERVE)[::2], f"{p}:2:", "UTF-8")


def test_trace_with_latin1_bytes(run_cli, tmp_path):
    (tmp_path / "t.jsonl").write_bytes(b'{"prompt_len": 10, "output_len": 10}\n{"x": "caf\xe9"}\n')
    (tmp_path / "w.yaml").write_text("trace: t.jsonl\n")
    one_line_error(*run_cli("simulate", "--workload", str(tmp_path / "w.yaml"), *SERVE)[::2], "t.jsonl:2:",
                   "UTF-8")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_trace_dev_zero(run_cli, tmp_path):
    (tmp_path / "w.yaml").write_text("trace: /dev/zero\n")
    with bounded(10, extra_bytes=256 << 20):
        code, _, err = run_cli("simulate", "--workload", str(tmp_path / "w.yaml"), *SERVE)
    one_line_error(code, err, "/dev/zero", "not a regular file")


def test_simulate_writes_no_cursor_escapes_under_no_color(monkeypatch):
    from sched_reader.cli.runners import simulate as cmd_simulate

    class Tty:
        def isatty(self):
            return True

        def write(self, s):
            return len(s)

        def flush(self):
            pass

    monkeypatch.setattr(sys, "stderr", Tty())
    monkeypatch.setenv("NO_COLOR", "1")
    assert cmd_simulate._progress_factory() == (None, None)
