"""Paths that are not deploy files (devices, FIFOs, link loops, long or non-UTF-8 names) (issue 16).

Each case failed before its fix (internal error, a Python exception name, a hang or memory exhaustion)."""

from __future__ import annotations

import os
import sys

import pytest

from hostile import M, SERVE, bounded, one_line_error


def test_deploy_file_with_300_character_name(run_cli):
    one_line_error(*run_cli("config", "b" * 300 + ".yaml")[::2], "file name too long")


@pytest.mark.skipif(sys.platform != "linux", reason="non-UTF-8 file names: Linux file systems")
def test_sarif_with_a_non_utf8_file_name(run_cli, tmp_path, monkeypatch):
    import json

    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"caf\xe9.yaml")
    with open(os.fsencode(tmp_path) + b"/caf\xe9.yaml", "w") as fh:
        fh.write(f"model: {M}\nmax-num-seqs: 0\n")
    code, out, err = run_cli("lint", "--format", "sarif", name)
    assert code in (0, 1), err
    uris = [loc["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads(out)["runs"][0]["results"] for loc in r["locations"]]
    assert "caf%E9.yaml" in uris  # the file name's bytes, percent-encoded as RFC 3986 says


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("argv", [
    ["lint", "/dev/zero"],
    ["config", "/dev/zero"],
    ["diagnose", "--model-config", "/dev/zero", "--", "vllm", "serve", "x/y"],
])
def test_dev_zero_is_refused_before_reading(run_cli, argv):
    with bounded(10, extra_bytes=256 << 20):
        code, _, err = run_cli(*argv)
    one_line_error(code, err, "/dev/zero", "not a regular file")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_symlink_to_dev_zero_in_a_linted_directory(run_cli, tmp_path):
    (tmp_path / "z.yaml").symlink_to("/dev/zero")
    with bounded(10, extra_bytes=256 << 20):
        code, _, err = run_cli("lint", str(tmp_path))
    one_line_error(code, err, "z.yaml", "not a regular file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("where", ["lint", "config", "model-config", "trace", "workload"])
def test_fifo_never_hangs(run_cli, tmp_path, where):
    fifo = tmp_path / "f.yaml"
    os.mkfifo(fifo)
    (tmp_path / "w.yaml").write_text(f"trace: {fifo}\n")
    argv = {
        "lint": ["lint", str(fifo)],
        "config": ["config", str(fifo)],
        "model-config": ["diagnose", "--model-config", str(fifo), "--", "vllm", "serve", "x/y"],
        "trace": ["simulate", "--workload", str(tmp_path / "w.yaml"), *SERVE],
        "workload": ["simulate", "--workload", str(fifo), *SERVE],
    }[where]
    with bounded(10):
        code, _, err = run_cli(*argv)
    one_line_error(code, err, "f.yaml", "not a regular file")


def test_symlink_loop_same_message_in_config_and_lint(run_cli, tmp_path):
    (tmp_path / "a.yaml").symlink_to(tmp_path / "b.yaml")
    (tmp_path / "b.yaml").symlink_to(tmp_path / "a.yaml")
    c = one_line_error(*run_cli("config", str(tmp_path / "a.yaml"))[::2], "symbolic link loop")
    n = one_line_error(*run_cli("lint", str(tmp_path / "a.yaml"))[::2], "symbolic link loop")
    assert c == n


def test_lint_on_an_unlistable_directory_is_exit_2(run_cli, tmp_path, monkeypatch):
    # root can list any directory, so the refusal is simulated at os.scandir, what os.walk calls
    d = tmp_path / "deploy"
    d.mkdir()
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path) == str(d):
            raise PermissionError(13, "Permission denied", str(d))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    one_line_error(*run_cli("lint", str(d))[::2], "deploy", "permission denied")
