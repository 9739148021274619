"""`sched-reader config` (placeholder: the owner replaces this module)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the command to the app (not yet implemented)."""
