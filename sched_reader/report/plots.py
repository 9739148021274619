"""Pictures (``--plot FILE.png|svg``) through the optional ``plot`` extra (matplotlib).

Placeholder until the renderers land: only the target check.
"""

from __future__ import annotations

from pathlib import Path

from sched_reader.errors import InputError

FORMATS = (".png", ".svg")
INSTALL_HINT = "pip install 'sched-reader[plot]'"


def check_plot_target(path: Path) -> None:
    """Fail early (before any work) on an unknown image format or a missing matplotlib."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise InputError(f"unknown image format {path.suffix or '(none)'!r}; use .png or .svg", key="--plot")
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise InputError("--plot needs matplotlib, which is not installed", key="--plot",
                         hint=f"install the plot extra: {INSTALL_HINT}")
