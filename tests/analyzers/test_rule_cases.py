"""Every rule has a case it fires on and one it does not (tests/analyzers/rule_cases.yaml), run through
the real `lint` command; a rule added to the registry without cases fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from sched_reader.analyzers import rule_catalog as rc

DATA = yaml.safe_load((Path(__file__).parent / "rule_cases.yaml").read_text(encoding="utf-8"))
CASES = DATA["cases"]
MISSING = set(DATA["missing"])


def _rule(name: str, case: dict) -> str:
    return case.get("rule", name)


def test_every_rule_has_cases():
    covered = {_rule(n, c) for n, c in CASES.items()}
    lacking = [r.id for r in rc.all_rules() if r.id not in covered and r.id not in MISSING]
    assert not lacking, f"rules without positive and negative cases in rule_cases.yaml: {lacking}"
    assert not (MISSING & covered), f"listed as missing but covered (remove from `missing`): {MISSING & covered}"
    for n, c in CASES.items():
        assert c.get("positive") and c.get("negative"), n
        assert rc.get_rule(_rule(n, c)) is not None, n


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_fires_on_its_positive_case_only(run_cli, name):
    case = CASES[name]
    rule = _rule(name, case)

    def rules(argv: list[str]) -> set[str]:
        gpu = ["--gpu", case["gpu"]] if case.get("gpu") else []
        _, out, _ = run_cli("lint", "--format", "json", "--vllm", case["vllm"], *gpu, "--", *argv)
        return {f["rule"] for f in json.loads(out)["findings"]}

    assert rule in rules(case["positive"])
    assert rule not in rules(case["negative"])
