"""What changed between two vLLM releases (flags, defaults, choices, matrix), and one flag's history.

``diff_releases(old, new)`` builds a :class:`ReleaseDiff` that reads like a changelog:

* flags added / removed / renamed (a rename is what ``argtable.renamed_to`` knows, e.g.
  ``--cuda-graph-sizes`` -> ``--cudagraph-capture-sizes`` in 0.13.0; a renamed flag is not also
  listed as removed + added);
* the EFFECTIVE ``vllm serve`` defaults of the scheduler settings (``compat.defaults``:
  ``scheduler_defaults`` / ``release_facts``) on a stated GPU and max_model_len, with the release of
  each step in between (``--gpu-memory-utilization: 0.9 -> 0.92 (0.20.0)``), plus the default engine;
* argparse-level default changes of the other flags, labelled as such (``None`` <-> ``''`` / ``[]``
  noise left out);
* compatibility-matrix changes, a whole added/removed feature row or hardware column collapsed to
  one line.

Everything is deterministic (sorted or in vLLM's order) and text / JSON / markdown come from the same
:class:`ReleaseDiff`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any
import difflib

from sched_reader.compat import matrix
from sched_reader.compat.argtable import ArgTable, effective_default, flag_history, is_deprecated, removed_in, renamed_to
from sched_reader.compat.defaults import _facts, release_facts, scheduler_defaults
from sched_reader.compat.releases import known_releases, version_key
from sched_reader.models.gpu_catalog import default_gpu, resolve_gpu

# The scheduler settings whose effective `vllm serve` default is shown (compat.defaults keys).
SERVE_FIELDS = (
    "max_num_seqs", "max_num_batched_tokens", "gpu_memory_utilization", "block_size",
    "enable_chunked_prefill", "enable_prefix_caching", "async_scheduling",
)
# max_model_len assumed when resolving serve defaults (V0 token budgets and the 0.11.1+ clamps use it).
ASSUMED_MAX_MODEL_LEN = 8192

# Meaning of a setting, stated next to a change of its default (facts.json carries no gmu note).
_MEANING = {
    "gpu_memory_utilization": "fraction of the GPU's TOTAL memory this one vLLM instance may use "
                              "(weights, activations and KV cache), not a share of what is left "
                              "after the weights",
}
# ReleaseFacts attribute holding the release's note about a setting.
_FACT_NOTE = {
    "block_size": "block_size_note",
    "enable_chunked_prefill": "chunked_prefill_note",
    "enable_prefix_caching": "prefix_caching_note",
    "async_scheduling": "async_scheduling_note",
}


def _choices(rec: Any) -> list[Any] | None:
    vals = rec.choices or rec.valid_values
    if not vals:
        return None
    return [c for c in vals if not isinstance(c, dict)] or None


def _flag_of(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _ordered_path(old: str, new: str) -> list[str]:
    """Known releases from ``old`` to ``new`` inclusive, in that direction."""
    lo, hi = sorted((old, new), key=version_key)
    path = [r for r in known_releases() if version_key(lo) <= version_key(r) <= version_key(hi)]
    return path if version_key(old) <= version_key(new) else path[::-1]


# ------------------------------------------------------------------------------------------------
# The GPU the serve defaults are resolved for
# ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ServeContext:
    """GPU and model length that ``scheduler_defaults`` resolves the `vllm serve` defaults for."""

    gpu_name: str
    gpu_id: str | None
    gpu_total_gib: float
    max_model_len: int = ASSUMED_MAX_MODEL_LEN
    assumed_gpu: bool = True
    note: str | None = None              # e.g. "'H100': several SKUs, assuming ..."

    def describe(self) -> str:
        """``H100 SXM5 80GB (79.19 GiB; the default GPU, --gpu to change), max_model_len 8192 assumed``."""
        extra = "; the default GPU, --gpu to change" if self.assumed_gpu else ""
        return (f"{self.gpu_name} ({self.gpu_total_gib:.2f} GiB{extra}), "
                f"max_model_len {self.max_model_len} assumed")

    def to_json(self) -> dict[str, Any]:
        return {"gpu": self.gpu_name, "gpu_id": self.gpu_id, "gpu_total_gib": round(self.gpu_total_gib, 2),
                "gpu_assumed": self.assumed_gpu, "max_model_len": self.max_model_len,
                "usage_context": "OPENAI_API_SERVER", "note": self.note}


def serve_context(gpu: str | None = None) -> ServeContext:
    """Context for ``--gpu NAME`` (default H100 SXM5 80GB); raises UnknownGPUError (exit 2)."""
    if gpu:
        res = resolve_gpu(gpu)
        return ServeContext(res.gpu.name, res.gpu.id, res.gpu.cuda_total_gib, assumed_gpu=False,
                            note=res.note if res.guessed else None)
    g = default_gpu()
    return ServeContext(g.name, g.id, g.cuda_total_gib)


@functools.lru_cache(maxsize=None)
def _serve_defaults(release: str, ctx: ServeContext) -> dict[str, tuple[Any, str]]:
    return scheduler_defaults(release, ctx.gpu_name, ctx.gpu_total_gib, max_model_len=ctx.max_model_len)


def _engine_values(release: str) -> dict[str, tuple[Any, str]]:
    f = release_facts(release)
    avail = ", ".join(e for e, ok in (("V0", f.v0_available), ("V1", f.v1_available)) if ok)
    if f.v1_available and f.engine == "V0":
        avail += " (V1 opt-in)"
    return {"default engine": (f.engine, f.engine_note), "engines available": (avail, f.engine_note)}


def _fact_note(release: str, dest: str) -> str | None:
    attr = _FACT_NOTE.get(dest)
    note = getattr(release_facts(release), attr) if attr else None
    raw = _facts()["releases"].get(release, {}).get(f"{dest}_note")  # a note the data may add later
    parts = [p for p in (_MEANING.get(dest), raw, note) if p]
    return "; ".join(parts) or None


# ------------------------------------------------------------------------------------------------
# Renames and the set of every flag ever seen
# ------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def all_flags() -> tuple[str, ...]:
    """Every primary ``--flag`` and ``--alias`` of any known release, sorted."""
    seen: set[str] = set()
    for rel in known_releases():
        for r in ArgTable.for_release(rel).records():
            seen.update(o for o in (r.flag, *r.aliases) if o.startswith("--"))
    return tuple(sorted(seen))


def suggest_flags(flag: str, n: int = 3) -> list[str]:
    """Closest flags ever seen (difflib), best first."""
    return difflib.get_close_matches(flag, all_flags(), n=n, cutoff=0.6)


@functools.lru_cache(maxsize=None)
def _renamed_to(flag: str) -> str | None:
    return renamed_to(flag)


# ------------------------------------------------------------------------------------------------
# The diff
# ------------------------------------------------------------------------------------------------

@dataclass
class DefaultChange:
    """One default that differs between the two releases.

    ``level`` is ``serve`` (the value `vllm serve` ends up with on the stated GPU), ``engine`` (the
    engine generation) or ``argparse`` (the parser's default as ``--help`` shows it; vLLM may
    resolve an unset value later). ``steps`` are ``(release, value)`` where the value changed on
    the way from old to new (a release is the newer side of the step).
    """

    flag: str
    old: Any
    new: Any
    level: str
    steps: list[tuple[str, Any]] = field(default_factory=list)
    note: str | None = None
    reason: str | None = None            # serve level: why the new value (compat.defaults)

    def line(self) -> str:
        if self.level == "argparse" or not self.steps:
            return f"{self.flag}: {_show(self.old, self.level)} -> {_show(self.new, self.level)}"
        text = f"{self.flag}: {_show(self.old, self.level)}"
        for rel, val in self.steps:
            text += f" -> {_show(val, self.level)} ({rel})"
        return text

    def to_json(self) -> dict[str, Any]:
        return {"flag": self.flag, "old": self.old, "new": self.new, "level": self.level,
                "changed_in": [{"release": r, "value": v} for r, v in self.steps],
                "note": self.note, "reason": self.reason}


def _show(value: Any, level: str) -> str:
    return str(value) if level == "engine" else repr(value)


@dataclass
class MatrixLine:
    """A feature row / hardware column added or removed (``kind`` row|column), or one cell."""

    kind: str                    # "row", "column" or "cell"
    change: str                  # "added" | "removed" | "changed"
    key: str                     # feature / hardware key; for a cell the row key
    label: str
    cells: int = 0               # row/column: cells it had (removed) or has (added)
    column: str | None = None    # cell: feature key or "hw:<key>"
    column_label: str | None = None
    old: str | None = None
    new: str | None = None

    def line(self) -> str:
        if self.kind == "cell":
            return f"{self.label} x {self.column_label}: {self.old or 'blank'} -> {self.new or 'blank'}"
        what = "feature" if self.kind == "row" else "hardware"
        where = "to" if self.change == "added" else "from"
        return f"{what} {self.label} ({self.key}) {self.change} {where} the matrix ({self.cells} cells)"

    def to_json(self) -> dict[str, Any]:
        if self.kind == "cell":
            return {"row": self.key, "column": self.column, "old": self.old, "new": self.new}
        return {"key": self.key, "label": self.label, "cells": self.cells}


@dataclass
class ReleaseDiff:
    """Changes from release ``old`` to ``new`` (both exact releases)."""

    old: str
    new: str
    serve: ServeContext | None = None
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str, str]] = field(default_factory=list)   # (old flag, new flag, release)
    added_notes: dict[str, str] = field(default_factory=dict)           # added flag -> "new name of X"
    defaults: list[DefaultChange] = field(default_factory=list)
    choices: list[tuple[str, list[Any], list[Any]]] = field(default_factory=list)  # (flag, added, removed)
    deprecated: list[str] = field(default_factory=list)                 # newly deprecated flags
    matrix: list[MatrixLine] = field(default_factory=list)
    matrix_note: str | None = None

    # ---- views -------------------------------------------------------------------------------------
    def defaults_at(self, *levels: str) -> list[DefaultChange]:
        return [d for d in self.defaults if d.level in levels]

    def matrix_of(self, kind: str, change: str | None = None) -> list[MatrixLine]:
        return [m for m in self.matrix if m.kind == kind and (change is None or m.change == change)]

    def summary(self) -> dict[str, int]:
        return {"added": len(self.added), "removed": len(self.removed), "renamed": len(self.renamed),
                "defaults_changed": len(self.defaults), "matrix_changes": len(self.matrix),
                "choices_changed": len(self.choices), "newly_deprecated": len(self.deprecated)}

    def summary_line(self) -> str:
        s = self.summary()
        text = (f"vLLM {self.old} -> {self.new}: {s['added']} added, {s['removed']} removed, "
                f"{s['renamed']} renamed, {s['defaults_changed']} defaults changed, "
                f"{s['matrix_changes']} matrix changes")
        extra = []
        engine = next((d for d in self.defaults if d.flag == "default engine"), None)
        if engine is not None:
            extra.append(f"engine {engine.old} -> {engine.new}")
        if s["choices_changed"]:
            extra.append(f"{s['choices_changed']} choice lists changed")
        if s["newly_deprecated"]:
            extra.append(f"{s['newly_deprecated']} newly deprecated")
        return text + (f" ({'; '.join(extra)})" if extra else "")

    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.renamed or self.defaults or self.choices
                    or self.deprecated or self.matrix)

    def sections(self) -> list[tuple[str, str, list[tuple[str, str | None]]]]:
        """``(title, qualifier, [(line, note)])`` in changelog order; text and markdown render these."""
        out: list[tuple[str, str, list[tuple[str, str | None]]]] = []

        def add(title: str, items: list[Any], qualifier: str = "") -> None:
            rows = [(i, None) if isinstance(i, str) else i for i in items]
            if rows:
                out.append((f"{title} ({len(rows)})", qualifier, rows))

        add("Flags added", [(f, self.added_notes.get(f)) for f in self.added])
        add("Flags removed", self.removed)
        add("Flags renamed", [f"{a} -> {b} ({rel})" for a, b, rel in self.renamed])
        gpu = f" on {self.serve.gpu_name}" if self.serve else ""
        add("Serve defaults changed", [(d.line(), d.note) for d in self.defaults_at("engine", "serve")],
            f"effective `vllm serve` values{gpu}")
        add("Argparse defaults changed", [d.line() for d in self.defaults_at("argparse")],
            "the parser's default as --help shows it; vLLM may resolve an unset value at start-up")
        add("Choices changed", [
            f"{f}: " + "; ".join(x for x in (("+" + ", +".join(map(str, a))) if a else "",
                                           ("-" + ", -".join(map(str, r))) if r else "") if x)
            for f, a, r in self.choices])
        add("Newly deprecated", self.deprecated)
        add("Compatibility matrix changes", [m.line() for m in self.matrix])
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "old": self.old,
            "new": self.new,
            "summary": self.summary(),
            "serve_context": self.serve.to_json() if self.serve else None,
            "flags_added": self.added,
            "flags_removed": self.removed,
            "flags_renamed": [{"old": a, "new": b, "release": r} for a, b, r in self.renamed],
            "defaults_changed": [d.to_json() for d in self.defaults],
            "choices_changed": [{"flag": f, "added": a, "removed": r} for f, a, r in self.choices],
            "newly_deprecated": self.deprecated,
            "matrix_features_added": [m.to_json() for m in self.matrix_of("row", "added")],
            "matrix_features_removed": [m.to_json() for m in self.matrix_of("row", "removed")],
            "matrix_hardware_added": [m.to_json() for m in self.matrix_of("column", "added")],
            "matrix_hardware_removed": [m.to_json() for m in self.matrix_of("column", "removed")],
            "matrix_changed": [m.to_json() for m in self.matrix_of("cell")],
            "matrix_note": self.matrix_note,
        }


def _unset_equal(rec_a: Any, a: Any, b: Any) -> bool:
    """True when an argparse default change is only None <-> '' / [] (or None <-> False for a switch)."""
    def unset(v: Any) -> bool:
        return v is None or v == "" or v == [] or v == {} or (v is False and rec_a.is_bool)
    return unset(a) and unset(b)


def diff_releases(old: str, new: str, serve: ServeContext | None = None) -> ReleaseDiff:
    """Flag, default and matrix changes between two exact releases (``old`` may be newer than ``new``).

    ``serve`` states the GPU the effective `vllm serve` defaults are resolved for (default: H100 SXM5
    80GB, max_model_len 8192).
    """
    serve = serve or serve_context(None)
    a, b = ArgTable.for_release(old), ArgTable.for_release(new)
    d = ReleaseDiff(old=old, new=new, serve=serve)
    flags_a = {r.flag: r for r in a.records() if r.flag.startswith("-")}
    flags_b = {r.flag: r for r in b.records() if r.flag.startswith("-")}
    gone = sorted(set(flags_a) - set(flags_b))
    new_flags = sorted(set(flags_b) - set(flags_a))

    # Renames: argtable.renamed_to first (also finds a successor added earlier than the removal),
    # then a same-dest / same-Config.field flag among the new ones. Both directions (a downgrade
    # turns the new name back into the old one).
    by_dest_b = {r.dest: r for r in flags_b.values()}
    by_config_b = {r.config: r for r in flags_b.values() if r.config}
    renames: dict[str, tuple[str, str]] = {}       # gone flag -> (flag in new, release)
    claimed: set[str] = set()
    for f in gone:
        target = _renamed_to(f)
        if target not in flags_b:
            ra = flags_a[f]
            cand = by_dest_b.get(ra.dest) or (by_config_b.get(ra.config) if ra.config else None)
            target = cand.flag if cand is not None and cand.flag in new_flags else None
        if target and target not in claimed:
            renames[f] = (target, removed_in(f) or new)
            claimed.add(target)
    for g in new_flags:  # downgrade: g is the old name of a flag that is gone now
        target = _renamed_to(g)
        if target in gone and target not in renames and g not in claimed:
            renames[target] = (g, removed_in(g) or old)
            claimed.add(g)
    d.renamed = sorted((f, t, rel) for f, (t, rel) in renames.items())
    d.removed = [f for f in gone if f not in renames]
    d.added = [f for f in new_flags if f not in claimed]
    both = sorted(set(flags_a) & set(flags_b))
    for f in d.added:  # the successor (or, downgrading, the old name) of a flag both releases have
        later = _renamed_to(f)
        if later in flags_a and later in flags_b:
            d.added_notes[f] = f"old name of {later}"
            continue
        for prev in both:
            if _renamed_to(prev) == f:
                d.added_notes[f] = f"new name of {prev}, which {new} still accepts"

    # Defaults: effective `vllm serve` values for the scheduler settings, argparse for the rest.
    d.defaults = _engine_changes(old, new) + _serve_changes(old, new, serve)
    serve_dests = set(SERVE_FIELDS)
    for f in sorted(set(flags_a) & set(flags_b)):
        ra, rb = flags_a[f], flags_b[f]
        da, db = effective_default(ra), effective_default(rb)
        if (ra.dest not in serve_dests and not isinstance(da, dict) and not isinstance(db, dict)
                and da != db and not _unset_equal(ra, da, db)):
            d.defaults.append(DefaultChange(f, da, db, "argparse"))
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


def _steps(path: list[str], values: dict[str, Any]) -> list[tuple[str, Any]]:
    """``(release, value)`` for each change along ``path`` (release = newer side of the step)."""
    out = []
    for x, y in zip(path, path[1:]):
        if values[x] != values[y]:
            out.append((max(x, y, key=version_key), values[y]))
    return out


def _engine_changes(old: str, new: str) -> list[DefaultChange]:
    path = _ordered_path(old, new)
    per = {r: _engine_values(r) for r in path}
    out = []
    seen: set[str] = set()
    for key in ("default engine", "engines available"):
        vals = {r: per[r][key][0] for r in path}
        if vals[old] != vals[new]:
            steps = _steps(path, vals)
            note = per[steps[-1][0]][key][1] if steps else None
            out.append(DefaultChange(key, vals[old], vals[new], "engine", steps,
                                     note=None if note in seen else note))
            seen.add(note or "")
    return out


def _serve_changes(old: str, new: str, ctx: ServeContext) -> list[DefaultChange]:
    path = _ordered_path(old, new)
    per = {r: _serve_defaults(r, ctx) for r in path}
    out = []
    for dest in SERVE_FIELDS:
        vals = {r: per[r][dest][0] if dest in per[r] else None for r in path}
        if vals[old] == vals[new]:
            continue
        steps = _steps(path, vals)
        notes: dict[str, str] = {}          # note -> first step release that carries it
        for rel, _v in steps:
            n = _fact_note(rel, dest)
            if n and n not in notes:
                notes[n] = rel
        note = ("; ".join(f"{rel}: {n}" for n, rel in notes.items()) if len(notes) > 1
                else next(iter(notes), None))
        out.append(DefaultChange(_flag_of(dest), vals[old], vals[new], "serve", steps, note=note,
                                 reason=per[new][dest][1] if dest in per[new] else None))
    return out


def _matrix_changes(ma: Any, mb: Any) -> list[MatrixLine]:
    """Whole added/removed feature rows and hardware columns first (one line each), then cells."""
    def label(k: str) -> str:
        for m in (mb, ma):
            lab = m.label(k)
            if lab != k:
                return lab
        return k

    fa, fb = ma.feature_keys, mb.feature_keys
    ha, hb = ma.hardware_keys, mb.hardware_keys
    keys = list(dict.fromkeys(fa + fb))
    hws = list(dict.fromkeys(ha + hb))
    rows_removed = [k for k in fa if k not in fb]
    rows_added = [k for k in fb if k not in fa]
    cols_removed = [h for h in ha if h not in hb]
    cols_added = [h for h in hb if h not in ha]

    def row_cells(m: Any, k: str) -> int:
        ff = sum(1 for c in m.feature_keys if m.pair(k, c))
        return ff + sum(1 for h in m.hardware_keys if m.on_hardware(k, h))

    def col_cells(m: Any, h: str, skip: list[str]) -> int:
        return sum(1 for k in m.feature_keys if k not in skip and m.on_hardware(k, h))

    out = [MatrixLine("row", "removed", k, label(k), row_cells(ma, k)) for k in rows_removed]
    out += [MatrixLine("row", "added", k, label(k), row_cells(mb, k)) for k in rows_added]
    out += [MatrixLine("column", "removed", h, label(h), col_cells(ma, h, rows_removed)) for h in cols_removed]
    out += [MatrixLine("column", "added", h, label(h), col_cells(mb, h, rows_added)) for h in cols_added]
    whole = set(rows_removed + rows_added)
    for i, r in enumerate(keys):
        if r in whole:
            continue
        for c in keys[: i + 1]:
            if c in whole:
                continue
            sx, sy = (ma.pair(r, c) or {}).get("s"), (mb.pair(r, c) or {}).get("s")
            if sx != sy:
                out.append(MatrixLine("cell", "changed", r, label(r), column=c, column_label=label(c),
                                      old=sx, new=sy))
    whole_cols = set(cols_removed + cols_added)
    for r in keys:
        if r in whole:
            continue
        for h in hws:
            if h in whole_cols:
                continue
            sx, sy = (ma.on_hardware(r, h) or {}).get("s"), (mb.on_hardware(r, h) or {}).get("s")
            if sx != sy:
                out.append(MatrixLine("cell", "changed", r, label(r), column=f"hw:{h}",
                                      column_label=label(h), old=sx, new=sy))
    return out


# ------------------------------------------------------------------------------------------------
# One flag's history
# ------------------------------------------------------------------------------------------------

@dataclass
class FlagSpan:
    """Consecutive releases in which a flag looks the same (serve default included)."""

    first: str
    last: str
    present: bool
    default: Any = None
    choices: list[Any] | None = None
    type: str | None = None
    deprecated: bool = False
    aliases: list[str] = field(default_factory=list)
    serve_default: Any = None            # effective `vllm serve` default (scheduler flags only)

    def to_json(self) -> dict[str, Any]:
        return {"first": self.first, "last": self.last, "present": self.present, "default": self.default,
                "choices": self.choices, "type": self.type, "deprecated": self.deprecated,
                "aliases": self.aliases, "serve_default": self.serve_default}


def flag_dest(flag: str) -> str | None:
    """vLLM dest of a flag in the newest release that has it (None if no release has it)."""
    present = [rec for _rel, rec in flag_history(flag) if rec is not None]
    return present[-1].dest if present else None


def flag_spans(flag: str, serve: ServeContext | None = None) -> list[FlagSpan]:
    """The flag across every known release, grouped into spans of identical definition.

    With ``serve`` and a scheduler flag (SERVE_FIELDS), a span also ends where the effective
    `vllm serve` default changes.
    """
    spans: list[FlagSpan] = []
    for release, rec in flag_history(flag):
        if rec is None:
            sig = FlagSpan(release, release, False)
        else:
            default = effective_default(rec)
            sd = None
            if serve is not None and rec.dest in SERVE_FIELDS:
                sd = _serve_defaults(release, serve).get(rec.dest, (None, ""))[0]
            sig = FlagSpan(release, release, True, default=None if isinstance(default, dict) else default,
                           choices=_choices(rec), type=rec.type, deprecated=is_deprecated(rec),
                           aliases=list(rec.aliases), serve_default=sd)
        if spans and _same(spans[-1], sig):
            spans[-1].last = release
        else:
            spans.append(sig)
    return spans


def _same(a: FlagSpan, b: FlagSpan) -> bool:
    return (a.present, a.default, a.choices, a.type, a.deprecated, a.aliases, a.serve_default) == (
        b.present, b.default, b.choices, b.type, b.deprecated, b.aliases, b.serve_default)


def default_changes(spans: list[FlagSpan]) -> list[dict[str, Any]]:
    """Where a default changed between consecutive present spans (argparse and serve level)."""
    out = []
    prev: FlagSpan | None = None
    for s in spans:
        if not s.present:
            continue
        if prev is not None:
            change: dict[str, Any] = {"release": s.first}
            if prev.default != s.default:
                change["argparse"] = {"old": prev.default, "new": s.default}
            if prev.serve_default != s.serve_default:
                change["serve"] = {"old": prev.serve_default, "new": s.serve_default}
            if len(change) > 1:
                out.append(change)
        prev = s
    return out
