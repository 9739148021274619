"""Finding fingerprints and baselines: adopt the lint gate on a repository that already has findings.

A fingerprint identifies a finding by what it is about, not where it sits, so it survives lines being
added or removed above it (and the repository being moved or checked out elsewhere):

    sha256(rule, key, the text of the finding's line with whitespace collapsed)

(the message with its digits blanked stands in for the line text when a finding has no line or its
file cannot be read), plus an occurrence number when several findings of one rule share that content
in one file (counted in line order). The first 16 hex digits are the fingerprint; the same value goes
to SARIF ``partialFingerprints["schedReader/v1"]`` (code scanning pairs it with the file path).

``lint --write-baseline FILE`` writes every current finding; ``lint --baseline FILE`` then reports only
findings whose (rule, file, fingerprint) is in the file. File paths in a baseline are relative to the
baseline's own directory, so it keeps working from any working directory. The baseline is JSON, sorted,
one finding per entry with its line and message for people reading the diff.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Iterable

from sched_reader.errors import InputError
from sched_reader.findings import Finding
from sched_reader.analyzers.lint_config import repo_root

FINGERPRINT_KEY = "schedReader/v1"
BASELINE_SCHEMA_VERSION = 1


def base_dir(start: str | Path | None = None) -> Path:
    """The directory paths are made relative to: the repository root above ``start`` (default: the
    working directory), else ``start`` itself."""
    s = Path(start if start is not None else os.getcwd()).resolve()
    return repo_root(s) or s


def repo_path(file: str | None, base: str | Path) -> str | None:
    """``file`` relative to ``base`` with ``/`` separators; None for a pseudo-file (``<command line>``)
    or a file outside ``base``."""
    if not file or (file.startswith("<") and file.endswith(">")):
        return None
    p = Path(file)
    absolute = Path(os.path.normpath(p if p.is_absolute() else Path(os.getcwd()) / p))
    try:
        return absolute.relative_to(Path(base).resolve()).as_posix()
    except ValueError:
        return None


class _Lines:
    """Lines of files, read once."""

    def __init__(self) -> None:
        self._cache: dict[str, list[str] | None] = {}

    def get(self, file: str | None, line: int | None) -> str | None:
        if not file or not line or (file.startswith("<") and file.endswith(">")):
            return None
        if file not in self._cache:
            try:
                self._cache[file] = Path(file).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                self._cache[file] = None
        lines = self._cache[file]
        if lines is None or not 1 <= line <= len(lines):
            return None
        return " ".join(lines[line - 1].split())


def _content(f: Finding, lines: _Lines) -> str:
    text = lines.get(f.file, f.line)
    if text:
        return text
    return re.sub(r"\d[\d,._]*", "#", f.message)


def fingerprints(findings: Iterable[Finding], base: str | Path | None = None) -> dict[Finding, str]:
    """A fingerprint for each finding (see module docstring; ``base`` is accepted for symmetry and unused)."""
    lines = _Lines()
    ordered = sorted(set(findings), key=lambda f: (f.file or "", f.line or 0, f.rule, f.key or "", f.message))
    seen: dict[tuple[str, str], int] = {}
    out: dict[Finding, str] = {}
    for f in ordered:
        h = hashlib.sha256("\x1f".join((f.rule, f.key or "", _content(f, lines))).encode("utf-8"))
        digest = h.hexdigest()
        where = os.path.normpath(os.path.abspath(f.file)) if f.file and not f.file.startswith("<") else (f.file or "")
        n = seen.get((where, digest), 0)
        seen[(where, digest)] = n + 1
        if n:
            digest = hashlib.sha256(f"{digest}:{n}".encode()).hexdigest()
        out[f] = digest[:16]
    return out


# ------------------------------------------------------------------------------------------------
# Baseline files
# ------------------------------------------------------------------------------------------------


def baseline_doc(findings: Iterable[Finding], base: str | Path | None = None) -> dict[str, Any]:
    """The baseline document; ``base``: the directory file paths are relative to (the baseline's own)."""
    root = base_dir() if base is None else Path(base)
    fps = fingerprints(findings)
    entries = [{"rule": f.rule, "file": _rel(f.file, root), "fingerprint": fp, "line": f.line,
                "message": f.message} for f, fp in fps.items()]
    entries.sort(key=lambda e: (e["file"] or "", e["line"] or 0, e["rule"], e["fingerprint"]))
    return {"schema_version": BASELINE_SCHEMA_VERSION, "tool": "sched-reader", "findings": entries}


def _rel(file: str | None, root: Path) -> str:
    if not file or (file.startswith("<") and file.endswith(">")):
        return file or "<input>"
    return Path(os.path.relpath(os.path.abspath(file), root)).as_posix()


def write_baseline(path: str, findings: Iterable[Finding], base: str | Path | None = None) -> int:
    """Write the baseline (paths relative to its directory); return the number of findings in it."""
    doc = baseline_doc(findings, Path(path).resolve().parent if base is None else base)
    try:
        Path(path).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the baseline: {exc.strerror or exc}", file=path) from None
    return len(doc["findings"])


def load_baseline(path: str) -> set[tuple[str, str, str]]:
    """``(rule, file, fingerprint)`` of every finding in a baseline file, ``file`` made absolute."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("baseline file not found", file=path,
                         hint="create it with `sched-reader lint --write-baseline FILE ...`") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the baseline: {exc}", file=path) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"the baseline is not valid JSON: {exc.msg}", file=path, line=exc.lineno) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
        raise InputError("not a sched-reader baseline (no 'findings' list)", file=path)
    if doc.get("schema_version") != BASELINE_SCHEMA_VERSION:
        raise InputError(f"baseline schema_version {doc.get('schema_version')!r} is not "
                         f"{BASELINE_SCHEMA_VERSION}", file=path, hint="write it again with --write-baseline")
    out: set[tuple[str, str, str]] = set()
    for e in doc["findings"]:
        if not isinstance(e, dict) or not all(isinstance(e.get(k), str) for k in ("rule", "file", "fingerprint")):
            raise InputError("a baseline entry lacks rule, file or fingerprint", file=path)
        f = e["file"]
        if not (f.startswith("<") and f.endswith(">")):
            f = os.path.normpath(os.path.join(Path(path).resolve().parent, f))
        out.add((e["rule"], f, e["fingerprint"]))
    return out


def split_new(findings: Iterable[Finding], known: set[tuple[str, str, str]],
              base: str | Path | None = None) -> tuple[list[Finding], list[Finding]]:
    """(new findings, findings already in the baseline)."""
    new: list[Finding] = []
    old: list[Finding] = []
    for f, fp in fingerprints(findings).items():
        file = f.file or "<input>"
        if not (file.startswith("<") and file.endswith(">")):
            file = os.path.normpath(os.path.abspath(file))
        key = (f.rule, file, fp)
        (old if key in known else new).append(f)
    return new, old
