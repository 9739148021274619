"""Where text formatters write: rich on a terminal (styles, wrapping), plain lines when piped.

Piped output (CI logs, `| grep`, tests) gets no colour, no wrapping and no rich import at all, which
keeps a one-file `sched-reader config` run fast and its bytes stable.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO


class PlainConsole:
    """The subset of ``rich.console.Console.print`` the formatters use, as plain text lines."""

    def __init__(self, file: TextIO) -> None:
        self.file = file

    def print(self, *objects: Any, **_style: Any) -> None:  # noqa: A003 - mirrors rich's API
        self.file.write(" ".join(str(o) for o in objects) + "\n")


def make_console(stderr: bool = False) -> Any:
    """A rich console on a colour-capable terminal, else a ``PlainConsole``."""
    stream = sys.stderr if stderr else sys.stdout
    is_tty = hasattr(stream, "isatty") and stream.isatty()
    if not is_tty or os.environ.get("NO_COLOR"):
        return PlainConsole(stream)
    from rich.console import Console

    return Console(file=stream, highlight=False, soft_wrap=False, emoji=False)
