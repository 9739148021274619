"""Two start-up costs of a CLI process that buy nothing, removed by the process entry point (``cli/entry.py``)
only: importing sched-reader as a library changes neither.

**PyYAML's non-printable-character check, compiled on first use.** ``yaml/reader.py`` compiles, while ``import yaml`` runs, ``Reader.NON_PRINTABLE``: a character class over the
whole of Unicode whose compilation (``re``'s charset optimiser walks its ranges) costs ~56 M instructions, ~4%
of a ``diagnose`` process. Only PyYAML's pure-Python reader uses it; sched-reader reads deploy files and its
data files with libyaml's ``CSafeLoader`` when PyYAML has it, and few CLI runs meet the pure-Python reader
(``lint``'s key positions, a PyYAML built without libyaml). :func:`import_yaml` imports yaml with that one
pattern answered by a :class:`_LazyPattern`, which compiles the real pattern the first time the reader
searches with it: the same pattern and the same matches, paid for only by a run that uses it. It goes through
``re``'s own compile cache (a pattern found there is not compiled again); on a Python whose ``re`` does not
keep that cache, the pattern is compiled as before.

**The methods dataclasses generate, compiled once.** ``@dataclass`` writes the source of ``__init__``,
``__repr__``, ``__eq__`` (and ``__hash__``, ``__setattr__`` ... as asked) of each class and compiles it with
``exec`` whenever the class's module is imported: ~85 classes on the way of a ``diagnose``, ~200 M
instructions (~13% of the process), nearly all of it in the compiler. The source is the same on every run, so
the compiled code is too: as CPython keeps a module's bytecode in ``__pycache__``, :func:`cache_dataclass_code`
keeps the code of each generated method, keyed by its source text, in ``sched_reader/__pycache__/`` (one
``marshal`` file per interpreter, checked against the interpreter's bytecode magic number, written only when a
run compiled something new, atomically, and never when bytecode writing is off or sent elsewhere:
``PYTHONDONTWRITEBYTECODE``, ``-B``, ``PYTHONPYCACHEPREFIX``). A method whose source is not in the file is compiled as before, so a stale or missing file costs time,
never a difference: ``exec`` of the cached code builds the very function ``exec`` of the text would. It replaces
``dataclasses._create_fn`` on CPython 3.11 (the same body, the code looked up before it is compiled) and does
nothing on another Python. The same file keeps the code of the annotations ``typing.ForwardRef`` compiles
(~740 in a ``diagnose``, nearly all for the ``TypedDict`` classes of ``pydantic_core.core_schema``), through
a ``compile`` that ``typing``'s own global name finds before the builtin.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import marshal
import os
import re
import sys
import typing
from pathlib import Path
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


_DC_FILE = Path(__file__).resolve().parents[1] / "__pycache__" / f"dataclass_methods.{sys.implementation.cache_tag}.bin"
_dc_code: dict[str, Any] = {}     # source text of a generated method's factory (or _EVAL + an annotation) -> code
_dc_new: list[str] = []           # texts compiled in this run, not found in the file
_EVAL = "eval\0"                 # key prefix of a ForwardRef's expression


def _load_dc_code(path: Path) -> dict[str, Any]:
    """The cached code objects, or {} when the file is missing, unreadable or from another interpreter."""
    try:
        blob = path.read_bytes()
        if not blob.startswith(importlib.util.MAGIC_NUMBER):
            return {}
        got = marshal.loads(blob[len(importlib.util.MAGIC_NUMBER):])
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    return got if isinstance(got, dict) else {}


def _create_fn(name, args, body, *, globals=None, locals=None, return_type=dataclasses.MISSING):  # noqa: A002
    """``dataclasses._create_fn`` (CPython 3.11, line for line) with the compiled code looked up first."""
    if locals is None:
        locals = {}
    return_annotation = ""
    if return_type is not dataclasses.MISSING:
        locals["_return_type"] = return_type
        return_annotation = "->_return_type"
    args = ",".join(args)
    body = "\n".join(f"  {b}" for b in body)
    txt = f" def {name}({args}){return_annotation}:\n{body}"
    local_vars = ", ".join(locals.keys())
    txt = f"def __create_fn__({local_vars}):\n{txt}\n return {name}"
    code = _dc_code.get(txt)
    if code is None:
        # as exec(txt) in dataclasses.py compiles it: no __future__ flag of this module (dont_inherit)
        code = _dc_code[txt] = compile(txt, "<string>", "exec", dont_inherit=True)
        _dc_new.append(txt)
    ns: dict[str, Any] = {}
    exec(code, globals, ns)
    return ns["__create_fn__"](**locals)


def _typing_compile(source, filename, mode, flags=0, dont_inherit=False, optimize=-1):  # noqa: ANN001, ANN202
    """``compile`` as ``typing`` calls it (``ForwardRef``: an annotation's text, ``'<string>'``, ``'eval'``),
    with that code looked up first. ``dont_inherit``: typing.py has no ``__future__`` flag to pass on."""
    if not (type(source) is str and filename == "<string>" and mode == "eval" and flags == 0 and optimize == -1):
        return compile(source, filename, mode, flags, True, optimize)
    key = _EVAL + source
    code = _dc_code.get(key)
    if code is None:
        code = _dc_code[key] = compile(source, filename, mode, 0, True)
        _dc_new.append(key)
    return code


def cache_dataclass_code(path: Path = _DC_FILE) -> bool:
    """Compile dataclass methods from the cache at ``path`` from now on (see the module docstring); False when
    this Python's ``dataclasses`` is not the one the replacement copies (then nothing changes)."""
    if sys.version_info[:2] != (3, 11) or not hasattr(dataclasses, "_create_fn"):
        return False
    global _DC_FILE
    _DC_FILE = path
    _dc_code.update(_load_dc_code(path))
    dataclasses._create_fn = _create_fn
    typing.compile = _typing_compile      # a global of typing's shadows the builtin for ForwardRef alone
    return True


def save_dataclass_code() -> None:
    """Write the cache when this run compiled a method it did not hold (atomically; errors ignored)."""
    if not _dc_new or sys.dont_write_bytecode or sys.pycache_prefix:
        return
    _dc_new.clear()
    tmp = _DC_FILE.with_name(f"{_DC_FILE.name}.{os.getpid()}.tmp")
    try:
        _DC_FILE.parent.mkdir(exist_ok=True)
        tmp.write_bytes(importlib.util.MAGIC_NUMBER + marshal.dumps(_dc_code))
        os.replace(tmp, _DC_FILE)
    except (OSError, ValueError):
        try:
            tmp.unlink()
        except OSError:
            pass
