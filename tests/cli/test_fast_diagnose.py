"""The entry point runs a plain ``diagnose FILE...`` without typer (``cli/fast_diagnose.py``). These tests hold
that it is the same command: the runner gets the arguments typer would give it, a process prints the same
bytes and exits with the same code, and any other command line still goes to typer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sched_reader.cli import fast_diagnose
from sched_reader.cli.runners import diagnose as runner

ROOT = Path(__file__).resolve().parents[2]
EX = "examples/llama3-8b-h100.yaml"
EX2 = "examples/llama70b-fp8-tp4.yaml"

TAKEN = [
    ["diagnose", EX],
    ["diagnose", EX, EX2],
    ["diagnose", "--format", "json", EX],
    ["diagnose", "-f", "text", EX, "--explain"],
    ["diagnose", EX, "--no-effects", "-f", "json", EX2],
    ["diagnose", "--no-effects", "--effects", EX],
    ["diagnose", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-num-seqs", "64"],
    ["diagnose", EX, "--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"],
    ["diagnose", "missing.yaml"],
]
LEFT_TO_TYPER = [
    [], ["--help"], ["diagnose"], ["diagnose", "--help"], ["config", EX], ["diagnose", "--format", "JSON", EX],
    ["diagnose", "--format", "sarif", EX], ["diagnose", "-f"], ["diagnose", "--format=json", EX],
    ["diagnose", "-fjson", EX], ["diagnose", "--gpu", "H100", EX], ["diagnose", "--num-prompts", "10", EX],
    ["diagnose", "-", EX], ["diagnose", "--fail-on", "never", EX], ["diagnose", "--set", "max-num-seqs=8", EX],
]


def _split(argv: list[str]) -> tuple[list[str], list[str] | None]:
    if "--" not in argv:
        return argv, None
    i = argv.index("--")
    return argv[:i], argv[i + 1:]


@pytest.mark.parametrize("argv", LEFT_TO_TYPER)
def test_other_command_lines_are_left_to_typer(argv):
    assert fast_diagnose.parse(*_split(argv)) is None


@pytest.mark.parametrize("argv", TAKEN)
def test_the_runner_gets_what_typer_would_give_it(argv, run_cli, monkeypatch):
    """Parsed by typer (the app) and by the fast path, the runner is called with equal arguments."""
    assert fast_diagnose.parse(*_split(argv)) is not None
    calls: list[dict] = []

    def record(files, **kw):
        from sched_reader.cli.plumbing import COMMAND_LINE

        kw.pop("echo")
        calls.append({"files": list(files or []), "command_line": COMMAND_LINE.get(), **kw})
        return 0

    monkeypatch.setattr(runner, "run", record)
    code, _, err = run_cli(*argv)
    assert (code, err) == (0, "")
    assert fast_diagnose.run(list(argv)) == 0
    assert len(calls) == 2
    assert calls[0] == calls[1]


def _process(*argv: str) -> tuple[int, str, str]:
    r = subprocess.run([sys.executable, "-m", "sched_reader", *argv], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("argv", [
    ["diagnose", "--format", "json", "--no-effects", EX2],
    ["diagnose", "missing.yaml"],
    ["diagnose", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-num-seqs", "0"],
])
def test_a_process_prints_and_exits_as_the_typer_app_does(argv, run_cli):
    code, out, err = _process(*argv)
    assert (code, out, err) == run_cli(*argv)
    assert out or err


def test_a_plain_diagnose_process_does_not_import_typer():
    probe = ("import io, contextlib, sys\nfrom sched_reader.cli.entry import main\n"
             "try:\n    with contextlib.redirect_stdout(io.StringIO()):\n        main(sys.argv[1:])\n"
             "except SystemExit as e:\n    print(e.code)\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click')))\n")
    r = subprocess.run([sys.executable, "-c", probe, "diagnose", "--no-effects", EX], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.stdout.split("\n")[:2] == ["0", "[]"], r.stderr
