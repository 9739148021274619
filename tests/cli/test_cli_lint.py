"""`sched-reader lint` end to end over the real deploy fixtures: findings, exit codes, directives, inputs.

The command is mounted on a private typer app here, so these tests do not depend on app.py's wiring.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from sched_reader.analyzers import lint as lint_pipeline
from sched_reader.cli import cmd_lint

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = Path(__file__).parents[1] / "data" / "deploy"
KUBEAI_70B = "tests/data/deploy/k8s/kubeai__llama-3.1-70b-instruct-fp8-h100.yaml"
FLAG_LINE = 19  # `- --disable-log-requests` in the fixture (2 header lines + the original line 17)

_app = typer.Typer()


@_app.callback()
def _root() -> None:
    """test app"""


cmd_lint.register(_app)

CLEAN_ENV = {"GITHUB_ACTIONS": None, "GITHUB_WORKFLOW": None, "GITHUB_STEP_SUMMARY": None, "NO_COLOR": "1"}


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def lint(*args: str, env: dict | None = None):
    runner = CliRunner()
    result = runner.invoke(_app, ["lint", *args], env={**CLEAN_ENV, **(env or {})}, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def lint_json(*args: str) -> tuple[int, dict]:
    code, out, err = lint("--format", "json", *args)
    assert code in (0, 1), err
    return code, json.loads(out)


def _flag_in_release(flag: str, version: str) -> bool:
    from sched_reader.compat.argtable import ArgTable

    m = ArgTable.for_release(version).lookup(flag)
    return m is not None and m.record is not None


# ------------------------------------------------------------------------------------------------
# Findings over real fixtures
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["0.16.0", "0.19.0", "0.33.0"])
def test_removed_flag_reported_only_where_the_release_data_says(version):
    expected = not _flag_in_release("--disable-log-requests", version)
    code, doc = lint_json(KUBEAI_70B, "--vllm", version, "--no-capacity")
    sr101 = [f for f in doc["findings"] if f["rule"] == "SR101" and f["key"] == "--disable-log-requests"]
    assert bool(sr101) == expected
    if expected:
        [f] = sr101
        assert f["line"] == FLAG_LINE and f["file"] == KUBEAI_70B
        assert f["severity"] == "error" and f["fails"] is True and f["name"] == "unknown-flag"
        assert code == 1
    assert doc["summary"]["engines"] == 1


def test_the_flag_exists_in_016_and_is_gone_by_019():
    # the premise of the test above, straight from the bundled argument tables
    assert _flag_in_release("--disable-log-requests", "0.16.0")
    assert not _flag_in_release("--disable-log-requests", "0.19.0")
    assert not _flag_in_release("--disable-log-requests", "0.33.0")


def test_text_output_names_file_line_rule_and_fix():
    code, out, _ = lint(KUBEAI_70B, "--vllm", "0.19.0", "--format", "text")
    assert code == 1
    assert f"{KUBEAI_70B}:{FLAG_LINE}: error SR101 unknown-flag: unknown flag --disable-log-requests" in out
    assert "    fix: " in out
    assert out.rstrip().splitlines()[-1].startswith("Found 1 error")


def test_capacity_findings_only_with_capacity(tmp_path):
    wl = tmp_path / "wl.yaml"
    wl.write_text("random-input-len: 1024\nrandom-output-len: 128\nnum-prompts: 1000\n")
    _, with_cap = lint_json(KUBEAI_70B, "--vllm", "0.16.0", "--workload", str(wl))
    _, without = lint_json(KUBEAI_70B, "--vllm", "0.16.0", "--no-capacity")
    assert any(f["rule"].startswith("SR2") for f in with_cap["findings"])
    assert not any(f["rule"].startswith("SR2") for f in without["findings"])
    assert with_cap["files"][0]["engines"][0]["capacity_checked"] is True


def test_unknown_model_is_sr115_info_not_exit_2():
    path = "tests/data/deploy/k8s/kserve__vllm_raw_container_isvc.yaml"  # --model /mnt/models
    code, doc = lint_json(path, "--vllm", "0.19.0")
    assert code == 0
    [f] = [f for f in doc["findings"] if f["rule"] == "SR115"]
    assert f["severity"] == "info" and "/mnt/models" in f["message"] and "capacity checks skipped" in f["message"]
    assert f["line"] == 13
    _, doc = lint_json(path, "--vllm", "0.19.0", "--no-capacity")
    assert not [f for f in doc["findings"] if f["rule"] == "SR115"]


def test_fail_on_threshold():
    # 0.16.0 has the flag: the fixture's worst finding is then a capacity warning (SR202)
    code, doc = lint_json(KUBEAI_70B, "--vllm", "0.16.0")
    worst = {f["severity"] for f in doc["findings"]}
    assert "error" not in worst
    assert code == 0
    if "warning" in worst:
        assert lint(KUBEAI_70B, "--vllm", "0.16.0", "--fail-on", "warning")[0] == 1
    assert lint(KUBEAI_70B, "--vllm", "0.16.0", "--fail-on", "info")[0] == (1 if doc["findings"] else 0)
    assert lint(KUBEAI_70B, "--vllm", "0.19.0", "--fail-on", "never")[0] == 0


# ------------------------------------------------------------------------------------------------
# Exit code 2
# ------------------------------------------------------------------------------------------------


def test_exit_2_cases(tmp_path):
    code, out, err = lint("does/not/exist.yaml")
    assert code == 2 and "file not found" in err and out == ""
    not_vllm = tmp_path / "plain.yaml"
    not_vllm.write_text("name: ci\non: [push]\njobs: {}\n")
    code, _, err = lint(str(not_vllm))
    assert code == 2 and "no vLLM engine" in err
    code, _, err = lint(KUBEAI_70B, "--vllm", "banana")
    assert code == 2 and err.startswith("sched-reader: error:")
    code, _, err = lint(KUBEAI_70B, "--select", "XYZ")
    assert code == 2 and "matches no rule" in err
    code, _, err = lint()
    assert code == 2 and "nothing to lint" in err
    code, _, _ = lint(KUBEAI_70B, "--format", "yaml")  # usage error from click
    assert code == 2


def test_broken_deploy_file_is_sr001_not_a_crash(tmp_path):
    bad = tmp_path / "broken.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nspec:\n  containers: [\n    - image: vllm/vllm-openai\n")
    code, doc = lint_json(str(bad))
    assert code == 1
    [f] = doc["findings"]
    assert f["rule"] == "SR001" and f["severity"] == "error" and f["file"] == str(bad)


def test_bad_flag_value_is_sr001_with_its_line(tmp_path):
    p = tmp_path / "serve.sh"
    p.write_text("#!/bin/sh\nvllm serve Qwen/Qwen2.5-7B-Instruct \\\n  --max-model-len abc\n")
    code, doc = lint_json(str(p), "--vllm", "0.19.0")
    assert code == 1
    # issue 10: a value vLLM refuses is a finding on the engine (SR103), not an unreadable file
    [f] = [f for f in doc["findings"] if f["rule"] in ("SR001", "SR103")]
    assert f["line"] == 3 and f["key"] == "--max-model-len" and f["severity"] == "error"


# ------------------------------------------------------------------------------------------------
# Directories
# ------------------------------------------------------------------------------------------------


def test_directory_walk_is_sorted_and_skips_non_vllm_files(tmp_path):
    d = tmp_path / "deploy"
    (d / "b").mkdir(parents=True)
    (d / ".hidden").mkdir()
    (d / "b" / "serve.sh").write_text("vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096\n")
    (d / "a.yml").write_text("services:\n  web:\n    image: nginx\n")  # compose without vLLM
    (d / "notes.txt").write_text("vllm serve x\n")  # not a walked suffix
    (d / "ci.yaml").write_text("on: [push]\njobs: {}\n")
    (d / "helm-template.yaml").write_text("{{- if .Values.enabled }}\nkind: {{ .Values.kind }}\n")
    (d / ".hidden" / "x.yaml").write_text("model: Qwen/Qwen2.5-7B-Instruct\n")
    # plain mappings whose keys look like flags would read as a vLLM --config file: not in a walk
    (d / "kustomization.yaml").write_text("resources:\n  - deployment.yaml\nnamespace: serving\n")
    (d / "values.yaml").write_text("replicaCount: 1\nimage:\n  repository: nginx\n")
    (d / "vllm.yaml").write_text("model: Qwen/Qwen2.5-7B-Instruct\nmax_num_seqs: 64\nport: 8000\nlabel: x\n")
    code, doc = lint_json(str(d), "--vllm", "0.19.0")
    files = [f["file"] for f in doc["files"]]
    assert files == sorted(files, key=lambda p: Path(p).parts)
    assert {Path(f).name for f in files} == {"a.yml", "ci.yaml", "helm-template.yaml", "kustomization.yaml",
                                             "serve.sh", "values.yaml", "vllm.yaml"}
    skipped = {Path(f["file"]).name for f in doc["files"] if f["skipped"]}
    assert skipped == {"a.yml", "ci.yaml", "helm-template.yaml", "kustomization.yaml", "values.yaml"}
    assert doc["summary"]["engines"] == 2 and code == 1  # vllm.yaml: `label` is no vLLM flag (SR101)
    _, text, _ = lint(str(d), "--vllm", "0.19.0", "--format", "text")
    assert "note: skipped" in text


def test_fixture_tree_runs_whole_and_is_deterministic():
    first = lint("tests/data/deploy", "--vllm", "0.19.0", "--format", "json")
    second = lint("tests/data/deploy", "--vllm", "0.19.0", "--format", "json")
    assert first == second
    code, out, _ = first
    doc = json.loads(out)
    n_files = len([p for p in DEPLOY.rglob("*") if p.suffix in (".yaml", ".yml", ".sh", ".mk") or p.name == "Makefile"])
    assert doc["summary"]["files"] == n_files and doc["summary"]["skipped_files"] == 0
    assert doc["summary"]["engines"] >= n_files
    assert code == 1  # --disable-log-requests / --cuda-graph-sizes are unknown in 0.19.0
    order = [(f["file"] or "", f["line"] or 0, f["rule"]) for f in doc["findings"]]
    assert order == sorted(order)


def test_same_file_twice_is_linted_once():
    _, doc = lint_json(KUBEAI_70B, KUBEAI_70B, str(ROOT / KUBEAI_70B), "--no-capacity")
    assert len(doc["files"]) == 1


def test_command_line_after_double_dash():
    code, doc = lint_json("--vllm", "0.19.0", "--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct",
                          "--disable-log-requests")
    assert code == 1
    assert doc["files"][0]["file"] == "<command line>"
    assert [f["rule"] for f in doc["findings"] if f["severity"] == "error"] == ["SR101"]


# ------------------------------------------------------------------------------------------------
# Inline directives
# ------------------------------------------------------------------------------------------------

_MANIFEST = """\
apiVersion: kubeai.org/v1
kind: Model
metadata:
  name: m
spec:
  url: hf://Qwen/Qwen2.5-7B-Instruct
  engine: VLLM
  args:
    - --max-model-len=4096
{directive_above}    - --disable-log-requests{directive_inline}
    - --no-such-flag=1
  resourceProfile: nvidia-gpu-h100:1
"""


def _manifest(tmp_path: Path, above: str = "", inline: str = "", extra: str = "") -> str:
    p = tmp_path / "model.yaml"
    p.write_text(extra + _MANIFEST.format(directive_above=above, directive_inline=inline))
    return str(p)


def _errors(path: str) -> list[tuple[str, str]]:
    _, doc = lint_json(path, "--vllm", "0.19.0", "--no-capacity")
    return sorted((f["rule"], f["key"]) for f in doc["findings"] if f["severity"] == "error")


def test_no_directive_two_unknown_flags(tmp_path):
    assert _errors(_manifest(tmp_path)) == [("SR101", "--disable-log-requests"), ("SR101", "--no-such-flag")]


@pytest.mark.parametrize("inline", ["  # sched-reader: ignore SR101", "  # sched-reader: ignore[SR101,SR104]",
                                    "  # sched-reader: ignore", "  # sched-reader: ignore SR1 -- legacy",
                                    "  #sched-reader:ignore unknown-flag"])
def test_inline_directive_on_the_line(tmp_path, inline):
    assert _errors(_manifest(tmp_path, inline=inline)) == [("SR101", "--no-such-flag")]


def test_directive_on_the_comment_line_above(tmp_path):
    path = _manifest(tmp_path, above="    # sched-reader: ignore[SR101]\n")
    assert _errors(path) == [("SR101", "--no-such-flag")]
    code, doc = lint_json(path, "--vllm", "0.19.0", "--no-capacity")
    assert doc["summary"]["suppressed"] == 1
    [sup] = doc["files"][0]["engines"][0]["suppressed"]
    assert sup["key"] == "--disable-log-requests"


def test_directive_for_another_rule_does_not_suppress(tmp_path):
    path = _manifest(tmp_path, inline="  # sched-reader: ignore SR104")
    assert len(_errors(path)) == 2


def test_trailing_directive_does_not_reach_the_next_line(tmp_path):
    # a directive after code covers its own line only; the next line's flag is still reported
    p = tmp_path / "serve.yaml"
    p.write_text("model: Qwen/Qwen2.5-7B-Instruct\nmax-model-len: 4096  # sched-reader: ignore\n"
                 "disable-log-requests: true\n")
    assert _errors(str(p)) == [("SR101", "disable-log-requests")]


def test_ignore_file(tmp_path):
    path = _manifest(tmp_path, extra="# sched-reader: ignore-file\n")
    code, doc = lint_json(path, "--vllm", "0.19.0")
    assert code == 0 and doc["files"][0]["skipped"] and doc["summary"]["engines"] == 0


def test_ignore_file_with_rules(tmp_path):
    path = _manifest(tmp_path, extra="# sched-reader: ignore-file[SR101]\n")
    code, doc = lint_json(path, "--vllm", "0.19.0", "--no-capacity")
    assert code == 0 and not any(f["rule"] == "SR101" for f in doc["findings"])
    assert doc["summary"]["suppressed"] == 2


def test_directives_in_shell_scripts(tmp_path):
    p = tmp_path / "serve.sh"
    p.write_text("#!/bin/sh\n# sched-reader: ignore SR101\nvllm serve Qwen/Qwen2.5-7B-Instruct --disable-log-requests\n")
    code, doc = lint_json(str(p), "--vllm", "0.19.0", "--no-capacity")
    assert code == 0 and not any(f["rule"] == "SR101" for f in doc["findings"])


def test_parse_directives_unit():
    d = lint_pipeline.parse_directives(
        "a: 1  # sched-reader: ignore[SR101, sr104]\n"
        "# sched-reader: ignore\n"
        "b: 2\n"
        "c: '# not sched-reader at all'\n"
        "# sched-reader: ignore-file[SR2]\n"
    )
    assert d.lines == {1: ["SR101", "SR104"], 2: None}
    assert d.comment_only == {2}
    assert d.file_selectors == ["SR2"] and not d.ignore_file
    assert d.suppresses("SR101", 1) and not d.suppresses("SR102", 1)
    assert d.suppresses("SR999", 3)  # bare ignore on the comment line above
    assert not d.suppresses("SR101", 2 + 2)
    assert d.suppresses("SR203", None)


# ------------------------------------------------------------------------------------------------
# Selection, formats, output
# ------------------------------------------------------------------------------------------------


def test_select_and_ignore():
    _, doc = lint_json(KUBEAI_70B, "--vllm", "0.19.0", "--select", "SR1")
    assert doc["findings"] and all(f["rule"].startswith("SR1") for f in doc["findings"])
    code, doc = lint_json(KUBEAI_70B, "--vllm", "0.19.0", "--ignore", "unknown-flag,SR2")
    assert code == 0 and all(f["rule"] != "SR101" and not f["rule"].startswith("SR2") for f in doc["findings"])
    _, doc = lint_json(KUBEAI_70B, "--vllm", "0.19.0", "--select", "SR101", "--select", "SR202")
    assert {f["rule"] for f in doc["findings"]} <= {"SR101", "SR202"}


def test_format_auto_follows_github_env():
    _, out, _ = lint(KUBEAI_70B, "--vllm", "0.19.0", env={"GITHUB_ACTIONS": "true", "GITHUB_WORKFLOW": "ci"})
    assert out.startswith("::group::")
    _, out, _ = lint(KUBEAI_70B, "--vllm", "0.19.0", env={"GITHUB_ACTIONS": "true"})
    assert not out.startswith("::")


def test_github_step_summary_is_appended(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("before\n")
    lint(KUBEAI_70B, "--vllm", "0.19.0", "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)})
    text = summary.read_text()
    assert text.startswith("before\n") and "| severity | rule |" in text and "SR101 unknown-flag" in text


def test_output_and_sarif_file(tmp_path):
    out_path, sarif_path = tmp_path / "out.xml", tmp_path / "r.sarif"
    code, out, _ = lint(KUBEAI_70B, "--vllm", "0.19.0", "--format", "junit", "--output", str(out_path),
                        "--sarif-file", str(sarif_path))
    assert code == 1 and out == ""
    assert out_path.read_text().startswith('<?xml version="1.0" encoding="UTF-8"?>')
    assert json.loads(sarif_path.read_text())["version"] == "2.1.0"


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_every_format_same_bytes_twice(fmt):
    args = (KUBEAI_70B, "tests/data/deploy/compose/Chatbot_IA_Ceprud__docker-compose-vllm.yml", "--vllm", "0.19.0",
            "--format", fmt)
    assert lint(*args) == lint(*args)
