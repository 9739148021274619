"""``--fail-on``: which finding severity makes a command exit 1 (typer-free; its option is ``common.FailOnOption``)."""

from __future__ import annotations

from enum import Enum

from sched_reader.errors import EXIT_FINDINGS, EXIT_OK
from sched_reader.severity import at_or_above


class FailOn(str, Enum):
    """Lowest severity that makes the command exit 1 (``never``: always 0 unless input is invalid)."""

    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


def exit_for(specs: list, fail_on: FailOn) -> int:
    """0 or 1 for these engines' findings under the threshold."""
    failing = any(at_or_above(f.severity, fail_on.value) for spec in specs for f in spec.findings)
    return EXIT_FINDINGS if failing else EXIT_OK
