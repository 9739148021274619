"""Shared plumbing of the ``compat`` runners: format check, mode check, errors as one line (exit 2)."""

from __future__ import annotations

import sys
from typing import Callable

from sched_reader.report.layout import wrap_text
from sched_reader.errors import EXIT_ERROR, SchedReaderError

FORMATS = ("text", "json", "markdown")


def err(message: str) -> int:
    sys.stderr.write(f"sched-reader: error: {message}\n")
    return EXIT_ERROR


def out(text: str, fmt: str = "text") -> None:
    """Write ``text``; text output is wrapped to the output width with hanging indents (JSON and
    markdown are written as they are)."""
    if fmt == "text":
        text = wrap_text(text)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def check_usage(fmt: str, *, modes: int, has_inputs: bool) -> str | None:
    """The usage error of these options, or None (``modes``: how many of --diff/--flag/--list)."""
    if fmt not in FORMATS:
        return f"--format must be one of {', '.join(FORMATS)}; got {fmt!r}"
    if modes > 1:
        return "use one of --diff, --flag, --list at a time"
    if modes and has_inputs:
        return "--diff, --flag and --list take no config files"
    return None


def guarded(fn: Callable[[], int]) -> int:
    """Run ``fn``; a user error or an unexpected one becomes one line on stderr and exit code 2."""
    try:
        return fn()
    except SchedReaderError as e:
        return err(str(e))
    except (OSError, ValueError) as e:
        return err(f"{type(e).__name__}: {e}")
    except Exception as e:  # noqa: BLE001 - last line of defence: never a traceback
        return err(f"internal error: {type(e).__name__}: {e} (please report this with the input)")
