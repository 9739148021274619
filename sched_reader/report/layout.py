"""Width-aware text layout: every text report fits the terminal, and wraps with hanging indents.

The width is ``$COLUMNS`` when set, else the terminal's width on a TTY, else 100 columns (CI logs,
``| less``, files). A line longer than the width is wrapped so that its continuation lines start under
the line's value, never back at column 0::

      bottleneck   kv_cache_blocks: PagedAttention's KV budget binds first: 430,288 tokens hold
                   112 sequences of ~3,814 tokens, below --max-num-seqs 256

The value column is found from the line itself: the first run of two or more spaces after a short label
(``"  KV cache     ..."``, ``"  WARNING SR202 ..."`` -> under the text after the gap); otherwise the
continuation is indented two columns past the line's own indent. Widths count terminal cells (an emoji
or a CJK character is two cells wide).
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from typing import Iterable

PIPE_WIDTH = 100
MIN_WIDTH = 40
_LABEL = re.compile(r"^( *)(\S[^ ]*(?: [^ ]+){0,3}?)( {2,})(?=\S)")


def output_width(stream=None) -> int:
    """Columns to fit: $COLUMNS, else the TTY's width, else 100 (piped)."""
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return max(MIN_WIDTH, int(env))
    stream = stream if stream is not None else sys.stdout
    try:
        if stream.isatty():
            return max(MIN_WIDTH, os.get_terminal_size(stream.fileno()).columns)
    except (AttributeError, OSError, ValueError):
        pass
    return PIPE_WIDTH


def cell_width(text: str) -> int:
    """Terminal cells ``text`` takes: wide (East Asian W/F, emoji) count 2, combining marks 0."""
    if text.isascii():  # every ASCII character is one cell (the common case: no per-character lookups)
        return len(text)
    n = 0
    for ch in text:
        if unicodedata.combining(ch) or ch in "\u200d\ufe0f":
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def hanging_indent(line: str, width: int) -> int:
    """Column where continuation lines of ``line`` start (see the module docstring)."""
    indent = len(line) - len(line.lstrip(" "))
    m = _LABEL.match(line)
    hang = m.end() if m and m.end() <= 28 else indent + 2
    if hang > width // 2:
        hang = min(indent + 2, width // 2)
    return hang


def _split_word(word: str, room: int) -> list[str]:
    """Cut one word longer than ``room`` cells into pieces that fit."""
    out, cur = [], ""
    for ch in word:
        if cell_width(cur + ch) > room and cur:
            out.append(cur)
            cur = ""
        cur += ch
    if cur:
        out.append(cur)
    return out


def wrap_line(line: str, width: int | None = None, hang: int | None = None) -> list[str]:
    """``line`` as lines of at most ``width`` cells, continuation lines at the hanging indent (found
    from the line, or ``hang``)."""
    width = width or output_width()
    line = line.rstrip()
    if cell_width(line) <= width:
        return [line]
    hang = hanging_indent(line, width) if hang is None else hang
    indent = len(line) - len(line.lstrip(" "))
    words = line[indent:].split(" ")
    out: list[str] = []
    cur = " " * indent
    start = True
    for word in words:
        if word == "":
            if not start:
                cur += " "
            continue
        sep = "" if start else " "
        if cell_width(cur + sep + word) <= width:
            cur += sep + word
            start = False
            continue
        if not start:
            out.append(cur.rstrip())
            cur = " " * hang
            start = True
        room = width - cell_width(cur)
        if cell_width(word) <= room:
            cur += word
            start = False
            continue
        pieces = _split_word(word, room)
        for piece in pieces[:-1]:
            out.append(cur + piece)
            cur = " " * hang
        cur += pieces[-1]
        start = False
    if cur.strip():
        out.append(cur.rstrip())
    return out


def wrap_text(text: str, width: int | None = None) -> str:
    """Every line of ``text`` wrapped (see :func:`wrap_line`); a trailing newline is kept."""
    width = width or output_width()
    lines = text.split("\n")
    return "\n".join(x for line in lines for x in (wrap_line(line, width) if line.strip() else [line]))


def table_lines(header: list[str], rows: Iterable[list[str]], width: int | None = None, *,
                align_right_from: int = 1, rule: bool = True, sections: list[int] | None = None,
                min_flex: int = 16, flex: int | None = None) -> list[str] | None:
    """An aligned text table that fits ``width``, or None when it cannot (the caller lists instead).

    The first column is left-aligned, columns from ``align_right_from`` on are right-aligned. When the
    table is too wide, the widest column (by its longest cell) is wrapped inside its cell, continuation
    lines staying in that column, if that leaves it ``min_flex`` cells or more (``flex`` names the
    column to wrap instead); ``sections`` lists row indexes before which a dashed rule goes.
    """
    width = width or output_width()
    rows = [list(map(str, r)) for r in rows]
    ncol = len(header)
    widths = [max(cell_width(r[i]) for r in [header, *rows]) for i in range(ncol)]
    total = sum(widths) + 2 * (ncol - 1)
    if total <= width:
        flex = None
    else:
        flex = max(range(ncol), key=lambda i: widths[i]) if flex is None else flex
        fixed = total - widths[flex]
        if width - fixed < min_flex:
            return None
        widths[flex] = width - fixed

    def cells(row: list[str]) -> list[list[str]]:
        out = []
        for i, c in enumerate(row):
            if i == flex and cell_width(c) > widths[i]:
                out.append(wrap_line(c, widths[i], hang=0))
            else:
                out.append([c])
        return out

    def render(row: list[str]) -> list[str]:
        parts = cells(row)
        height = max(len(p) for p in parts)
        lines = []
        for k in range(height):
            segs = []
            for i, p in enumerate(parts):
                c = p[k].strip() if k < len(p) and i == flex else (p[k] if k < len(p) else "")
                pad = " " * max(0, widths[i] - cell_width(c))
                segs.append(pad + c if (i >= align_right_from and i != flex) else c + pad)
            lines.append("  ".join(segs).rstrip())
        return lines

    dash = "  ".join("-" * w for w in widths)
    out = render(header)
    if rule:
        out.append(dash)
    for n, row in enumerate(rows):
        if sections and n in sections and n:
            out.append(dash)
        out.extend(render(row))
    return out


def column_groups(label_width: int, col_widths: list[int], width: int) -> list[list[int]]:
    """Split value columns into groups that fit ``width`` next to a repeated label column."""
    groups: list[list[int]] = []
    cur: list[int] = []
    used = label_width
    for i, w in enumerate(col_widths):
        if cur and used + 2 + w > width:
            groups.append(cur)
            cur, used = [], label_width
        cur.append(i)
        used += 2 + w
    if cur:
        groups.append(cur)
    return groups
