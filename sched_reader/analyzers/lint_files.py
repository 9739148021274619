"""Which files ``sched-reader lint`` reads: directory walks with exclude globs and ``.gitignore``.

Globs (``exclude``, ``extend-exclude``, ``per-file-ignores``) are matched against the path relative to
the configuration file's directory, with ``/`` separators:

* ``*`` matches within one path segment, ``**`` across segments, ``?`` one character, ``[ab]`` a set;
* a glob without ``/`` matches a file or directory name at any depth (``build`` skips every
  ``build/`` directory, ``*.tmpl.yaml`` every such file);
* a glob matching a directory excludes everything below it.

``.gitignore`` files (at the walked directory, every directory below it, and every directory above it
up to the repository root) are honoured with git's rules: blank lines and ``#`` comments skipped,
``!`` re-includes, a leading ``/`` (or any inner ``/``) anchors to the ``.gitignore``'s directory, a
trailing ``/`` matches directories only. Hidden files and directories are always skipped in a walk.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sched_reader.limits import display_name, os_error

WALK_SUFFIXES = (".yaml", ".yml", ".sh", ".bash", ".mk", ".sbatch", ".slurm")
WALK_NAMES = ("makefile", "gnumakefile")  # read by name, as `lint FILE` reads them (issue 10)


@lru_cache(maxsize=1024)
def glob_regex(glob: str) -> re.Pattern[str]:
    """The regex for one glob over a ``/``-separated relative path (see module docstring)."""
    g = glob.strip()
    anchored = "/" in g.rstrip("/")
    g = g.lstrip("/").rstrip("/")
    out = []
    i = 0
    while i < len(g):
        c = g[i]
        if g.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if g.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = g.find("]", i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = g[i + 1:end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    body = "".join(out)
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"^{prefix}{body}(?:/.*)?$")


def matches_glob(rel_path: str, glob: str) -> bool:
    """Whether ``rel_path`` (or a directory above it) matches ``glob``."""
    return glob_regex(glob).match(rel_path.replace(os.sep, "/")) is not None


def relative_to(path: str | Path, root: str | Path) -> str | None:
    """``path`` relative to ``root`` with ``/`` separators; None when it lies outside ``root``."""
    try:
        rel = Path(os.path.abspath(path)).relative_to(Path(os.path.abspath(root)))
    except ValueError:
        return None
    return rel.as_posix()


# ------------------------------------------------------------------------------------------------
# .gitignore
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Pattern:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    base: str  # absolute directory of the .gitignore


def _parse_gitignore(path: Path) -> list[_Pattern]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out: list[_Pattern] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        if line.startswith("\\"):
            line = line[1:]
        dir_only = line.endswith("/")
        pat = line.rstrip("/")
        if not pat:
            continue
        anchored = "/" in pat
        g = pat.lstrip("/")
        rx = glob_regex(("/" if anchored else "") + g)
        # gitignore: a pattern names the path itself; being under an ignored directory is handled by the walk
        rx = re.compile(rx.pattern.replace("(?:/.*)?$", "$"))
        out.append(_Pattern(rx, negate, dir_only, str(path.parent.resolve())))
    return out


class GitIgnore:
    """The ``.gitignore`` rules that apply under one directory tree (read lazily, cached per directory)."""

    def __init__(self, stop: Path | None) -> None:
        self._stop = stop.resolve() if stop is not None else None
        self._cache: dict[str, list[_Pattern]] = {}

    def _patterns_of(self, directory: Path) -> list[_Pattern]:
        key = str(directory)
        if key not in self._cache:
            gi = directory / ".gitignore"
            self._cache[key] = _parse_gitignore(gi) if gi.is_file() else []
        return self._cache[key]

    def _chain(self, directory: Path) -> list[_Pattern]:
        """Patterns from the root down to ``directory`` (later ones win)."""
        dirs = []
        d = directory
        while True:
            dirs.append(d)
            if self._stop is None or d == self._stop or d.parent == d:
                break
            d = d.parent
        out: list[_Pattern] = []
        for d in reversed(dirs):
            out.extend(self._patterns_of(d))
        return out

    def ignored(self, path: str | Path, is_dir: bool) -> bool:
        p = Path(os.path.abspath(path))
        if self._stop is None:
            return False
        result = False
        for pat in self._chain(p.parent):
            rel = relative_to(p, pat.base)
            if rel is None or (pat.dir_only and not is_dir):
                continue
            if pat.regex.match(rel):
                result = not pat.negate
        return result


# ------------------------------------------------------------------------------------------------
# Walk
# ------------------------------------------------------------------------------------------------


@dataclass
class FileFilter:
    """Exclude globs (relative to ``root``) and, optionally, ``.gitignore`` up to ``repo``."""

    root: str
    excludes: tuple[str, ...] = ()
    gitignore: GitIgnore | None = None

    def excluded(self, path: str, is_dir: bool = False) -> str | None:
        """Why ``path`` is excluded (``exclude 'build'``, ``.gitignore``), or None."""
        rel = relative_to(path, self.root)
        if rel is not None and rel not in ("", "."):
            for g in self.excludes:
                if matches_glob(rel, g):
                    return f"excluded by {g!r}"
        if self.gitignore is not None and self.gitignore.ignored(path, is_dir):
            return "ignored by .gitignore"
        return None


def walk(directory: str, flt: FileFilter | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    """``*.yaml``/``*.yml``/``*.sh`` under ``directory`` (sorted), and ``(path, reason)`` for what was
    excluded (directories count once). Hidden files and directories are skipped silently."""
    def unreadable(exc: OSError) -> None:  # a directory that cannot be listed is an error, not "0 files"
        raise os_error(exc, display_name(exc.filename or directory))

    out: list[str] = []
    skipped: list[tuple[str, str]] = []

    def kept(full: str, is_dir: bool) -> bool:
        """False (and the reason recorded) when the filter excludes ``full``."""
        why = flt.excluded(full, is_dir) if flt else None
        if why:
            skipped.append((full, why))
        return not why

    for root, dirs, names in os.walk(directory, onerror=unreadable):
        dirs[:] = [d for d in sorted(dirs)
                   if not d.startswith(".") and kept(os.path.normpath(os.path.join(root, d)), True)]
        for name in sorted(names):
            if not (name.lower().endswith(WALK_SUFFIXES) or name.lower() in WALK_NAMES) or name.startswith("."):
                continue
            full = os.path.normpath(os.path.join(root, name))
            if kept(full, False):
                out.append(full)
    return sorted(out, key=lambda p: Path(p).parts), skipped
