"""Finding severities and their order (kept free of pydantic so the CLI can import it cheaply)."""

from __future__ import annotations

from typing import Literal

Severity = Literal["error", "warning", "info"]

SEVERITY_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}


def at_or_above(severity: str, threshold: str) -> bool:
    """Whether a finding of ``severity`` reaches the ``--fail-on`` ``threshold`` (``never``: nothing does)."""
    return threshold != "never" and SEVERITY_RANK[severity] >= SEVERITY_RANK[threshold]
