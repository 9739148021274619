"""Load ``data/chart_rendering.yaml``: how Helm charts render typed values into vLLM flags (with sources)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

_PATH = Path(__file__).with_name("data") / "chart_rendering.yaml"


@lru_cache(maxsize=1)
def chart_facts() -> dict[str, Any]:
    """The parsed facts file (cached)."""
    return yaml.safe_load(_PATH.read_text(encoding="utf-8"))


def go_string(value: Any) -> str:
    """A scalar as Helm's ``quote`` renders it: ``True`` -> ``"true"``, ``0.8`` -> ``"0.8"``, ``4096`` -> ``"4096"``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)
