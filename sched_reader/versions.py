"""vLLM release strings as comparable tuples (ground layer: readers, compat and models all compare them).

    version_key("0.10.2") -> (0, 10, 2)             # a plain release string; ValueError otherwise
    parse_version("v0.9") -> (0, 9, 0)              # lenient: a leading v, missing parts, junk parts
"""

from __future__ import annotations

import functools

# What ``parse_version`` answers for no version at all: a recent release (the models' behaviour for a
# spec that names none; the spec builder always resolves one, so this is a fallback for direct callers).
DEFAULT_RELEASE = (0, 19, 0)


@functools.lru_cache(maxsize=4096)
def version_key(version: str) -> tuple[int, ...]:
    """Numeric sort key of a plain release string (``0.10.2`` -> ``(0, 10, 2)``)."""
    return tuple(int(p) for p in version.split("."))


def parse_version(v: str | None) -> tuple[int, int, int]:
    """``"0.19.0"`` -> ``(0, 19, 0)``; a leading ``v`` and non-numeric parts are skipped, missing parts are 0;
    no version -> ``DEFAULT_RELEASE``."""
    if not v:
        return DEFAULT_RELEASE
    parts = [int(x) for x in str(v).lstrip("v").split(".")[:3] if x.isdigit()]
    while len(parts) < 3:
        parts.append(0)
    return (parts[0], parts[1], parts[2])
