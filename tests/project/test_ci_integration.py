"""The CI integrations teams adopt: the pre-commit hook, the composite GitHub Action, the sample
repository under examples/ci/ and the README's CI section (run line by line, as written).

The hook is exercised the way pre-commit runs it (files chosen by its `files`/`exclude` regexes from
`git ls-files`, the `entry` split like a shell word list, the file names appended); the real
`pre-commit try-repo` needs to build a virtualenv from a package index, so that test is opt-in
(SCHED_READER_TEST_PRECOMMIT=1 with pre-commit installed).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SERVE_SR101 = "#!/bin/sh\nvllm serve Qwen/Qwen2.5-7B-Instruct --disable-log-requests\n"


@pytest.fixture
def shim(tmp_path_factory) -> Path:
    """A directory with a `sched-reader` executable that runs this checkout with this interpreter."""
    d = tmp_path_factory.mktemp("bin")
    exe = d / "sched-reader"
    exe.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m sched_reader \"$@\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return d


def _env(shim: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "SCHED_READER_"))}
    env.pop("CI", None)
    env["PATH"] = f"{shim}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def _git_repo(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    subprocess.run(["git", "add", "-A"], cwd=path, check=True)
    return path


# ------------------------------------------------------------------------------------------------
# pre-commit hook
# ------------------------------------------------------------------------------------------------


def _hook() -> dict:
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    return hook


def test_hook_definition():
    hook = _hook()
    assert hook["id"] == "sched-reader-lint" and hook["language"] == "python"
    assert shlex.split(hook["entry"])[:2] == ["sched-reader", "lint"]
    assert "--skip-unrecognized" in hook["entry"] and hook["require_serial"] is True
    files, exclude = re.compile(hook["files"]), re.compile(hook["exclude"])

    def picked(p: str) -> bool:  # pre-commit: `files` re.search, then not `exclude`
        return bool(files.search(p)) and not exclude.search(p)

    for p in ("deploy/chat.yaml", "k8s/vllm.yml", "scripts/serve.sh", "charts/values.yaml"):
        assert picked(p), p
    for p in ("README.md", "pyproject.toml", ".pre-commit-config.yaml", ".sched-reader.yaml",
              "sub/.sched-reader.yml", "baseline.json", "serve.shx"):
        assert not picked(p), p


def _run_hook_like_pre_commit(repo: Path, shim: Path) -> subprocess.CompletedProcess:
    hook = _hook()
    tracked = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True).stdout
    files, exclude = re.compile(hook["files"]), re.compile(hook["exclude"])
    chosen = [p for p in tracked.split() if files.search(p) and not exclude.search(p)]
    return subprocess.run(shlex.split(hook["entry"]) + chosen, cwd=repo, capture_output=True, text=True,
                          env=_env(shim))


def test_hook_entry_fails_on_a_finding_and_skips_other_yaml(tmp_path, shim):
    repo = _git_repo(tmp_path / "r", {
        "deploy/serve.sh": SERVE_SR101,
        ".github/workflows/ci.yml": "name: ci\non: [push]\njobs: {}\n",
        ".pre-commit-config.yaml": "repos: []\n",
        ".sched-reader.yaml": "vllm: 0.19.0\n",
        "docs/notes.yaml": "title: not a deploy file\n",
    })
    r = _run_hook_like_pre_commit(repo, shim)
    assert r.returncode == 1, r.stderr
    assert "deploy/serve.sh:2: error SR101 unknown-flag" in r.stdout
    assert "skipped .github/workflows/ci.yml" in r.stdout and "skipped docs/notes.yaml" in r.stdout
    (repo / "deploy/serve.sh").write_text("#!/bin/sh\nvllm serve Qwen/Qwen2.5-7B-Instruct\n")
    r = _run_hook_like_pre_commit(repo, shim)
    assert r.returncode == 0, r.stdout + r.stderr


def test_hook_entry_honours_config_excludes(tmp_path, shim):
    repo = _git_repo(tmp_path / "r", {"legacy/serve.sh": SERVE_SR101,
                                      ".sched-reader.yaml": "vllm: 0.19.0\nextend-exclude: ['legacy/**']\n"})
    r = _run_hook_like_pre_commit(repo, shim)
    assert r.returncode == 0 and "excluded by 'legacy/**'" in r.stdout


@pytest.mark.skipif(os.environ.get("SCHED_READER_TEST_PRECOMMIT") != "1" or shutil.which("pre-commit") is None,
                    reason="opt-in: builds the hook's virtualenv from a package index (minutes)")
def test_pre_commit_try_repo(tmp_path):
    repo = _git_repo(tmp_path / "r", {"serve.sh": SERVE_SR101, "ci.yaml": "name: ci\n"})
    r = subprocess.run(["pre-commit", "try-repo", str(ROOT), "sched-reader-lint", "--all-files"], cwd=repo,
                       capture_output=True, text=True, env={**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pc")},
                       timeout=900)
    assert r.returncode == 1 and "serve.sh:2: error SR101" in r.stdout and "skipped ci.yaml" in r.stdout


# ------------------------------------------------------------------------------------------------
# GitHub Action
# ------------------------------------------------------------------------------------------------


def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def test_action_is_composite_and_never_interpolates_inputs_into_scripts():
    action = _action()
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    used = set()
    for step in steps:
        assert step["shell"] == "bash"  # required with `run`
        assert "${{" not in step["run"]  # inputs only through env: no script injection
        script = re.search(r'\$GITHUB_ACTION_PATH/([\w/.-]+)', step["run"]).group(1)
        assert os.access(ROOT / script, os.X_OK), script
        used |= set(re.findall(r"inputs\.([\w-]+)", json.dumps(step.get("env", {}))))
    assert used == set(action["inputs"])  # every input reaches a script
    assert set(action["outputs"]) == {"sarif-file", "exit-code"}


def _lint_step(tmp_path: Path, shim: Path, repo: Path, **inputs: str) -> tuple[subprocess.CompletedProcess, dict]:
    out_file = tmp_path / "github_output"
    out_file.write_text("")
    env = _env(shim, GITHUB_ACTIONS="true", GITHUB_WORKFLOW="ci", GITHUB_OUTPUT=str(out_file),
               GITHUB_ACTION_PATH=str(ROOT), GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"))
    [step] = [s for s in _action()["runs"]["steps"] if s.get("id") == "lint"]
    for name, expr in step["env"].items():  # what the runner does with `${{ inputs.x }}`
        key = re.search(r"inputs\.([\w-]+)", expr).group(1)
        env[name] = inputs.get(key, _action()["inputs"][key].get("default", ""))
    r = subprocess.run(["bash", "-c", step["run"]], cwd=repo, env=env, capture_output=True, text=True)
    outputs = dict(line.split("=", 1) for line in out_file.read_text().splitlines())
    return r, outputs


def test_action_lint_step_annotates_writes_sarif_and_keeps_the_exit_code(tmp_path, shim):
    repo = _git_repo(tmp_path / "r", {"deploy/serve.sh": SERVE_SR101})
    r, outputs = _lint_step(tmp_path, shim, repo, paths="deploy/", vllm="0.19.0")
    assert r.returncode == 1, r.stderr
    assert "::error file=deploy/serve.sh,line=2,title=SR101 unknown-flag::" in r.stdout
    assert outputs == {"sarif-file": "sched-reader.sarif", "exit-code": "1"}
    sarif = json.loads((repo / "sched-reader.sarif").read_text())
    [res] = sarif["runs"][0]["results"]
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "deploy/serve.sh"
    assert "| SR101" in (tmp_path / "summary.md").read_text()
    r, outputs = _lint_step(tmp_path, shim, repo, paths="deploy/", vllm="0.19.0", **{"fail-on": "never"})
    assert r.returncode == 0 and outputs["exit-code"] == "0"


def test_action_inputs_cannot_inject_shell(tmp_path, shim):
    repo = _git_repo(tmp_path / "r", {"deploy/serve.sh": SERVE_SR101})
    r, outputs = _lint_step(tmp_path, shim, repo, paths="deploy/ $(touch pwned) `touch pwned2`", vllm="0.19.0")
    assert not (repo / "pwned").exists() and not (repo / "pwned2").exists()
    assert r.returncode == 2 and outputs["exit-code"] == "2"  # the odd words are paths that do not exist
    assert "::error file=deploy/serve.sh,line=2" in r.stdout  # ... and the real one is still linted


def test_action_install_step(tmp_path):
    [step] = [s for s in _action()["runs"]["steps"] if "install" in s["run"]]
    for version, expected in (("v0.2.0", "sched-reader==0.2.0"), ("", str(ROOT))):
        env = {**os.environ, "GITHUB_ACTION_PATH": str(ROOT), "SR_DRY_RUN": "1", "SR_VERSION": version,
               "SR_PYTHON": "python3"}
        r = subprocess.run(["bash", "-c", step["run"]], env=env, capture_output=True, text=True, check=True)
        assert shlex.split(r.stdout)[-1] == expected and "-m pip install" in r.stdout


def test_sample_workflow_uses_the_action_and_uploads_sarif():
    wf = yaml.safe_load((ROOT / "examples/ci/.github/workflows/sched-reader.yml").read_text())
    steps = wf["jobs"]["lint"]["steps"]
    [ours] = [s for s in steps if s.get("uses", "").startswith("sched-reader/sched-reader@")]
    assert set(ours["with"]) <= set(_action()["inputs"])
    [upload] = [s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert upload["if"].startswith("always()") and upload["with"]["sarif_file"] == ours["with"]["sarif-file"]
    cfg = yaml.safe_load((ROOT / "examples/ci/.pre-commit-config.yaml").read_text())
    assert cfg["repos"][0]["hooks"][0]["id"] == _hook()["id"]


# ------------------------------------------------------------------------------------------------
# README "As a CI gate": every command runs as written, with the exit code its comment states
# ------------------------------------------------------------------------------------------------


def _readme_ci_block() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## As a CI gate"):]
    block = section[section.index("```bash\n") + 8:]
    return block[:block.index("```")].strip().splitlines()


def test_readme_ci_section_runs_as_written(tmp_path, monkeypatch):
    """In-process (the CLI app, no interpreter start per line) in a copy of examples/ci; a `cat F |` pipe
    becomes the command's standard input."""
    from typer.testing import CliRunner

    from sched_reader.cli.app import app
    from sched_reader.cli.common import COMMAND_LINE

    token = COMMAND_LINE.set(None)  # no command line after `--` (another test may have left one set)
    try:
        _run_readme_block(tmp_path, monkeypatch, CliRunner, app)
    finally:
        COMMAND_LINE.reset(token)


def _run_readme_block(tmp_path, monkeypatch, CliRunner, app) -> None:
    lines = _readme_ci_block()
    assert lines[0] == "cd examples/ci"
    work = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "ci", work / "examples" / "ci")
    (work / ".git").mkdir()
    cwd = work
    baseline_before = (work / "examples/ci/sched-reader-baseline.json").read_text()
    for key in [k for k in os.environ if k.startswith("GITHUB_")] + ["CI"]:
        monkeypatch.delenv(key, raising=False)
    for line in lines:
        cmd, _, comment = line.partition("  #")
        if cmd.startswith("cd "):
            cwd = cwd / cmd[3:].strip()
            continue
        m = re.search(r"exit (\d)", comment)
        expected = int(m.group(1)) if m else 0
        stdin = None
        if "|" in cmd:
            feed, cmd = cmd.split("|", 1)
            [cat, src] = shlex.split(feed)
            assert cat == "cat"
            stdin = (cwd / src).read_text()
        argv = shlex.split(cmd)
        assert argv[0] == "sched-reader"
        monkeypatch.chdir(cwd)
        r = CliRunner().invoke(app, argv[1:], input=stdin, catch_exceptions=False)
        assert r.exit_code == expected, f"{cmd}\n{r.stdout}\n{r.stderr}"
        if "--select SR999" in cmd:
            assert "did you mean" in r.stderr
        if "missing.yaml" in cmd:
            assert "No findings in 1 file" in r.stdout and "missing.yaml: file not found" in r.stderr
    # the committed baseline is current: writing it again gives the same bytes
    assert (work / "examples/ci/sched-reader-baseline.json").read_text() == baseline_before
    sarif = json.loads((work / "examples/ci/sched-reader.sarif").read_text())
    assert sarif["version"] == "2.1.0"
