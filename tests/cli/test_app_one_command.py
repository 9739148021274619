"""The entry point builds only the named command (a start-up saving); what the user sees must not change."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from sched_reader.cli.app import _COMMAND_MODULES, app, app_for


@pytest.mark.parametrize("name", sorted(_COMMAND_MODULES))
def test_command_help_is_byte_identical_from_the_narrowed_app(name):
    runner = CliRunner()
    full = runner.invoke(app, [name, "--help"], prog_name="sched-reader", terminal_width=100)
    one = runner.invoke(app_for([name, "--help"]), [name, "--help"], prog_name="sched-reader", terminal_width=100)
    assert full.exit_code == 0 and one.exit_code == 0
    assert f"Usage: sched-reader {name}" in one.output
    assert one.output == full.output


def test_entry_point_runs_a_command_through_the_narrowed_app(run_cli):
    code, out, _ = run_cli("rule", "SR117")
    assert code == 0 and "max-num-seqs" in out


def test_narrowed_app_holds_one_command_and_unknown_names_get_the_full_app():
    from typer.main import get_command

    assert sorted(get_command(app_for(["diagnose", "x.yaml"])).commands) == ["diagnose"]
    assert sorted(get_command(app_for(["rules"])).commands) == ["rule", "rules"]
    assert app_for(["diagnos"]) is app and app_for(["--version"]) is app and app_for([]) is app


def test_misspelt_command_still_gets_a_suggestion(run_cli):
    code, _, err = run_cli("diagnos", "x.yaml")
    assert code == 2 and "did you mean 'diagnose'" in err.lower()
