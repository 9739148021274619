"""`sched-reader lint` as a CI gate teams adopt: fail-safe exits, configuration, stdin, workload scope,
baselines (issue 14). Each test builds a small repository in tmp_path (with a `.git` directory, so
configuration discovery stops there) and runs the real command in it."""

from __future__ import annotations

import re

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from sched_reader.cli import cmd_lint

ROOT = Path(__file__).resolve().parents[2]
KUBEAI_70B = ROOT / "tests/data/deploy/k8s/kubeai__llama-3.1-70b-instruct-fp8-h100.yaml"

_app = typer.Typer()


@_app.callback()
def _root() -> None:
    """test app"""


cmd_lint.register(_app)
CLEAN_ENV = {"GITHUB_ACTIONS": None, "GITHUB_WORKFLOW": None, "GITHUB_STEP_SUMMARY": None, "NO_COLOR": "1",
             "CI": None}

# `vllm serve` with a flag vLLM 0.19.0 removed (SR101, error) on line 2
SERVE_SR101 = "#!/bin/sh\nvllm serve Qwen/Qwen2.5-7B-Instruct --disable-log-requests\n"
SERVE_CLEAN = "#!/bin/sh\nvllm serve Qwen/Qwen2.5-7B-Instruct --max-num-seqs 64\n"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def lint(*args: str, stdin: str | None = None):
    r = CliRunner().invoke(_app, ["lint", *args], env=CLEAN_ENV, input=stdin, catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def lint_json(*args: str, stdin: str | None = None):
    code, out, err = lint("--format", "json", "--jobs", "1", *args, stdin=stdin)
    assert out, err
    return code, json.loads(out), err


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def rules_of(doc) -> list[str]:
    return sorted(f["rule"] for f in doc["findings"])


# ------------------------------------------------------------------------------------------------
# Fail-safe: a gate that cannot do what it was asked says so (exit 2), never passes silently
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("opt", ["--select", "--ignore", "--extend-select"])
def test_selector_matching_no_rule_is_exit_2_with_a_suggestion(repo, opt):
    write(repo / "a.sh", SERVE_SR101)
    code, out, err = lint("a.sh", opt, "SR999")
    assert code == 2 and out == ""
    assert "'SR999' matches no rule" in err
    # the nearest rule ids by spelling (difflib): one of the SR1x9 rules
    assert re.search(r"did you mean SR1[01]9\?", err), err


def test_selector_prefix_and_name_still_work(repo):
    write(repo / "a.sh", SERVE_SR101)
    code, doc, _ = lint_json("a.sh", "--vllm", "0.19.0", "--select", "SR10,unknown-flag")
    assert code == 1 and rules_of(doc) == ["SR101"]


def test_one_missing_path_among_many_still_reports_the_others_then_exit_2(repo):
    write(repo / "a.sh", SERVE_SR101)
    write(repo / "b.sh", SERVE_SR101)
    code, doc, err = lint_json("a.sh", "missing.yaml", "b.sh", "--vllm", "0.19.0")
    assert code == 2
    assert sorted({f["file"] for f in doc["findings"]}) == ["a.sh", "b.sh"]
    assert doc["errors"] == [{"file": "missing.yaml", "message": doc["errors"][0]["message"]}]
    assert "file not found" in doc["errors"][0]["message"] and doc["exit_code"] == 2
    assert "missing.yaml: file not found" in err


def test_text_summary_names_the_failure_count(repo):
    write(repo / "a.sh", SERVE_CLEAN)
    code, out, err = lint("a.sh", "nope/", "--vllm", "0.19.0", "--no-capacity")
    assert code == 2
    assert "1 input could not be read (exit 2)" in out.splitlines()[-1]
    assert err.strip() == "sched-reader: error: nope/: file not found (check the path and the current directory)"


def test_explicit_file_without_engine_among_others_is_a_failure_not_a_stop(repo):
    write(repo / "a.sh", SERVE_SR101)
    write(repo / "ci.yaml", "name: ci\non: [push]\njobs: {}\n")
    code, doc, _ = lint_json("a.sh", "ci.yaml", "--vllm", "0.19.0")
    assert code == 2 and rules_of(doc) == ["SR101"]
    assert doc["errors"][0]["file"] == "ci.yaml" and "no vLLM engine" in doc["errors"][0]["message"]


def test_nothing_readable_is_exit_2_and_nothing_on_stdout(repo):
    code, out, err = lint("x.yaml", "y.yaml")
    assert code == 2 and out == "" and "x.yaml: file not found" in err and "y.yaml" in err


def test_failures_win_over_findings_and_exit_zero_semantics(repo):
    # --fail-on never silences findings, never a failure to read an input
    write(repo / "a.sh", SERVE_SR101)
    code, _, _ = lint("a.sh", "gone.sh", "--fail-on", "never", "--vllm", "0.19.0")
    assert code == 2


def test_unused_directive_is_reported(repo):
    write(repo / "a.sh", "#!/bin/sh\n# sched-reader: ignore[SR101] -- was needed once\n"
                         "vllm serve Qwen/Qwen2.5-7B-Instruct --max-num-seqs 64\n")
    code, doc, _ = lint_json("a.sh", "--vllm", "0.19.0")
    [f] = doc["findings"]
    assert (f["rule"], f["line"], f["key"], f["severity"]) == ("SR002", 2, "SR101", "warning")
    assert code == 0  # a warning: fails only with --fail-on warning
    code, _, _ = lint("a.sh", "--vllm", "0.19.0", "--fail-on", "warning")
    assert code == 1


def test_used_directive_is_not_reported_and_typo_is(repo):
    write(repo / "a.sh", "#!/bin/sh\nvllm serve Qwen/Qwen2.5-7B-Instruct --disable-log-requests  "
                         "# sched-reader: ignore[SR101, SR10l]\n")
    code, doc, _ = lint_json("a.sh", "--vllm", "0.19.0")
    assert code == 0
    [f] = doc["findings"]
    assert f["rule"] == "SR002" and f["key"] == "SR10l" and "names no rule" in f["message"]
    assert [s["rule"] for s in doc["files"][0]["engines"][0]["suppressed"]] == ["SR101"]


def test_directive_for_a_rule_left_out_by_select_is_not_unused(repo):
    write(repo / "a.sh", "#!/bin/sh\nvllm serve Qwen/Qwen2.5-7B-Instruct --disable-log-requests  "
                         "# sched-reader: ignore[SR101]\n")
    _, doc, _ = lint_json("a.sh", "--vllm", "0.19.0", "--select", "SR0")
    assert doc["findings"] == []


def test_directive_for_a_workload_rule_is_not_judged_without_a_workload(repo):
    write(repo / "a.sh", "#!/bin/sh\n# sched-reader: ignore[SR202]\nvllm serve Qwen/Qwen2.5-7B-Instruct\n")
    _, doc, _ = lint_json("a.sh", "--vllm", "0.19.0")
    assert doc["findings"] == []


def test_unused_ignore_file_directive(repo):
    write(repo / "a.sh", "#!/bin/sh\n# sched-reader: ignore-file[SR104]\nvllm serve Qwen/Qwen2.5-7B-Instruct\n")
    _, doc, _ = lint_json("a.sh", "--vllm", "0.19.0")
    [f] = doc["findings"]
    assert (f["rule"], f["line"], f["key"]) == ("SR002", 2, "SR104") and "in this file" in f["message"]


# ------------------------------------------------------------------------------------------------
# Configuration
# ------------------------------------------------------------------------------------------------


def test_sched_reader_yaml_is_discovered_from_a_subdirectory(repo):
    write(repo / ".sched-reader.yaml", "ignore: [SR101]\nvllm: 0.19.0\n")
    write(repo / "deploy/a.sh", SERVE_SR101)
    code, doc, _ = lint_json("deploy/a.sh")
    assert code == 0 and doc["vllm"] == "0.19.0" and rules_of(doc) == []
    code, doc, _ = lint_json("deploy/a.sh", "--isolated", "--vllm", "0.19.0")
    assert code == 1 and rules_of(doc) == ["SR101"]


def test_pyproject_table_is_used_when_no_yaml(repo):
    write(repo / "pyproject.toml", '[project]\nname = "x"\n\n[tool.sched-reader]\nfail-on = "never"\n'
                                   'vllm = "0.19.0"\n')
    write(repo / "a.sh", SERVE_SR101)
    code, doc, _ = lint_json("a.sh")
    assert code == 0 and doc["fail_on"] == "never" and rules_of(doc) == ["SR101"]


def test_pyproject_without_table_is_passed_over_for_a_yaml_above(repo):
    write(repo / ".sched-reader.yaml", "fail-on: never\n")
    write(repo / "sub/pyproject.toml", '[project]\nname = "x"\n')
    write(repo / "sub/a.sh", SERVE_SR101)
    code, doc, _ = lint_json("sub/a.sh", "--vllm", "0.19.0")
    assert code == 0 and doc["fail_on"] == "never"


def test_yaml_beats_pyproject_in_the_same_directory(repo):
    write(repo / ".sched-reader.yaml", "fail-on: never\n")
    write(repo / "pyproject.toml", '[tool.sched-reader]\nfail-on = "info"\n')
    write(repo / "a.sh", SERVE_CLEAN)
    _, doc, _ = lint_json("a.sh", "--vllm", "0.19.0")
    assert doc["fail_on"] == "never"


def test_config_file_option_and_cli_precedence(repo):
    cfg = write(repo / "ci/gate.yaml", "fail-on: never\nselect: [SR2]\n")
    write(repo / "a.sh", SERVE_SR101)
    _, doc, _ = lint_json("a.sh", "--config-file", str(cfg), "--vllm", "0.19.0")
    assert doc["fail_on"] == "never" and rules_of(doc) == []
    code, doc, _ = lint_json("a.sh", "--config-file", str(cfg), "--vllm", "0.19.0", "--select", "SR1",
                             "--fail-on", "error")
    assert code == 1 and rules_of(doc) == ["SR101"]


@pytest.mark.parametrize("text,needle", [
    ("slect: [SR1]\n", "unknown configuration key 'slect' (did you mean 'select'?)"),
    ("select: [SR999]\n", "select: 'SR999' matches no rule (did you mean SR1"),
    ("severity: {SR101: fatal}\n", "severity 'fatal' for SR101"),
    ("per-file-ignores: {'x/**': [SR77]}\n", "matches no rule"),
    ("fail-on: sometimes\n", "'sometimes' is not one of"),
    ("select: [SR1\n", "invalid YAML"),
    ("workload: {random-input-lenn: 2048}\n", "unknown workload key 'random_input_lenn' (did you mean "
                                              "'random_input_len'?)"),
    ("workload: {num-prompts: 0}\n", "invalid workload: num_prompts"),
    ("workload: {classes: [{name: a, weight: 1, input: 10, output: 5}], arrival: {process: burst}}\n",
     "invalid workload: arrival"),
])
def test_bad_configuration_is_exit_2_with_file_line_and_hint(repo, text, needle):
    write(repo / ".sched-reader.yaml", "vllm: 0.19.0\n" + text)
    write(repo / "a.sh", SERVE_CLEAN)
    code, out, err = lint("a.sh")
    assert code == 2 and out == ""
    assert err.startswith("sched-reader: error: .sched-reader.yaml:") and needle in err
    if "YAML" not in needle:
        assert ".sched-reader.yaml:2:" in err  # the line of the key


def test_config_file_and_isolated_conflict(repo):
    cfg = write(repo / "c.yaml", "fail-on: never\n")
    write(repo / "a.sh", SERVE_CLEAN)
    code, _, err = lint("a.sh", "--config-file", str(cfg), "--isolated")
    assert code == 2 and "cannot be used together" in err


def test_per_file_ignores_and_severity_overrides(repo):
    write(repo / ".sched-reader.yaml", "vllm: 0.19.0\nper-file-ignores:\n  'legacy/**': [SR101]\n"
                                       "severity: {SR108: error}\n")
    write(repo / "legacy/old.sh", SERVE_SR101)
    write(repo / "new/a.sh", SERVE_SR101)
    write(repo / "new/b.sh", "#!/bin/sh\nvllm serve Qwen/Qwen2.5-7B-Instruct --max-num-batched-token 4096\n")
    code, doc, _ = lint_json(".")
    got = sorted((f["file"], f["rule"], f["severity"]) for f in doc["findings"])
    assert got == [("new/a.sh", "SR101", "error"), ("new/b.sh", "SR108", "error")]  # SR108 is a warning by default
    assert code == 1


def test_exclude_globs_and_gitignore_in_walks(repo):
    write(repo / ".gitignore", "build/\n*.generated.yaml\n!keep.generated.yaml\n")
    write(repo / ".sched-reader.yaml", "extend-exclude: ['vendor/**']\nvllm: 0.19.0\n")
    for name in ("deploy/a.sh", "build/a.sh", "vendor/x/a.sh", "deploy/skip.generated.yaml",
                 "deploy/other/b.sh"):
        write(repo / name, SERVE_SR101 if name.endswith(".sh") else "model: x\n")
    write(repo / "deploy/keep.generated.yaml", "model: Qwen/Qwen2.5-7B-Instruct\ndisable-log-requests: true\n")
    _, doc, _ = lint_json(".")
    files = sorted(f["file"] for f in doc["files"])
    assert files == ["deploy/a.sh", "deploy/keep.generated.yaml", "deploy/other/b.sh"]
    _, doc, _ = lint_json(".", "--exclude", "other")
    assert "deploy/other/b.sh" not in [f["file"] for f in doc["files"]]


def test_force_exclude_applies_to_named_files(repo):
    write(repo / ".sched-reader.yaml", "extend-exclude: ['legacy/**']\nvllm: 0.19.0\n")
    write(repo / "legacy/a.sh", SERVE_SR101)
    code, _, _ = lint("legacy/a.sh")
    assert code == 1  # named explicitly: linted
    code, doc, _ = lint_json("legacy/a.sh", "--force-exclude")
    assert code == 0 and doc["files"] == [] and "excluded by 'legacy/**'" in doc["notes"][0]


def test_stdin(repo):
    code, doc, _ = lint_json("-", "--vllm", "0.19.0", stdin=SERVE_SR101)
    assert code == 1 and [(f["file"], f["line"], f["rule"]) for f in doc["findings"]] == [("<stdin>", 2, "SR101")]
    code, doc, _ = lint_json("-", "--vllm", "0.19.0", "--stdin-filename", "deploy/serve.sh", stdin=SERVE_SR101)
    assert doc["findings"][0]["file"] == "deploy/serve.sh"


# ------------------------------------------------------------------------------------------------
# Capacity scope: no stated workload -> structural checks only; with one -> diagnose's findings
# ------------------------------------------------------------------------------------------------


def test_no_workload_means_structural_capacity_checks_only(repo):
    # the 8B model on one H100 with vLLM defaults: diagnose's default workload (1,000 prompts at once)
    # makes it KV-bound (SR202); lint on a file that states no workload must not warn about that
    write(repo / "a.sh", "#!/bin/sh\nvllm serve meta-llama/Llama-3.1-8B-Instruct\n")
    code, doc, _ = lint_json("a.sh", "--vllm", "0.19.0")
    assert code == 0 and rules_of(doc) == []
    assert doc["files"][0]["engines"][0]["capacity_scope"] == "structural"
    wl = write(repo / "wl.yaml", "random-input-len: 1024\nrandom-output-len: 128\nnum-prompts: 1000\n")
    code, doc, _ = lint_json("a.sh", "--vllm", "0.19.0", "--workload", str(wl))
    assert rules_of(doc) == ["SR202"] and doc["files"][0]["engines"][0]["capacity_scope"] == "workload"


def test_structural_failure_is_reported_without_a_workload(repo):
    # 70B in bf16 (~131 GiB of weights) on one 80 GB GPU: vLLM cannot start, whatever the traffic
    write(repo / "a.sh", "#!/bin/sh\nvllm serve meta-llama/Llama-3.1-70B-Instruct --max-model-len 8192\n")
    code, doc, _ = lint_json("a.sh", "--vllm", "0.19.0")
    assert code == 1 and rules_of(doc) == ["SR201"]


def test_workload_from_the_configuration(repo):
    write(repo / ".sched-reader.yaml", "vllm: 0.19.0\nworkload: {random-input-len: 1024, num-prompts: 1000}\n")
    write(repo / "a.sh", "#!/bin/sh\nvllm serve meta-llama/Llama-3.1-8B-Instruct\n")
    _, doc, _ = lint_json("a.sh")
    assert rules_of(doc) == ["SR202"]


OWN_FILE = """sched_reader: 1
name: chat
vllm_version: "0.19.0"
hardware: {gpu: h100-sxm5-80gb, count: 1}
serve: vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 %s
workload: %s
"""


@pytest.mark.parametrize("flags,workload,rule", [
    ("", "{num_prompts: 1000, random_input_len: 1024, random_output_len: 128}", "SR202"),
    ("--max-num-seqs 16", "{num_prompts: 200, random_input_len: 512, random_output_len: 128}", "SR203"),
    ("--max-num-seqs 256", "{num_prompts: 300, seed: 0, arrival: {process: poisson, rate: 8}, "
                           "classes: [{name: chat, weight: 1.0, input: 512, output: 256}]}", None),
])
def test_lint_verdict_equals_diagnose_on_a_file_stating_its_workload(repo, flags, workload, rule):
    from sched_reader.analyzers.diagnosis import diagnose
    from sched_reader.analyzers.pipeline import build_specs

    write(repo / "own.yaml", OWN_FILE % (flags, workload))
    [spec] = build_specs(["own.yaml"])
    d = diagnose(spec)
    expected = sorted((f.rule, f.severity, f.message) for f in d.findings if f.rule.startswith("SR2"))
    assert [r for r, _, _ in expected] == ([rule] if rule else [])  # the case is what it claims to be
    _, doc, _ = lint_json("own.yaml")
    got = sorted((f["rule"], f["severity"], f["message"]) for f in doc["findings"] if f["rule"].startswith("SR2"))
    assert got == expected
    assert doc["files"][0]["engines"][0]["capacity_scope"] == "workload"


# ------------------------------------------------------------------------------------------------
# Baseline
# ------------------------------------------------------------------------------------------------


def test_baseline_reports_only_new_findings_and_survives_line_shifts(repo):
    a = write(repo / "a.sh", SERVE_SR101)
    code, _, err = lint("a.sh", "--vllm", "0.19.0", "--write-baseline", "baseline.json")
    assert code == 0 and "wrote 1 finding(s)" in err  # the adopting run passes
    base = json.loads((repo / "baseline.json").read_text())
    assert [(e["rule"], e["file"], e["line"]) for e in base["findings"]] == [("SR101", "a.sh", 2)]
    code, doc, _ = lint_json("a.sh", "--vllm", "0.19.0", "--baseline", "baseline.json")
    assert code == 0 and doc["findings"] == []
    # lines added above: same finding, new line number, still known
    a.write_text("#!/bin/sh\n# comment\n\nexport X=1\n" + SERVE_SR101.split("\n", 1)[1])
    code, doc, _ = lint_json("a.sh", "--vllm", "0.19.0", "--baseline", "baseline.json")
    assert code == 0 and doc["findings"] == [] and "already in the baseline" in doc["notes"][0]
    # a second, new occurrence is reported
    a.write_text(SERVE_SR101 + "vllm serve Qwen/Qwen2.5-0.5B-Instruct --disable-log-requests\n")
    code, doc, _ = lint_json("a.sh", "--vllm", "0.19.0", "--baseline", "baseline.json")
    assert code == 1 and [(f["rule"], f["line"]) for f in doc["findings"]] == [("SR101", 3)]


def test_bad_baseline_is_exit_2(repo):
    write(repo / "a.sh", SERVE_CLEAN)
    write(repo / "b.json", "{not json")
    for path, needle in (("none.json", "baseline file not found"), ("b.json", "not valid JSON")):
        code, out, err = lint("a.sh", "--baseline", path)
        assert code == 2 and out == "" and needle in err


def test_engine_level_findings_get_the_engine_line(repo):
    # SR110 (no release stated) is about the engine as a whole: it points at the engine's line, so
    # SARIF and annotations can place it
    write(repo / "a.sh", "#!/bin/sh\n\nvllm serve Qwen/Qwen2.5-7B-Instruct\n")
    _, doc, _ = lint_json("a.sh", "--select", "SR110", "--format", "sarif")
    [res] = doc["runs"][0]["results"]
    loc = res["locations"][0]["physicalLocation"]
    assert (loc["artifactLocation"]["uri"], loc["region"]["startLine"]) == ("a.sh", 3)


def test_progress_bar_only_on_a_terminal_outside_ci(monkeypatch):
    import io

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setattr("sys.stderr", io.StringIO())
    from sched_reader.cli.runners import lint as lint_runner

    assert lint_runner._Progress.wanted() is False  # not a terminal


def test_parallel_workers_give_the_same_report_as_one_process(repo):
    deploy = ROOT / "tests/data/deploy"
    files = sorted(p for p in deploy.rglob("*") if p.suffix in (".yaml", ".yml", ".sh"))
    for i in range(30):  # above the in-process threshold
        src = files[i % len(files)]
        write(repo / "d" / f"{i:02d}_{src.name}", src.read_text())
    one = lint("d", "--format", "json", "--jobs", "1", "--vllm", "0.19.0")
    two = lint("d", "--format", "json", "--jobs", "2", "--vllm", "0.19.0")
    assert one[0] == two[0] and one[1] == two[1]
    assert json.loads(one[1])["summary"]["files"] >= 25


def test_unreadable_input_in_junit_and_github_formats(repo):
    import xml.etree.ElementTree as ET

    write(repo / "a.sh", SERVE_SR101)
    code, out, _ = lint("a.sh", "gone.yaml", "--vllm", "0.19.0", "--format", "junit")
    root = ET.fromstring(out)
    assert code == 2 and root.get("errors") == "1"
    [err] = root.iter("error")
    assert "gone.yaml: file not found" in err.get("message")
    code, out, _ = lint("a.sh", "gone.yaml", "--vllm", "0.19.0", "--format", "github")
    assert code == 2 and "::error title=sched-reader could not read an input::gone.yaml: file not found" in out
    assert "::error file=a.sh,line=2" in out


HELM_TEMPLATE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "vllm.fullname" . }}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: "vllm/vllm-openai:{{ .Values.image.tag }}"
          args:
            - --model={{ .Values.model }}
            {{- if .Values.maxModelLen }}
            - --max-model-len={{ .Values.maxModelLen }}
            {{- end }}
"""


def test_helm_templates_are_skipped_in_walks_not_failed(repo):
    # a chart's templates/ are Go templates, not YAML until rendered: failing on them would fail every
    # repository with a Helm chart; named explicitly they are SR001 with the way out
    write(repo / "chart/Chart.yaml", "apiVersion: v2\nname: vllm\nversion: 0.1.0\n")
    write(repo / "chart/templates/deployment.yaml", HELM_TEMPLATE)
    code, doc, _ = lint_json("chart")
    assert code == 0 and doc["findings"] == []
    [tmpl] = [f for f in doc["files"] if f["file"].endswith("deployment.yaml")]
    assert "Helm/Go template" in tmpl["skipped"] and "helm template" in tmpl["skipped"]
    code, doc, _ = lint_json("chart/templates/deployment.yaml")
    assert code == 1 and doc["findings"][0]["rule"] == "SR001" and "helm template" in doc["findings"][0]["fix"]
    code, _, _ = lint("chart/templates/deployment.yaml", "--skip-unrecognized")  # pre-commit
    assert code == 0
