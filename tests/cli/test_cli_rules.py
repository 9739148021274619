"""`sched-reader rules` / `sched-reader rule ID`, and the rule examples the docs show (each is run)."""

from __future__ import annotations

import json

import pytest

from sched_reader.analyzers import rule_docs
from sched_reader.analyzers.rule_catalog import all_rules


def test_rules_table_lists_every_rule_once(run_cli):
    code, out, _ = run_cli("rules")
    assert code == 0
    rows = [line.split()[0] for line in out.splitlines()[1:] if line.startswith("SR")]
    assert rows == [r.id for r in all_rules()]
    assert "SR201  kv-budget-below-max-model-len" in out


def test_rules_json(run_cli):
    code, out, _ = run_cli("rules", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["schema_version"] == 1
    by_id = {r["id"]: r for r in doc["rules"]}
    assert by_id["SR002"]["since"] == "0.2.0" and by_id["SR101"]["since"] == "0.1.0"
    assert by_id["SR201"]["help_uri"].endswith("/docs/rules.md#sr201")


@pytest.mark.parametrize("arg", ["SR201", "sr201", "kv-budget-below-max-model-len"])
def test_rule_explains_rationale_example_fix_since(run_cli, arg):
    code, out, _ = run_cli("rule", arg)
    assert code == 0
    assert out.startswith("SR201 kv-budget-below-max-model-len (error; since sched-reader 0.1.0)")
    for part in ("Why:", "Example (vLLM 0.19.0):", "Fixed:", "Fix:", "Docs: "):
        assert part in out
    assert "--gpu-memory-utilization" in out  # the text wraps at spaces, never inside a flag


def test_unknown_rule_is_exit_2_with_suggestion(run_cli):
    code, out, err = run_cli("rule", "SR2O1")
    assert code == 2 and out == "" and "unknown rule 'SR2O1' (did you mean SR201?)" in err


def test_every_rule_has_a_section_in_the_shipped_docs():
    text = rule_docs.shipped_rules_md()
    for r in all_rules():
        assert f"\n## {r.id}\n" in text
        assert f"*Since:* sched-reader {rule_docs.since(r.id)}." in text


@pytest.mark.parametrize("rule_id", sorted(k for k, v in rule_docs.EXAMPLES.items() if v.checked))
def test_documented_example_triggers_its_rule_and_the_fix_does_not(run_cli, rule_id):
    ex = rule_docs.EXAMPLES[rule_id]
    _, out, _ = run_cli("lint", "--format", "json", "--vllm", ex.vllm, "--", *ex.argv)
    assert rule_id in {f["rule"].split(".")[0] for f in json.loads(out)["findings"]}  # SR106.<id>: SR106
    _, out, _ = run_cli("lint", "--format", "json", "--vllm", ex.vllm, "--", *ex.fixed)
    assert rule_id not in {f["rule"].split(".")[0] for f in json.loads(out)["findings"]}


def test_since_release_first_release_rules_and_later_ones():
    assert rule_docs.since("SR201") == "0.1.0" and rule_docs.since("SR116") == "0.1.0"
    assert rule_docs.since("SR002") == "0.2.0"  # added with the lint gate
    assert rule_docs.since("SR117") == "0.2.0"  # any id the first release did not have
