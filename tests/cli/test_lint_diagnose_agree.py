"""`lint` and `diagnose` run one analysis path: on every example and deploy fixture they report the same
capacity findings (SR2xx, SR116) for each engine, as long as lint checks the engine with its workload.

Without a stated workload lint runs the structural checks only (capacity scope ``structural``): then
its capacity findings are the workload-independent subset of diagnose's (diagnose assumes its default
benchmark workload, lint does not guess one).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sched_reader.analyzers.lint import WORKLOAD_RULES

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted([*ROOT.glob("examples/*.yaml"), *(p for p in (ROOT / "tests" / "data" / "deploy").rglob("*")
                                                  if p.is_file() and p.suffix in (".yaml", ".yml", ".sh"))])


def _capacity(rules):
    return sorted(r for r in rules if r.startswith("SR2") or r == "SR116")


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_lint_and_diagnose_report_the_same_capacity_findings(run_cli, path):
    code, out, _ = run_cli("diagnose", str(path), "--format", "json", "--no-effects")
    if code == 2:
        pytest.skip("diagnose cannot analyze this file (unknown model or no engine): nothing to compare")
    diag = {e["name"]: _capacity(f["rule"] for f in e["findings"]) for e in json.loads(out)["engines"]}
    _, out, _ = run_cli("lint", str(path), "--format", "json", "--isolated")
    engines = [e for f in json.loads(out)["files"] for e in f["engines"]]
    assert engines, "lint found no engine where diagnose did"
    for e in engines:
        lint_rules = _capacity(f["rule"] for f in [*e["findings"], *e["suppressed"]])
        if e["capacity_scope"] == "workload":
            assert lint_rules == diag[e["name"]], e["name"]
        elif e["capacity_scope"] == "structural":
            assert lint_rules == [r for r in diag[e["name"]] if r not in WORKLOAD_RULES], e["name"]
