#!/usr/bin/env python3
"""Run the commands the docs show and compare the figures they quote with what the tool prints.

Marked blocks (the convention is stated at the top of README.md):

* a fenced block whose info string contains ``doc-check`` (```` ```text doc-check ````, ```` ```bash doc-check ````)
  is checked; any other block is left alone, so new sections never break the check by accident;
* in a ``text``/``console`` block, a line starting with ``$ sched-reader`` is a command (``\\`` continues it);
  the lines after it, up to the next ``$`` line, are its expected output: each must appear in the actual
  output, in order (trailing spaces ignored); a line ``...`` stands for any number of skipped lines;
* in a ``bash``/``sh`` block, each line starting with ``sched-reader`` is a command that must run (its output
  is not compared); a trailing ``# comment`` is dropped.

Every command runs from a scratch copy of the repository's ``examples/`` (so paths read ``examples/...``,
and files a command writes land in the copy), at 100 columns (``COLUMNS=100``), in-process. It must exit
0 or 1 (findings), never 2 (could not run).

    python tools/doc_check.py                 # check README.md and outputs/skill-vllm-scheduler-reader.md
    python tools/doc_check.py --update        # rewrite the expected output in the docs from the tool
    python tools/doc_check.py FILE.md ...     # other documents
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "README.md", ROOT / "outputs" / "skill-vllm-scheduler-reader.md")
WIDTH = "100"
_FENCE = re.compile(r"^(\s*)(```+)(.*)$")


@dataclass
class Command:
    """One command in a marked block: where it is, its argv, and the expected output lines (text blocks)."""

    doc: Path
    line: int                        # 1-based line of the command in the doc
    text: str                        # as written (continuations joined)
    expected: list[str] | None       # None: run only
    expected_span: tuple[int, int] = (0, 0)   # 0-based [start, end) lines of the expected output in the doc
    argv: list[str] = field(default_factory=list)


def parse(doc: Path) -> list[Command]:
    """The commands of every ``doc-check`` block of ``doc``."""
    lines = doc.read_text(encoding="utf-8").split("\n")
    out: list[Command] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(2), m.group(3).strip()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        if "doc-check" in info.split():
            lang = info.split()[0] if info.split() else ""
            out.extend(_block(doc, lines, i + 1, j, lang))
        i = j + 1
    return out


def _block(doc: Path, lines: list[str], start: int, end: int, lang: str) -> list[Command]:
    cmds: list[Command] = []
    k = start
    run_only = lang in ("bash", "sh", "shell")
    while k < end:
        raw = lines[k]
        stripped = raw.strip()
        is_cmd = stripped.startswith("$ sched-reader") if not run_only else stripped.startswith("sched-reader")
        if not is_cmd:
            k += 1
            continue
        first = k
        text = stripped[2:] if stripped.startswith("$ ") else stripped
        while text.endswith("\\") and k + 1 < end:
            k += 1
            text = text[:-1].rstrip() + " " + lines[k].strip()
        if run_only and " #" in text:
            text = text[: text.index(" #")].rstrip()
        k += 1
        expected = None
        span = (k, k)
        if not run_only:
            e0 = k
            while k < end and not lines[k].strip().startswith("$ "):
                k += 1
            e1 = k
            while e1 > e0 and not lines[e1 - 1].strip():
                e1 -= 1
            expected = lines[e0:e1]
            span = (e0, e1)
        argv = shlex.split(text)
        cmds.append(Command(doc, first + 1, text, expected, span, argv[1:]))
    return cmds


def run(argv: list[str]) -> tuple[int, str, str]:
    """Run ``sched-reader ARGV`` in-process; (exit code, stdout, stderr)."""
    from sched_reader.cli.app import main
    from sched_reader.cli.common import COMMAND_LINE

    out, err = io.StringIO(), io.StringIO()
    token = COMMAND_LINE.set(None)
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(list(argv))
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        COMMAND_LINE.reset(token)
    return code, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def scratch():
    """A scratch directory holding a copy of examples/, as the working directory, at 100 columns."""
    old_cwd, old_cols = os.getcwd(), os.environ.get("COLUMNS")
    with tempfile.TemporaryDirectory(prefix="doc-check-") as tmp:
        shutil.copytree(ROOT / "examples", Path(tmp) / "examples")
        os.chdir(tmp)
        os.environ["COLUMNS"] = WIDTH
        try:
            yield Path(tmp)
        finally:
            os.chdir(old_cwd)
            if old_cols is None:
                os.environ.pop("COLUMNS", None)
            else:
                os.environ["COLUMNS"] = old_cols


def missing_lines(expected: list[str], actual: str) -> list[str]:
    """Expected lines not found in ``actual`` in order (``...`` skips any number of lines)."""
    got = [x.rstrip() for x in actual.split("\n")]
    pos = 0
    missing: list[str] = []
    for line in expected:
        want = line.rstrip()
        if want.strip() in ("...", "…"):
            continue
        try:
            idx = got.index(want, pos)
        except ValueError:
            missing.append(line)
            continue
        pos = idx + 1
    return missing


def check(docs: list[Path]) -> list[str]:
    """One problem string per failing command (empty when the docs agree with the tool)."""
    problems: list[str] = []
    with scratch():
        import importlib.util

        has_mpl = importlib.util.find_spec("matplotlib") is not None
        for doc in docs:
            for c in parse(doc):
                if "--plot" in c.argv and not has_mpl:
                    continue  # the plot extra is not installed here: nothing to check
                code, out, err = run(c.argv)
                where = f"{doc.relative_to(ROOT) if doc.is_relative_to(ROOT) else doc}:{c.line}"
                if code not in (0, 1):
                    problems.append(f"{where}: `{c.text}` exited {code}: {err.strip()[:300]}")
                    continue
                if c.expected is not None:
                    miss = missing_lines(c.expected, out)
                    if miss:
                        problems.append(f"{where}: `{c.text}`: {len(miss)} line(s) differ from the tool, first: "
                                        f"{miss[0].strip()!r}")
    return problems


def _best_match(line: str, actual: list[str]) -> int | None:
    """Index of the actual line that starts like ``line`` up to its first digit (at least 8 characters)."""
    if line.rstrip() in actual:
        return actual.index(line.rstrip())
    key = re.split(r"\d", line, maxsplit=1)[0]
    if len(key.strip()) < 8:
        return None
    hits = [i for i, a in enumerate(actual) if a.startswith(key)]
    return hits[0] if len(hits) == 1 else None


def _is_continuation(prev_head: str, line: str) -> bool:
    """Whether ``line`` is a wrapped continuation of the entry starting ``prev_head`` (the tool's layout
    puts continuations exactly at the entry's hanging indent)."""
    from sched_reader.report.layout import hanging_indent

    ind = len(line) - len(line.lstrip(" "))
    return bool(line.strip()) and ind == hanging_indent(prev_head, int(WIDTH)) and ind > 0


def _entries(lines: list[str], start: int, count: int) -> int:
    """How many lines ``count`` entries take from ``start``: an entry is a line plus its wrapped lines."""
    i, n = start, 0
    while i < len(lines) and n < count:
        head = lines[i]
        i += 1
        while i < len(lines) and _is_continuation(head, lines[i]):
            i += 1
        n += 1
    return i - start


def _count_entries(lines: list[str]) -> int:
    n, i = 0, 0
    while i < len(lines):
        i += _entries(lines, i, 1)
        n += 1
    return n


def _refresh_excerpt(expected: list[str], actual: list[str]) -> list[str]:
    """An excerpt (with ``...`` lines) rewritten from ``actual``: each run of lines between ``...`` is
    replaced by the actual entries that start where its first line matches (same number of entries)."""
    out: list[str] = []
    seg: list[str] = []

    def flush() -> None:
        if not seg:
            return
        i = _best_match(seg[0], actual)
        if i is None:
            out.extend(seg)
        else:
            out.extend(actual[i:i + _entries(actual, i, _count_entries(seg))])
        seg.clear()

    for line in expected:
        if line.strip() in ("...", "…"):
            flush()
            out.append(line)
        else:
            seg.append(line)
    flush()
    return out


def update(docs: list[Path]) -> int:
    """Rewrite expected output from the tool: a block without ``...`` gets the whole output; an excerpt
    keeps its shape and each line is replaced by the one output line that starts like it."""
    changed = 0
    with scratch():
        for doc in docs:
            lines = doc.read_text(encoding="utf-8").split("\n")
            for c in reversed(parse(doc)):
                if c.expected is None:
                    continue
                code, out, _ = run(c.argv)
                if code not in (0, 1):
                    continue
                actual = [x.rstrip() for x in out.rstrip("\n").split("\n")]
                if any(x.strip() in ("...", "…") for x in c.expected):
                    new = _refresh_excerpt(c.expected, actual)
                else:
                    new = actual
                if new != c.expected:
                    lines[c.expected_span[0]:c.expected_span[1]] = new
                    changed += 1
            doc.write_text("\n".join(lines), encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("docs", nargs="*", type=Path, help="documents (default: README.md and the skill document)")
    ap.add_argument("--update", action="store_true", help="rewrite the expected output from the tool")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    docs = [d.resolve() for d in args.docs] or list(DOCS)
    if args.update:
        print(f"updated {update(docs)} block(s)")
    problems = check(docs)
    for p in problems:
        print(p)
    n = sum(len(parse(d)) for d in docs)
    print(f"{n} command(s) checked in {len(docs)} document(s): {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
