"""Shared test helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
DEPLOY = DATA / "deploy"
ROOT = Path(__file__).resolve().parents[1]


def load_script(relpath: str, name: str | None = None):
    """Import a repository script that is not a package module (``benchmarks/x.py``, ``tools/y.py``) by path.

    Registered in ``sys.modules`` under ``name`` (default: the file's stem) before it runs, so dataclasses
    and pickling can look their module up. Tests import it as ``from conftest import load_script`` (pytest puts
    this folder on ``sys.path`` for its conftest)."""
    import importlib.util
    import sys

    path = ROOT / relpath
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def run_cli(capsys):
    """Run the real entry point (``main``) with argv; return (exit_code, stdout, stderr)."""
    from sched_reader.cli.app import main
    from sched_reader.cli.common import COMMAND_LINE

    def _run(*argv: str) -> tuple[int, str, str]:
        token = COMMAND_LINE.set(None)
        code = 0
        try:
            main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            COMMAND_LINE.reset(token)
        out = capsys.readouterr()
        return code, out.out, out.err

    return _run


@pytest.fixture(autouse=True)
def _wide_output(monkeypatch):
    """Content tests read whole lines: give text reports a wide page (COLUMNS=1000) so they do not wrap.

    Tests of the layout itself (tests/report/test_layout_width.py) set COLUMNS or unset it explicitly."""
    monkeypatch.setenv("COLUMNS", "1000")
