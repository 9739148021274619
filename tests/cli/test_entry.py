"""The CLI process runs without the cycle collector (``cli/entry.py``); that is safe only while a run makes
few reference cycles, and not more of them for a longer run. These tests hold that premise."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Runs a command in a fresh process with the collector off, as the entry point does, then counts the
# unreachable cyclic objects the run left behind.
_PROBE = """
import gc, io, contextlib, sys
gc.disable()
from sched_reader.cli.app import main
try:
    with contextlib.redirect_stdout(io.StringIO()):
        main(sys.argv[1:])
except SystemExit:
    pass
print(gc.collect())
"""


def _cyclic_garbage(*args: str) -> int:
    r = subprocess.run([sys.executable, "-c", _PROBE, *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return int(r.stdout.strip().splitlines()[-1])


def test_cyclic_garbage_does_not_grow_with_the_number_of_requests():
    small = _cyclic_garbage("simulate", "--num-prompts", "100", "examples/llama3-8b-h100.yaml")
    large = _cyclic_garbage("simulate", "--num-prompts", "5000", "examples/llama3-8b-h100.yaml")
    # a cycle per request would leave >= 5,000 objects more in the larger run
    assert large - small < 1000, (small, large)
    assert large < 10_000


def test_diagnose_leaves_few_cyclic_objects():
    assert _cyclic_garbage("diagnose", "examples/llama70b-fp8-tp4.yaml") < 10_000


def test_importing_the_app_leaves_the_callers_collector_alone():
    import importlib

    was = gc.isenabled()
    importlib.import_module("sched_reader.cli.app")
    assert gc.isenabled() == was


def test_the_entry_point_turns_the_collector_off():
    r = subprocess.run([sys.executable, "-c", "import gc, sched_reader.cli.entry; print(gc.isenabled())"],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "False", r.stderr


def _entry_output(*args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "sched_reader", *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode in (0, 1), r.stderr
    return r.stdout


def test_the_entry_point_prints_what_the_app_prints(run_cli):
    """Ending the process without the last full collection (gc.freeze) loses no output."""
    for args in (("config", "--format", "json", "examples/llama3-8b-h100.yaml"),
                 ("diagnose", "examples/llama70b-fp8-tp4.yaml")):
        _, in_process, _ = run_cli(*args)
        assert _entry_output(*args) == in_process != ""
