"""PyYAML's non-printable-character check, compiled on first use: done by the process entry point
(``cli/entry.py``) only; importing sched-reader as a library leaves yaml as it is.

``yaml/reader.py`` compiles, while ``import yaml`` runs, ``Reader.NON_PRINTABLE``: a character class over the
whole of Unicode whose compilation (``re``'s charset optimiser walks its ranges) costs ~56 M instructions, ~4%
of a ``diagnose`` process. Only PyYAML's pure-Python reader uses it; sched-reader reads deploy files and its
data files with libyaml's ``CSafeLoader`` when PyYAML has it, and few CLI runs meet the pure-Python reader
(``lint``'s key positions, a PyYAML built without libyaml). :func:`import_yaml` imports yaml with that one
pattern answered by a :class:`_LazyPattern`, which compiles the real pattern the first time the reader
searches with it: the same pattern and the same matches, paid for only by a run that uses it. It goes through
``re``'s own compile cache (a pattern found there is not compiled again); on a Python whose ``re`` does not
keep that cache, the pattern is compiled as before.
"""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any

# yaml/reader.py's Reader.NON_PRINTABLE, character for character (PyYAML 5.1-6.0.x)
NON_PRINTABLE = "[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010ffff]"


class _LazyPattern:
    """A compiled regular expression, compiled when first used; every attribute is the real pattern's."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._real: re.Pattern | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if self._real is None:
            self._real = re._compiler.compile(*self._args)   # what re.compile runs on a cache miss
        return getattr(self._real, name)


def _compile_caches() -> list[dict]:
    """``re``'s compile caches (``_cache``; 3.12+ also ``_cache2``, looked at first)."""
    return [c for c in (getattr(re, "_cache", None), getattr(re, "_cache2", None)) if isinstance(c, dict)]


def import_yaml() -> None:
    """Import yaml with ``Reader.NON_PRINTABLE`` compiled on first use (see the module docstring)."""
    if "yaml" in sys.modules or not hasattr(re, "_compiler"):
        return
    lazy = _LazyPattern(NON_PRINTABLE)
    key = (str, NON_PRINTABLE, 0)
    for cache in _compile_caches():
        cache[key] = lazy
    try:
        importlib.import_module("yaml")
    finally:
        for cache in _compile_caches():
            if cache.get(key) is lazy:
                del cache[key]
