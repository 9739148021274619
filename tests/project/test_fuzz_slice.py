"""A short, seeded slice of benchmarks/fuzz.py (the long run is the benchmark): no masked or escaped
exception, no case over its time or memory budget, every hostile file refused (exit 2, one line) or
read within 2 s, and nothing in a shell script executed (the canary file is never created)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import load_script

ROOT = Path(__file__).resolve().parents[2]


def _fuzz():
    return load_script("benchmarks/fuzz.py", "sr_fuzz")


def _clean(report) -> None:
    s = report.summary()
    assert s["masked_exceptions"] == 0 and s["escaped_exceptions"] == 0, s["problems"]
    assert s["over_time_budget"] == 0 and s["out_of_memory"] == 0, s["problems"]
    assert s["hostile_failures"] == 0, s["problems"]
    assert not s["canary_created"]


def test_seeded_slice_of_mutations_and_command_lines():
    fuzz = _fuzz()
    report = fuzz.run(cases=40, seed=0, budget_s=60, budget_mb=1024, hostile=False)  # wall s: shared box
    assert report.cases == 40
    _clean(report)
    assert set(report.by_command) >= {"config", "lint", "compat"}


def test_the_same_seed_gives_the_same_cases(tmp_path):
    fuzz = _fuzz()
    a = fuzz.flag_cases(3, 15)
    b = fuzz.flag_cases(3, 15)
    assert a == b and len(a) == 15
    import random

    d1, d2 = tmp_path / "1", tmp_path / "2"
    d1.mkdir()
    d2.mkdir()
    m1 = [open(c[1], "rb").read() for c in fuzz.mutation_cases(random.Random(5), 8, d1)]
    m2 = [open(c[1], "rb").read() for c in fuzz.mutation_cases(random.Random(5), 8, d2)]
    assert m1 == m2


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and symlinks")
def test_hostile_files_refused_or_read_within_two_seconds(tmp_path, monkeypatch):
    fuzz = _fuzz()
    monkeypatch.chdir(tmp_path)
    report = fuzz.Report()
    # 100k services/engines: test_hostile_size.py; `diagnose FILE` of the files that are read (the shell
    # script, a file root can read) is a whole diagnosis, not a refusal: config and lint read them here
    cheap = [(label, argv) for label, argv in fuzz.hostile_cases(tmp_path)
             if not label.startswith("100k") and (argv[:1] != ["diagnose"] or "--model-config" in argv)]
    assert len({label for label, _ in cheap}) >= 10
    for label, argv in cheap:
        r = fuzz.run_case(argv, 60, 1024)
        if r.outcome == "ok" and (r.code not in (0, 1, 2) or r.cpu > 2.0  # CPU s: the box is shared
                                  or (r.code == 2 and len(r.err.strip().splitlines()) != 1)):
            r.outcome = f"hostile:{label}"
        report.add(r)
    report.canary_created = (tmp_path / "CANARY").exists()
    _clean(report)
