"""What changed between two vLLM releases (flags, defaults, choices, matrix), and one flag's history."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _effective_default(rec: Any) -> Any:
    if rec.default is None and rec.has_config_default:
        return rec.config_default
    return rec.default


def _choices(rec: Any) -> list[Any] | None:
    vals = rec.choices or rec.valid_values
    if not vals:
        return None
    return [c for c in vals if not isinstance(c, dict)] or None


@dataclass
class ReleaseDiff:
    """Changes from release ``old`` to ``new`` (both exact releases)."""

    old: str
    new: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)          # (old flag, new flag)
    defaults: list[tuple[str, Any, Any]] = field(default_factory=list)     # (flag, old, new)
    choices: list[tuple[str, list[Any], list[Any]]] = field(default_factory=list)  # (flag, added, removed)
    deprecated: list[str] = field(default_factory=list)                   # newly deprecated flags
    matrix: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)  # (row, col, old, new)
    matrix_note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "old": self.old,
            "new": self.new,
            "flags_added": self.added,
            "flags_removed": self.removed,
            "flags_renamed": [{"old": a, "new": b} for a, b in self.renamed],
            "defaults_changed": [{"flag": f, "old": a, "new": b} for f, a, b in self.defaults],
            "choices_changed": [{"flag": f, "added": a, "removed": r} for f, a, r in self.choices],
            "newly_deprecated": self.deprecated,
            "matrix_changed": [{"row": r, "column": c, "old": a, "new": b} for r, c, a, b in self.matrix],
            "matrix_note": self.matrix_note,
        }

    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.renamed or self.defaults or self.choices
                    or self.deprecated or self.matrix)


def diff_releases(old: str, new: str) -> ReleaseDiff:
    """Flag and matrix changes between two exact releases (``old`` may be newer than ``new``)."""
    from sched_reader.compat import matrix
    from sched_reader.compat.argtable import ArgTable
    from sched_reader.compat.checks import is_deprecated

    a, b = ArgTable.for_release(old), ArgTable.for_release(new)
    d = ReleaseDiff(old=old, new=new)
    flags_a = {r.flag: r for r in a.records() if r.flag.startswith("-")}
    flags_b = {r.flag: r for r in b.records() if r.flag.startswith("-")}
    gone = sorted(set(flags_a) - set(flags_b))
    new_flags = sorted(set(flags_b) - set(flags_a))
    by_dest_b = {r.dest: r for r in flags_b.values()}
    by_config_b = {r.config: r for r in flags_b.values() if r.config}
    renamed_to: dict[str, str] = {}
    for f in gone:
        ra = flags_a[f]
        cand = by_dest_b.get(ra.dest) or (by_config_b.get(ra.config) if ra.config else None)
        if cand is not None and cand.flag in new_flags:
            renamed_to[f] = cand.flag
    d.renamed = sorted(renamed_to.items())
    d.removed = [f for f in gone if f not in renamed_to]
    d.added = [f for f in new_flags if f not in renamed_to.values()]
    for f in sorted(set(flags_a) & set(flags_b)):
        ra, rb = flags_a[f], flags_b[f]
        da, db = _effective_default(ra), _effective_default(rb)
        if not isinstance(da, dict) and not isinstance(db, dict) and da != db:
            d.defaults.append((f, da, db))
        ca, cb = _choices(ra), _choices(rb)
        if ca is not None and cb is not None and ca != cb:
            added = [c for c in cb if c not in ca]
            removed = [c for c in ca if c not in cb]
            if added or removed:
                d.choices.append((f, added, removed))
        if is_deprecated(rb) and not is_deprecated(ra):
            d.deprecated.append(f)
    ma, mb = matrix.for_release(old), matrix.for_release(new)
    if ma is None or mb is None:
        missing = [v for v, m in ((old, ma), (new, mb)) if m is None]
        d.matrix_note = f"no compatibility matrix for {', '.join(missing)} (the doc starts with 0.6.3)"
    elif ma.matrix_id != mb.matrix_id:
        d.matrix = _matrix_changes(ma, mb)
    notes = [m.note for m in (ma, mb) if m is not None and m.approximate and m.note]
    if notes and d.matrix_note is None:
        d.matrix_note = notes[0]
    return d


def _matrix_changes(ma: Any, mb: Any) -> list[tuple[str, str, str | None, str | None]]:
    out = []
    keys = list(dict.fromkeys(ma.feature_keys + mb.feature_keys))
    for i, r in enumerate(keys):
        for c in keys[: i + 1]:
            x, y = ma.pair(r, c), mb.pair(r, c)
            sx, sy = (x or {}).get("s"), (y or {}).get("s")
            if sx != sy:
                out.append((r, c, sx, sy))
    hws = list(dict.fromkeys(ma.hardware_keys + mb.hardware_keys))
    for r in keys:
        for h in hws:
            sx, sy = (ma.on_hardware(r, h) or {}).get("s"), (mb.on_hardware(r, h) or {}).get("s")
            if sx != sy:
                out.append((r, f"hw:{h}", sx, sy))
    return out


# ------------------------------------------------------------------------------------------------
# One flag's history
# ------------------------------------------------------------------------------------------------

@dataclass
class FlagSpan:
    """Consecutive releases in which a flag looks the same."""

    first: str
    last: str
    present: bool
    default: Any = None
    choices: list[Any] | None = None
    type: str | None = None
    deprecated: bool = False
    aliases: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"first": self.first, "last": self.last, "present": self.present, "default": self.default,
                "choices": self.choices, "type": self.type, "deprecated": self.deprecated,
                "aliases": self.aliases}


def flag_spans(flag: str) -> list[FlagSpan]:
    """The flag across every known release, grouped into spans of identical definition."""
    from sched_reader.compat.argtable import flag_history
    from sched_reader.compat.checks import is_deprecated

    spans: list[FlagSpan] = []
    for release, rec in flag_history(flag):
        if rec is None:
            sig = FlagSpan(release, release, False)
        else:
            default = _effective_default(rec)
            sig = FlagSpan(release, release, True, default=None if isinstance(default, dict) else default,
                           choices=_choices(rec), type=rec.type, deprecated=is_deprecated(rec),
                           aliases=list(rec.aliases))
        if spans and _same(spans[-1], sig):
            spans[-1].last = release
        else:
            spans.append(sig)
    return spans


def _same(a: FlagSpan, b: FlagSpan) -> bool:
    return (a.present, a.default, a.choices, a.type, a.deprecated, a.aliases) == (
        b.present, b.default, b.choices, b.type, b.deprecated, b.aliases)


def _range(s: FlagSpan) -> str:
    return s.first if s.first == s.last else f"{s.first} .. {s.last}"


def render_flag_history(flag: str, spans: list[FlagSpan], renamed: str | None = None) -> str:
    """Readable history, one line per span."""
    if not any(s.present for s in spans):
        return f"{flag}: not a `vllm serve` flag in any known release ({spans[0].first} .. {spans[-1].last})"
    lines = [f"{flag} across vLLM releases:"]
    for s in spans:
        if not s.present:
            lines.append(f"  {_range(s):<18} absent")
            continue
        parts = [f"type {s.type}", f"default {s.default!r}"]
        if s.choices:
            parts.append("choices " + ", ".join(str(c) for c in s.choices))
        if s.aliases:
            parts.append("aliases " + ", ".join(s.aliases))
        if s.deprecated:
            parts.append("DEPRECATED")
        lines.append(f"  {_range(s):<18} " + "; ".join(parts))
    if renamed:
        lines.append(f"  later carried by {renamed}")
    return "\n".join(lines)


def render_diff(d: ReleaseDiff, label: Any = None) -> str:
    """Readable changelog text (``label(key)`` maps matrix keys to names)."""
    label = label or (lambda k: k)
    lines = [f"vLLM {d.old} -> {d.new}"]
    if d.is_empty():
        lines.append("  no flag or matrix changes")

    def section(title: str, items: list[str]) -> None:
        if items:
            lines.append(f"{title} ({len(items)}):")
            lines.extend(f"  {i}" for i in items)

    section("Flags added", d.added)
    section("Flags removed", d.removed)
    section("Flags renamed", [f"{a} -> {b}" for a, b in d.renamed])
    section("Defaults changed", [f"{f}: {a!r} -> {b!r}" for f, a, b in d.defaults])
    section("Choices changed", [
        f"{f}: " + "; ".join(x for x in (("+" + ", +".join(map(str, a))) if a else "",
                                       ("-" + ", -".join(map(str, r))) if r else "") if x)
        for f, a, r in d.choices])
    section("Newly deprecated", d.deprecated)

    def cell(s: str | None) -> str:
        return s or "blank"

    section("Compatibility matrix cells changed", [
        f"{label(r)} x {label(c[3:]) if c.startswith('hw:') else label(c)}: {cell(a)} -> {cell(b)}"
        for r, c, a, b in d.matrix])
    if d.matrix_note:
        lines.append(f"Note: {d.matrix_note}")
    return "\n".join(lines)
