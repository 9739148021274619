"""Where text formatters write: rich on a terminal (styles), plain lines when piped.

Both fit the output width (``report.layout.output_width``: $COLUMNS, the terminal, or 100 columns when
piped): a string longer than the width is wrapped with a hanging indent by ``report.layout.wrap_line``,
never back to column 0. Piped output (CI logs, `| grep`, tests) gets no colour and no rich import at
all, which keeps a one-file `sched-reader config` run fast and its bytes stable.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from sched_reader.report.layout import output_width, wrap_line


class PlainConsole:
    """The subset of ``rich.console.Console.print`` the formatters use, as plain text lines."""

    def __init__(self, file: TextIO, width: int | None = None) -> None:
        self.file = file
        self.width = width or output_width(file)

    def print(self, *objects: Any, **_style: Any) -> None:  # noqa: A003 - mirrors rich's API
        text = " ".join(str(o) for o in objects)
        for line in text.split("\n"):
            for piece in wrap_line(line, self.width) if line.strip() else [line]:
                self.file.write(piece + "\n")


class WrappingConsole:
    """A rich console whose plain strings are wrapped like ``PlainConsole``'s (styles kept)."""

    def __init__(self, console: Any, width: int) -> None:
        self._console = console
        self.width = width

    def print(self, *objects: Any, **kw: Any) -> None:  # noqa: A003
        if objects and all(isinstance(o, str) for o in objects):
            text = " ".join(objects)
            kw.setdefault("markup", False)
            kw["soft_wrap"] = True
            for line in text.split("\n"):
                for piece in wrap_line(line, self.width) if line.strip() else [line]:
                    self._console.print(piece, **kw)
            return
        self._console.print(*objects, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._console, name)


def make_console(stderr: bool = False) -> Any:
    """A rich console on a colour-capable terminal, else a ``PlainConsole``; both fit the width."""
    stream = sys.stderr if stderr else sys.stdout
    is_tty = hasattr(stream, "isatty") and stream.isatty()
    width = output_width(stream)
    if not is_tty or os.environ.get("NO_COLOR"):
        return PlainConsole(stream, width)
    from rich.console import Console

    return WrappingConsole(Console(file=stream, highlight=False, soft_wrap=False, emoji=False, width=width), width)
