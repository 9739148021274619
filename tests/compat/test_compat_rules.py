"""vLLM start-up rules (sched_reader.compat.rules): data-driven cases + the predicate evaluator."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sched_reader.compat import rules

CASES = yaml.safe_load((Path(__file__).parents[1] / "data" / "compat_rule_cases.yaml").read_text())["cases"]


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c['rule']}@{c['version']}:{'fires' if c['fires'] else 'quiet'}" for c in CASES]
)
def test_rule_case(case):
    hits = {h.rule_id for h in rules.check(case["values"], str(case["version"]))}
    assert (case["rule"] in hits) is case["fires"], hits


def test_every_rule_has_a_positive_and_a_negative_case():
    ids = set(rules.rule_ids())
    assert len(ids) >= 20
    positive = {c["rule"] for c in CASES if c["fires"]}
    negative = {c["rule"] for c in CASES if not c["fires"]}
    assert ids - positive == set()
    assert ids - negative == set()
    assert {c["rule"] for c in CASES} <= ids  # no case names a rule that does not exist


def test_messages_are_vllms_own_with_values_filled_in():
    # SchedulerConfig._verify_args, vllm/config.py 0.6.0..0.11.0 (read in validation_rules.yaml)
    values = {"max_num_batched_tokens": 2048, "max_model_len": 8192, "enable_chunked_prefill": False}
    (hit,) = [h for h in rules.check(values, "0.8.5") if h.rule_id == "batched-tokens-below-max-model-len"]
    assert hit.message.startswith("max_num_batched_tokens (2048) is smaller than max_model_len (8192).")
    assert hit.where == "SchedulerConfig._verify_args"
    assert hit.exception == "ValueError"
    assert hit.versions == ("0.6.0..0.11.0",)
    # from 0.11.1 the check moved to SchedulerConfig.verify_max_model_len
    (hit,) = [h for h in rules.check(values, "0.18.0") if h.rule_id == "batched-tokens-below-max-model-len"]
    assert hit.where == "SchedulerConfig.verify_max_model_len"


def test_unknown_placeholders_are_kept():
    assert rules.fill_message("x {self.foo} y {max_loras}", {"max_loras": 4}) == "x {self.foo} y 4"


def test_each_rule_keeps_its_vllm_source():
    for rule in rules.rules():
        assert rule["variants"], rule["id"]
        for v in rule["variants"]:
            assert v["message"], rule["id"]
            assert v["versions"], rule["id"]
            assert v["source_url"].startswith("https://github.com/vllm-project/vllm/blob/v"), rule["id"]


def test_all_predicate_variables_are_documented():
    documented = (Path(rules.__file__).parent / "RULES.md").read_text()
    for rule in rules.rules():
        for v in [rule["when"], *[x.get("when") for x in rule["variants"] if x.get("when")]]:
            for name in rules.variables_of(v):
                assert f"`{name}`" in documented, (rule["id"], name)


# ---- evaluator ------------------------------------------------------------------------------------

def test_three_valued_logic():
    assert rules.evaluate(["<", "a", "b"], {"a": 1}) is None
    assert rules.evaluate(["and", ["<", "a", "b"], False], {"a": 1}) is False
    assert rules.evaluate(["or", ["<", "a", "b"], True], {"a": 1}) is True
    assert rules.evaluate(["not", "a"], {}) is None
    assert rules.evaluate(["set", "a"], {"a": 0}) is True
    assert rules.evaluate(["unset", "a"], {"a": None}) is True


def test_literals_and_arithmetic():
    assert rules.evaluate(["==", "m", {"lit": "ngram"}], {"m": "ngram"}) is True
    assert rules.evaluate(["in", "m", {"lit": ["a", "b"]}], {"m": "c"}) is False
    assert rules.evaluate(["<", "t", ["*", "s", ["+", "k", 1]]], {"t": 100, "s": 50, "k": 1}) is False
    assert rules.evaluate(["!=", ["%", "tp", "dcp"], 0], {"tp": 4, "dcp": 0}) is None  # no division by zero
    assert rules.evaluate(["<", "a", "b"], {"a": "x", "b": 1}) is None  # type mismatch never fires


@pytest.mark.parametrize("bad", [["eval", "x"], [], ["not", "a", "b"], ["==", {"lit": 1, "x": 2}, 1],
                                 ["in", "a", {"lit": 3}], ["set", ["x"]]])
def test_malformed_predicates_are_rejected(bad):
    with pytest.raises(rules.PredicateError):
        rules.evaluate(bad, {"a": 1, "x": 1})


def test_strings_are_never_executed():
    # a variable name that looks like code is just a (missing) variable
    assert rules.evaluate(["==", "__import__('os').system('false')", 1], {}) is None


def test_render():
    when = ["and", ["<", "max_num_batched_tokens", "max_model_len"], ["not", "enable_chunked_prefill"]]
    assert rules.render(when) == "max_num_batched_tokens < max_model_len and not enable_chunked_prefill"


def test_version_ranges():
    assert rules.in_ranges("0.8.0", ["0.8.0..0.8.1"])
    assert rules.in_ranges("0.8.1", ["0.8.0..0.8.1"])
    assert not rules.in_ranges("0.8.2", ["0.8.0..0.8.1"])
    assert rules.in_ranges("0.6.6", ["0.6.6"])
    assert rules.in_ranges("0.10.0", ["0.9.2..0.11.0"])  # numeric, not string, order


def test_spec_methods_per_release():
    # facts.yaml speculative_decoding.per_version: 0.8.5 = ngram, eagle, medusa, mlp_speculator, draft_model
    assert rules.spec_methods("0.8.5") == ["ngram", "eagle", "medusa", "mlp_speculator", "draft_model"]
    assert "eagle3" in rules.spec_methods("0.18.0")
    assert rules.spec_methods("0.8.3") is None  # free-form str in 0.8.2-0.8.4


def test_documented_sd_pp_incompatibility_range():
    assert rules.documented("0.10.0") and rules.documented("0.15.0")
    assert not rules.documented("0.18.0") and not rules.documented("0.7.2")
