"""The lint formatters on a hand-built result: SARIF 2.1.0 structure, GitHub commands, JUnit XML, text, JSON.

Each formatter is a pure function of a ``LintReport``; these tests need no deploy file.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from sched_reader.analyzers.rule_catalog import all_rules
from sched_reader.findings import Finding
from sched_reader.report.findings_text import EngineResult, FileResult, LintReport, render_json, render_text
from sched_reader.report.github import annotation, escape_data, escape_property, render_github, step_summary
from sched_reader.report.junit import render_junit
from sched_reader.report.sarif import artifact_uri, render_sarif, sarif_log

F = "deploy/llama.yaml"


def _f(rule: str, sev: str, line: int | None, msg: str = "m", file: str | None = F, fix: str | None = None,
       key: str | None = None) -> Finding:
    return Finding(rule=rule, severity=sev, message=msg, file=file, line=line, fix=fix, key=key)


def _report(fail_on: str = "error") -> LintReport:
    e1 = EngineResult(name="llama", line=5, model="meta-llama/Llama-3.1-8B", vllm_version="0.19.0",
                      findings=(_f("SR101", "error", 19, "unknown flag --x", fix="remove it", key="--x"),
                                _f("SR202", "warning", 5, "KV binds: 1,000 tokens"),
                                _f("SR110", "info", None, "no version")),
                      suppressed=(_f("SR104", "warning", 20),), capacity_checked=True)
    e2 = EngineResult(name="qwen", line=30, model="Qwen/Qwen2.5-7B-Instruct", vllm_version="0.19.0",
                      findings=(_f("SR203", "info", 31, "cap binds"),))
    broken = FileResult(file="deploy/broken.yaml",
                        findings=(_f("SR001", "error", 0, "cannot analyze: bad YAML", file="deploy/broken.yaml"),))
    skipped = FileResult(file="deploy/ci.yml", skipped="not a vLLM deploy file (no vLLM engine found)")
    return LintReport(files=(FileResult(file=F, engines=(e1, e2)), broken, skipped), fail_on=fail_on, vllm="0.19.0")


# ------------------------------------------------------------------------------------------------
# SARIF
# ------------------------------------------------------------------------------------------------


def _assert_text(obj: dict, key: str) -> None:
    assert isinstance(obj[key]["text"], str) and obj[key]["text"].strip() and len(obj[key]["text"]) <= 1024


def test_sarif_has_github_required_structure(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # finding paths are relative to the working directory
    log = json.loads(render_sarif(_report(), "0.1.0", base=tmp_path))
    assert log["$schema"].endswith("sarif-2.1.0.json") and log["version"] == "2.1.0"
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "sched-reader" and driver["semanticVersion"] == "0.1.0"
    rules = driver["rules"]
    assert [r["id"] for r in rules] == [r.id for r in all_rules()]
    for r in rules:
        assert r["id"] and r["name"]
        for key in ("shortDescription", "fullDescription", "help"):
            _assert_text(r, key)
        assert r["defaultConfiguration"]["level"] in ("note", "warning", "error")
        assert "security-severity" not in r.get("properties", {})
        assert all(isinstance(t, str) for t in r["properties"]["tags"])
    results = run["results"]
    assert len(results) == 5  # suppressed findings are not results; skipped files have none
    for res in results:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] in ("note", "warning", "error")
        assert res["message"]["text"].strip()
        [loc] = res["locations"]
        phys = loc["physicalLocation"]
        uri = phys["artifactLocation"]["uri"]
        assert not uri.startswith("/") and "://" not in uri
        assert isinstance(phys["region"]["startLine"], int) and phys["region"]["startLine"] >= 1
    by_rule = {r["ruleId"]: r for r in results}
    assert by_rule["SR101"]["level"] == "error" and by_rule["SR110"]["level"] == "note"
    assert by_rule["SR101"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 19
    assert by_rule["SR110"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 1  # no line -> 1
    assert by_rule["SR001"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 1  # line 0 -> 1
    assert "(fix: remove it)" in by_rule["SR101"]["message"]["text"]
    assert run["automationDetails"]["id"]


def test_sarif_default_levels_follow_the_registry():
    levels = {r["id"]: r["defaultConfiguration"]["level"] for r in sarif_log(_report(), "0")["runs"][0]["tool"]["driver"]["rules"]}
    assert levels["SR101"] == "error" and levels["SR202"] == "warning" and levels["SR203"] == "note"


def test_sarif_uris(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert artifact_uri("deploy/a b.yaml", base=tmp_path) == "deploy/a%20b.yaml"
    assert artifact_uri(str(tmp_path / "x" / "y.yaml"), base=tmp_path) == "x/y.yaml"
    assert artifact_uri("./x/../y.yaml", base=tmp_path) == "y.yaml"
    assert artifact_uri("/elsewhere/y.yaml", base=tmp_path) is None  # never a file:/// outside the repository
    assert artifact_uri("<command line>", base=tmp_path) is None
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # run from a subdirectory: still relative to the repository root
    assert artifact_uri("a.yaml", base=tmp_path) == "sub/a.yaml"


def test_sarif_findings_without_a_repository_file_become_tool_notifications(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rep = LintReport(files=(FileResult(file="<command line>", engines=(EngineResult(
        name="e", line=None, model="", vllm_version="0.19.0",
        findings=(_f("SR101", "error", None, "unknown flag --x", file="<command line>"),
                  _f("SR104", "warning", 3, "old", file="/elsewhere/a.yaml"))),)),
        FileResult(file="a.yaml", engines=(EngineResult(name="a", line=1, model="", vllm_version="0.19.0",
                                                        findings=(_f("SR101", "error", 2, file="a.yaml"),)),))),
        fail_on="error", failures=(("gone.yaml", "gone.yaml: file not found"),))
    [run] = sarif_log(rep, "0", base=tmp_path)["runs"]
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]] == ["a.yaml"]
    [inv] = run["invocations"]
    assert inv["executionSuccessful"] is False
    notes = inv["toolExecutionNotifications"]
    assert [(n["level"], n.get("associatedRule", {}).get("id")) for n in notes] == [
        ("warning", "SR104"), ("error", "SR101"), ("error", None)]  # findings in order, then failures
    assert notes[0]["message"]["text"].startswith("/elsewhere/a.yaml:3: old")
    assert notes[1]["message"]["text"].startswith("<command line>: unknown flag --x")
    rules = run["tool"]["driver"]["rules"]
    assert rules[notes[1]["associatedRule"]["index"]]["id"] == "SR101"
    assert "file://" not in json.dumps(run)


def test_sarif_partial_fingerprints_match_the_baseline_and_survive_line_shifts(tmp_path, monkeypatch):
    from sched_reader.analyzers.baseline import FINGERPRINT_KEY, fingerprints

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text("model: m\ndisable-log-requests: true\n")

    def run_for(line: int) -> tuple[str, str]:
        f = _f("SR101", "error", line, "unknown flag", file="a.yaml", key="--disable-log-requests")
        rep = LintReport(files=(FileResult(file="a.yaml", findings=(f,)),), fail_on="error")
        [res] = sarif_log(rep, "0", base=tmp_path)["runs"][0]["results"]
        return res["partialFingerprints"][FINGERPRINT_KEY], fingerprints([f], tmp_path)[f]

    before, from_baseline = run_for(2)
    assert before == from_baseline and len(before) == 16
    (tmp_path / "a.yaml").write_text("# added\n\nmodel: m\ndisable-log-requests: true\n")
    assert run_for(4)[0] == before  # same content two lines lower: same fingerprint
    (tmp_path / "a.yaml").write_text("model: m\ndisable-log-requests: false\n")
    assert run_for(2)[0] != before  # the line changed: a new finding


def test_sarif_rules_have_help_uri_to_their_section():
    rules = sarif_log(LintReport(files=(), fail_on="error"), "0")["runs"][0]["tool"]["driver"]["rules"]
    for r in rules:
        assert r["helpUri"].startswith("https://") and r["helpUri"].endswith("#" + r["id"].lower())


def test_sarif_empty_run_is_valid():
    log = sarif_log(LintReport(files=(), fail_on="error"), "0")
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"]


# ------------------------------------------------------------------------------------------------
# GitHub workflow commands
# ------------------------------------------------------------------------------------------------


def test_github_escaping():
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"
    line = annotation(_f("SR101", "error", 3, "bad, value: 100%\nsecond", file="d/x,y:z.yaml", fix="f"))
    assert line == "::error file=d/x%2Cy%3Az.yaml,line=3,title=SR101 unknown-flag::bad, value: 100%25%0Asecond (fix: f)"


def test_github_levels_and_groups():
    out = render_github(_report())
    lines = out.splitlines()
    assert lines[0] == "::group::deploy/broken.yaml"
    assert "::endgroup::" in lines
    ann = [ln for ln in lines if ln.startswith(("::error", "::warning", "::notice"))]
    assert len(ann) == 5
    assert all("\n" not in a for a in ann)
    group = lines[lines.index(f"::group::{F}") + 1: ]
    group = group[: group.index("::endgroup::")]
    assert [g.split(" ")[0] for g in group] == ["::error", "::warning", "::notice", "::notice"]  # by severity
    assert "::notice file=deploy/llama.yaml,title=SR110 approximate-version::no version" in group  # no line
    assert lines[-1].startswith("sched-reader: Found 2 errors")
    assert "sched-reader: skipped deploy/ci.yml" in out


def test_github_step_summary_table():
    md = step_summary(_report())
    rows = [ln for ln in md.splitlines() if ln.startswith("| ") and "---" not in ln]
    assert len(rows) == 1 + 5
    assert "error (fails)" in md and "`deploy/llama.yaml:19`" in md


def test_github_pipe_in_message_is_escaped_in_summary():
    rep = LintReport(files=(FileResult(file=F, engines=(EngineResult(
        name="e", line=1, model="", vllm_version="0", findings=(_f("SR101", "error", 1, "a | b\nc"),)),)),),
        fail_on="error")
    assert "a \\| b c" in step_summary(rep)


# ------------------------------------------------------------------------------------------------
# JUnit
# ------------------------------------------------------------------------------------------------


def test_junit_structure():
    xml = render_junit(_report())
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ET.fromstring(xml)
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [F, "deploy/broken.yaml", "deploy/ci.yml"]
    main = suites[0]
    assert main.get("tests") == "2" and main.get("failures") == "1" and main.get("errors") == "0"
    cases = {c.get("name"): c for c in main.findall("testcase")}
    assert set(cases) == {"llama", "qwen"}
    [failure] = cases["llama"].findall("failure")
    assert failure.get("message") == "1 finding at or above error: SR101" and failure.get("type") == "error"
    assert "deploy/llama.yaml:19: error SR101" in failure.text and "fix: remove it" in failure.text
    assert "SR202" in cases["llama"].find("system-out").text  # below the threshold: not a failure
    assert cases["qwen"].find("failure") is None
    assert suites[1].find("testcase/failure") is not None
    assert suites[2].find("testcase/skipped").get("message").startswith("not a vLLM deploy file")
    assert root.get("tests") == "4" and root.get("failures") == "2" and root.get("skipped") == "1"


@pytest.mark.parametrize("fail_on,failures", [("warning", "2"), ("info", "3"), ("never", "0")])
def test_junit_threshold(fail_on, failures):
    root = ET.fromstring(render_junit(_report(fail_on)))
    assert root.get("failures") == failures


def test_junit_strips_characters_xml_forbids():
    rep = LintReport(files=(FileResult(file=F, engines=(EngineResult(
        name="e\x01", line=1, model="", vllm_version="0", findings=(_f("SR101", "error", 1, "nul\x00here"),)),)),),
        fail_on="error")
    root = ET.fromstring(render_junit(rep))  # parses
    assert "\ufffd" in root.find("testsuite/testcase/failure").text


# ------------------------------------------------------------------------------------------------
# Text and JSON
# ------------------------------------------------------------------------------------------------


def test_text_lines_and_summary():
    out = render_text(_report())
    assert f"{F}:19: error SR101 unknown-flag: unknown flag --x\n    fix: remove it\n" in out
    assert f"{F}: info SR110 approximate-version: no version" in out
    assert "note: skipped deploy/ci.yml" in out
    assert out.splitlines()[-1] == (
        "Found 2 errors, 1 warning, 2 info in 2 files (2 engines); 1 suppressed by ignore directives; "
        "1 file skipped; 2 at or above --fail-on error.")
    assert render_text(LintReport(files=(), fail_on="error")) == \
        "No findings in 0 files (0 engines); 0 at or above --fail-on error.\n"


def test_json_schema_v1():
    doc = json.loads(render_json(_report(), "0.1.0"))
    assert doc["schema_version"] == 1 and doc["tool"] == {"name": "sched-reader", "version": "0.1.0"}
    assert doc["exit_code"] == 1 and doc["summary"]["failing"] == 2 and doc["summary"]["suppressed"] == 1
    keys = {"rule", "name", "severity", "message", "file", "line", "key", "fix", "engine", "fails"}
    assert all(set(f) == keys for f in doc["findings"])
    assert [f["rule"] for f in doc["findings"]] == ["SR001", "SR110", "SR202", "SR101", "SR203"]


def test_exit_code_follows_fail_on():
    assert _report("error").exit_code() == 1
    assert _report("never").exit_code() == 0
    only_info = LintReport(files=(FileResult(file=F, engines=(EngineResult(
        name="e", line=1, model="", vllm_version="0", findings=(_f("SR203", "info", 1),)),)),), fail_on="warning")
    assert only_info.exit_code() == 0
    assert LintReport(files=only_info.files, fail_on="info").exit_code() == 1
