"""The rich console every text formatter writes to (fixed width off a terminal, for stable bytes)."""

from __future__ import annotations

import os
import sys

from rich.console import Console


def make_console(stderr: bool = False) -> Console:
    """A console that wraps at the terminal width, or at 100 columns when output is piped."""
    stream = sys.stderr if stderr else sys.stdout
    is_tty = hasattr(stream, "isatty") and stream.isatty()
    return Console(
        file=stream,
        width=None if is_tty else 100,
        no_color=bool(os.environ.get("NO_COLOR")) or not is_tty,
        highlight=False,
        soft_wrap=not is_tty,
        emoji=False,
    )
