"""Shared test helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
DEPLOY = DATA / "deploy"


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
