"""The rule registry: every rule id the code base emits is registered, docs/rules.md is generated from it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from sched_reader.analyzers import rule_catalog as rc

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "sched_reader"
_QUOTED_ID = re.compile(r"""["'](SR\d{3})["']""")
_RULE_SEVERITY = re.compile(r"""rule\s*=\s*["'](SR\d{3})["']\s*,\s*severity\s*=\s*["'](\w+)["']""")


def _sources() -> list[Path]:
    return [p for p in sorted(PKG.rglob("*.py")) if p.name != "rule_catalog.py"]


def test_every_rule_id_in_the_code_base_is_registered():
    emitted: dict[str, list[str]] = {}
    for p in _sources():
        for rule in _QUOTED_ID.findall(p.read_text(encoding="utf-8")):
            emitted.setdefault(rule, []).append(str(p.relative_to(ROOT)))
    assert emitted, "the scan found no rule ids at all"
    missing = {r: files for r, files in emitted.items() if rc.get_rule(r) is None}
    assert not missing, f"rule ids emitted but not in rule_catalog.py: {missing}"


def test_every_rule_documented_in_compat_rules_md_is_registered():
    text = (PKG / "compat" / "RULES.md").read_text(encoding="utf-8")
    ids = re.findall(r"^\| (SR\d{3}) \| ([a-z0-9-]+) \|", text, flags=re.M)
    assert ids
    for rule_id, name in ids:
        assert rc.get_rule(rule_id) is not None, rule_id
        assert rc.get_rule(rule_id).name == name, (rule_id, name)


def test_emitted_severities_are_declared():
    for p in _sources():
        for rule_id, sev in _RULE_SEVERITY.findall(p.read_text(encoding="utf-8")):
            rule = rc.get_rule(rule_id)
            assert rule is not None and sev in rule.all_severities(), (p.name, rule_id, sev)


def test_registry_is_well_formed():
    rules = rc.all_rules()
    assert len({r.id for r in rules}) == len(rules)
    assert len({r.name for r in rules}) == len(rules)
    for r in rules:
        assert re.fullmatch(r"SR\d{3}", r.id)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name)
        assert r.default_severity in ("error", "warning", "info")
        assert r.default_severity in r.all_severities()
        assert r.short and not r.short.endswith(".") and len(r.short) <= 120
        assert r.full and len(r.full) <= 1024 and r.fix and r.tags
    assert rc.rule_index(rules[3].id) == 3


def test_selectors():
    assert rc.normalize_selector("sr10") == "SR10"
    assert rc.normalize_selector("all") == "ALL"
    assert rc.normalize_selector("Unknown-Flag") == "SR101"
    with pytest.raises(ValueError):
        rc.normalize_selector("E501")
    assert rc.matches("SR101", "SR1") and rc.matches("SR101", "ALL") and not rc.matches("SR201", "SR1")


def test_docs_rules_md_is_up_to_date():
    from sched_reader.analyzers.rule_docs import render_markdown, shipped_rules_md

    doc = ROOT / "docs" / "rules.md"
    assert doc.read_text(encoding="utf-8") == render_markdown(), "run: python tools/gen_rules_doc.py"
    assert shipped_rules_md() == render_markdown(), "the copy in the package: run python tools/gen_rules_doc.py"
    for r in rc.all_rules():
        assert f"## {r.id}" in rc.render_markdown()


def test_gen_rules_doc_check_mode():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_rules_doc.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
