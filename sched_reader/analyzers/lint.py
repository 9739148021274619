"""The lint pipeline (``sched-reader lint``, the CI gate): every finding of every engine in the deploy files.

What it checks, per engine: flag normalization and version compatibility (SR1xx, from
``build_specs``) and, with ``--capacity`` (default), the capacity findings of ``diagnose`` (SR2xx) for
engines whose model resolves; an engine whose model does not resolve gets SR115 (info) instead.

Inputs: files, directories (walked for ``*.yaml``, ``*.yml``, ``*.sh`` in sorted order, skipping hidden
directories), and/or a command line after ``--``. In a directory walk a file with no vLLM engine is
skipped with a note; a file named explicitly with no engine is an error (exit 2), as in the other
commands. A file that cannot be analyzed (YAML syntax error, a value vLLM's parser rejects) is finding
SR001 so one broken file does not hide the rest.

Inline directives (in YAML or shell comments)::

    - --disable-log-requests   # sched-reader: ignore SR101
    # sched-reader: ignore[SR101,SR104]      (a comment-only line: applies to the next line)
    # sched-reader: ignore-file              (anywhere: the file is skipped)
    # sched-reader: ignore-file[SR110]       (those rules, everywhere in the file)

A directive lists rule ids, id prefixes (``SR1``) or rule names; with no list it covers every rule.

Exit codes: 0 no finding at or above ``--fail-on`` (default error), 1 otherwise, 2 could not complete
(usage error, missing or unreadable path, an explicitly named file with no engine, unknown ``--vllm`` /
``--gpu``, internal error).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable
import sys
import tempfile

from sched_reader.findings import Finding, is_failing, sort_unique
from sched_reader.analyzers.baseline import base_dir, split_new
from sched_reader.analyzers.diagnosis import diagnose
from sched_reader.analyzers.lint_config import check_selectors, check_workload, LintConfig, repo_root
from sched_reader.analyzers.lint_files import FileFilter, GitIgnore, matches_glob, relative_to, walk as _walk
from sched_reader.analyzers.lint_parallel import effective_jobs, map_ordered
from sched_reader.analyzers.pipeline import build_spec, build_specs
from sched_reader.analyzers.rule_catalog import matches, normalize_selector
from sched_reader.analyzers.rule_docs import rule_ids, suggest
from sched_reader.compat.argtable import first_seen
from sched_reader.compat.releases import resolve_version
from sched_reader.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, InputError, SchedReaderError
from sched_reader.limits import display_name, os_error, read_regular_file, read_text_file
from sched_reader.models.gpu_catalog import resolve_gpu
from sched_reader.models.spec_builder import note_shared_gpus
from sched_reader.readers import read_path
from sched_reader.readers.detect import kind_of
from sched_reader.readers.source import read_text
from sched_reader.readers.yaml_tree import load_documents


# Messages of reader errors meaning "this file holds no vLLM engine" (readers/detect.py, source.py).
_NO_ENGINE_PREFIXES = (
    "no vLLM engine found",
    "no vLLM server command found",
    "expected a YAML mapping at the top level",
    "file is empty",
)
# Reader errors about the path itself, not its content: always exit 2.
_PATH_ERROR_PREFIXES = ("file not found", "cannot read the file", "is not a regular file", "is a directory",
                        "symbolic link loop", "file name too long", "permission denied",
                        "a part of the path is not a directory", "invalid file name")


# ------------------------------------------------------------------------------------------------
# The result of a run (every lint formatter renders it)
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineResult:
    """One engine found in an input file, with the findings that survived selection and ignores."""

    name: str
    line: int | None
    model: str
    vllm_version: str
    findings: tuple[Finding, ...]
    suppressed: tuple[Finding, ...] = ()
    capacity_checked: bool = False
    capacity_scope: str = ""  # none | structural (no workload stated) | workload (as diagnose)


@dataclass(frozen=True)
class FileResult:
    """One input: a deploy file (or ``<command line>``); ``skipped`` says why it was not analyzed."""

    file: str
    engines: tuple[EngineResult, ...] = ()
    findings: tuple[Finding, ...] = ()  # about the file itself (SR001), not one engine
    suppressed: tuple[Finding, ...] = ()
    skipped: str | None = None


@dataclass(frozen=True)
class LintReport:
    """A whole lint run."""

    files: tuple[FileResult, ...]
    fail_on: str  # error | warning | info | never
    vllm: str | None = None
    notes: tuple[str, ...] = field(default=())
    # inputs that could not be read at all (missing path, unreadable, explicitly named file with no
    # engine): (path, one-line message). The others are still reported; the run exits 2 at the end.
    failures: tuple[tuple[str, str], ...] = field(default=())

    # -- queries ------------------------------------------------------------------------------
    def engine_count(self) -> int:
        return sum(len(f.engines) for f in self.files)

    def analyzed_files(self) -> list[FileResult]:
        return [f for f in self.files if f.skipped is None]

    def findings(self) -> list[Finding]:
        """Every reported finding, sorted, duplicates (same finding from two engines) removed."""
        return self._gather("findings")

    def suppressed(self) -> list[Finding]:
        """Every suppressed finding, in the same order and without duplicates."""
        return self._gather("suppressed")

    def _gather(self, attr: str) -> list[Finding]:
        out: list[Finding] = []
        for fr in self.files:
            out.extend(getattr(fr, attr))
            for e in fr.engines:
                out.extend(getattr(e, attr))
        return sort_unique(out)

    def fails(self, f: Finding) -> bool:
        """Whether ``f`` is at or above the ``--fail-on`` threshold."""
        return is_failing(f, self.fail_on)

    def failing(self) -> list[Finding]:
        return [f for f in self.findings() if self.fails(f)]

    def exit_code(self) -> int:
        if self.failures:
            return EXIT_ERROR
        return EXIT_FINDINGS if self.failing() else EXIT_OK

    def counts(self) -> dict[str, int]:
        c = {"error": 0, "warning": 0, "info": 0}
        for f in self.findings():
            c[f.severity] += 1
        return c


# ------------------------------------------------------------------------------------------------
# Inline directives
# ------------------------------------------------------------------------------------------------

_DIRECTIVE = re.compile(r"(?:^|\s)#+\s*sched-reader\s*:\s*(ignore-file|ignore)(?![\w-])(.*)$", re.IGNORECASE)


@dataclass
class Directives:
    """The ``# sched-reader: ...`` comments of one file, and which of them suppressed something."""

    ignore_file: bool = False  # bare ignore-file: skip the file
    file_selectors: list[str] = field(default_factory=list)  # ignore-file[...]: these rules, whole file
    lines: dict[int, list[str] | None] = field(default_factory=dict)  # line -> selectors (None: all rules)
    comment_only: set[int] = field(default_factory=set)  # lines holding nothing but a comment
    file_lines: dict[str, int] = field(default_factory=dict)  # ignore-file selector -> its line
    bad: list[tuple[int, str]] = field(default_factory=list)  # (line, word) naming no rule
    used: set[tuple[int, str]] = field(default_factory=set)  # (directive line, selector or "*") that matched

    def suppresses(self, rule: str, line: int | None) -> bool:
        if self.ignore_file:
            return True
        for s in self.file_selectors:
            if matches(rule, s):
                self.used.add((self.file_lines.get(s, 0), s))
                return True
        if not line:
            return False
        for ln in (line, line - 1):
            if ln not in self.lines or (ln != line and ln not in self.comment_only):
                continue
            sel = self.lines[ln]
            if sel is None:
                self.used.add((ln, "*"))
                return True
            hit = [s for s in sel if matches(rule, s)]
            if hit:
                self.used.update((ln, s) for s in hit)
                return True
        return False

    def unused(self) -> list[tuple[int, str]]:
        """``(line, selector)`` of every directive entry no finding matched (``*``: a bare ignore)."""
        out = [(self.file_lines.get(s, 0), s) for s in self.file_selectors
               if (self.file_lines.get(s, 0), s) not in self.used]
        for ln, sel in self.lines.items():
            for s in (["*"] if sel is None else sel):
                if (ln, s) not in self.used:
                    out.append((ln, s))
        return sorted(set(out))


def _directive_selectors(rest: str, bad: list[str] | None = None) -> list[str] | None:
    """Rule selectors after ``ignore`` / ``ignore-file``: ``[SR101, SR104]`` or ``SR101 SR104 -- why``.

    None means every rule. Words after the list (a reason) are ignored; a word inside brackets that
    names no rule is collected in ``bad`` (reported as SR002) and the others still apply.
    """
    rest = rest.strip()
    if rest.startswith("["):
        end = rest.find("]")
        words = re.split(r"[\s,]+", rest[1:end if end >= 0 else len(rest)])
    else:
        words = re.split(r"[\s,]+", rest)
    out: list[str] = []
    for w in words:
        if not w:
            continue
        try:
            sel = normalize_selector(w)
        except ValueError:
            sel = None
        if sel is None or not any(matches(i, sel) for i in rule_ids()):
            if rest.startswith("["):
                if bad is not None:
                    bad.append(w)
                continue  # a typo inside brackets: report it, keep the others
            if sel is None:
                break
            if bad is not None:
                bad.append(w)
            continue
        out.append(sel)
    if not out and bad:
        return []  # only unknown ids: suppress nothing (a typo must not widen to "every rule")
    return out or None


def parse_directives(text: str) -> Directives:
    """All directives in ``text`` (1-based line numbers)."""
    d = Directives()
    for i, raw in enumerate(text.splitlines(), start=1):
        if "sched-reader" not in raw:
            continue
        m = _DIRECTIVE.search(raw)
        if m is None:
            continue
        kind, rest = m.group(1).lower(), m.group(2)
        bad: list[str] = []
        sel = _directive_selectors(rest, bad)
        d.bad.extend((i, w) for w in bad)
        if kind == "ignore-file":
            if sel is None:
                d.ignore_file = True
            else:
                d.file_selectors.extend(sel)
                for s in sel:
                    d.file_lines.setdefault(s, i)
            continue
        d.lines[i] = sel
        if raw.lstrip().startswith("#"):
            d.comment_only.add(i)
    return d


class _DirectiveCache:
    """Directives per file, read once (findings may point into a file the input refers to)."""

    def __init__(self) -> None:
        self._by_file: dict[str, Directives] = {}

    def get(self, file: str | None) -> Directives:
        if not file or (file.startswith("<") and file.endswith(">")):
            return Directives()
        if file not in self._by_file:
            try:  # a regular file under the size bound only: never a device, FIFO or huge file
                text = read_regular_file(file).decode("utf-8", errors="replace")
            except InputError:
                text = ""  # reading the file itself reports why
            self._by_file[file] = parse_directives(text)
        return self._by_file[file]


# ------------------------------------------------------------------------------------------------
# Inputs
# ------------------------------------------------------------------------------------------------


def walk(directory: str, flt: Any = None) -> list[str]:
    """``*.yaml``/``*.yml``/``*.sh`` under ``directory``, sorted, hidden directories skipped (and, with a
    ``FileFilter``, excluded globs and .gitignore'd paths; see ``analyzers/lint_files.py``)."""
    return _walk(directory, flt)[0]


def file_filter(config: Any) -> Any:
    """The exclude/.gitignore filter of a configuration (``analyzers/lint_config.LintConfig``)."""
    gi = None
    if config.respect_gitignore:
        root = repo_root(config.root)
        gi = GitIgnore(root) if root is not None else None
    return FileFilter(root=config.root if config.path else str(base_dir()), excludes=config.excludes(),
                      gitignore=gi)


def expand_inputs(paths: list[str], config: Any = None, force_exclude: bool = False,
                  ) -> tuple[list[tuple[str, bool]], list[tuple[str, str]], list[str]]:
    """``(path, named_explicitly)`` for every file to lint, ``(path, message)`` for every input that cannot
    be read (missing, not a file or directory), and notes on explicitly named files that were excluded.

    Excludes and .gitignore apply to directory walks; to files named explicitly only with
    ``force_exclude`` (as ruff's ``--force-exclude``, for pre-commit, which names every file).
    """
    config = config or LintConfig()
    flt = file_filter(config)
    seen: set[str] = set()
    out: list[tuple[str, bool]] = []
    failures: list[tuple[str, str]] = []
    notes: list[str] = []
    for p in paths:
        if p == "-":
            out.append((p, True))
            continue
        try:
            os.stat(p)  # the same message as every other command: not found, link loop, name too long
        except (OSError, ValueError) as exc:
            err = (os_error(exc, display_name(p)) if isinstance(exc, OSError)
                   else InputError(f"invalid file name: {exc}", file=display_name(p)))
            failures.append((p, str(err)))
            continue
        if os.path.isdir(p):
            items = [(f, False) for f in walk(p, flt)]
        elif not os.path.isfile(p):
            failures.append((p, str(InputError("is not a regular file", file=p))))
            continue
        else:
            why = flt.excluded(p) if force_exclude else None
            if why:
                notes.append(f"skipped {p}: {why}")
                continue
            items = [(p, True)]
        for f, explicit in items:
            key = os.path.realpath(f)
            if key not in seen:
                seen.add(key)
                out.append((f, explicit))
    return out, failures, notes


# ------------------------------------------------------------------------------------------------
# Linting
# ------------------------------------------------------------------------------------------------


@dataclass
class LintOptions:
    gpu: str | None
    vllm: str | None
    model_config: str | None
    capacity: bool
    select: list[str]
    ignore: list[str]
    config: Any = None  # analyzers.lint_config.LintConfig (per-file ignores, severity, workload)
    workload: dict[str, Any] | None = None  # --workload: overrides the file's and the config's

    def selected(self, rule: str) -> bool:
        return any(matches(rule, s) for s in self.select) and not any(matches(rule, s) for s in self.ignore)

    def ignored_in_file(self, rule: str, file: str | None) -> bool:
        """``per-file-ignores`` of the configuration."""
        if self.config is None or not self.config.per_file_ignores or not file:
            return False
        rel = relative_to(file, self.config.root)
        if rel is None:
            return False
        return any(matches_glob(rel, glob) and any(matches(rule, s) for s in sels)
                   for glob, sels in self.config.per_file_ignores)

    def severity_of(self, f: Any) -> Any:
        """``f`` with the configuration's severity override for its rule (the longest selector wins)."""
        if self.config is None or not self.config.severity:
            return f
        hits = [(len(sel), sev) for sel, sev in self.config.severity if matches(f.rule, sel)]
        if not hits:
            return f
        sev = max(hits)[1]
        return f if sev == f.severity else f.model_copy(update={"severity": sev})


def _invalid_file_finding(err: Any, fallback_file: str) -> Any:
    return Finding(
        rule="SR001",
        severity="error",
        message=f"cannot analyze this deploy file: {err.message}",
        file=err.file or fallback_file,
        line=err.line,
        key=err.key,
        fix=err.hint or "fix the syntax or the value named in the message",
    )


def _model_finding(spec: Any) -> Any:
    """SR115 for an engine whose model did not resolve."""
    name = spec.model_name or ""
    cands = [u for u in spec.unresolved if name and u.text == name]
    cands += [u for u in spec.unresolved if (u.origin.key or "").lower().startswith(("model", "--model"))]
    cands += [u for u in spec.unresolved if u.text == "model"]
    if cands:
        u = cands[0]
        reason = u.reason
        if reason.startswith(("unknown model", "no model")):
            message = f"{reason}; capacity checks skipped"
        else:
            message = f"model {u.text} is not resolved ({reason}); capacity checks skipped"
        file, line, key = u.origin.file or spec.file, u.origin.line, u.origin.key
    else:
        message = f"model {name!r} is not in the catalog; capacity checks skipped"
        o = spec.model_origin
        file, line, key = (o.file, o.line, o.key) if o is not None else (spec.file, spec.line, None)
    return Finding(rule="SR115", severity="info", message=message, file=file, line=line, key=key,
                   fix="pass --model-config PATH to the model's config.json (or its directory)")


def _is_option_error(err: Any, opts: LintOptions) -> bool:
    """An error about sched-reader's own options (not the deploy file): exit 2."""
    if err.file is None:
        return True
    if opts.model_config:
        try:
            mc = Path(opts.model_config).resolve()
            ef = Path(err.file).resolve()
        except OSError:
            return False
        return ef == mc or mc in ef.parents
    return False


# Capacity findings that depend on the traffic: without a stated workload lint leaves them out
# (structural checks only: SR201 does not start, SR205 chunked prefill off, SR116 CPU deployment).
WORKLOAD_RULES = ("SR202", "SR203", "SR204")


def _engine_findings(spec: Any, opts: LintOptions) -> tuple[list[Any], str]:
    """All findings of one engine, and the capacity scope: ``none`` (--no-capacity or model not
    resolved), ``structural`` (no workload stated) or ``workload`` (same findings as ``diagnose``).

    A finding about the engine as a whole (no file or no line, e.g. SR110) is attached to the engine's
    own file and line, so every output (SARIF, annotations) can place it.
    """
    findings, scope = _engine_findings_raw(spec, opts)
    return [_at_engine(f, spec) for f in findings], scope


def _at_engine(f: Any, spec: Any) -> Any:
    if f.file is None or (f.line is None and f.file == spec.file and spec.line):
        return f.model_copy(update={"file": f.file or spec.file, "line": f.line or spec.line})
    return f


def _engine_findings_raw(spec: Any, opts: LintOptions) -> tuple[list[Any], str]:
    findings = list(spec.findings)
    if not opts.capacity:
        return findings, "none"
    if spec.arch is None or spec.effective is None:
        return findings + [_model_finding(spec)], "none"
    workload = opts.workload or spec.workload or (opts.config.workload if opts.config is not None else None)
    if workload and workload is not spec.workload:
        spec = spec.model_copy(update={"workload": workload})
    try:
        # with a workload: exactly diagnose's pipeline (performance included: the verdict uses it)
        d = diagnose(spec, {}, performance=bool(workload))
    except SchedReaderError as err:
        if _is_option_error(err, opts):
            raise
        return findings + [_invalid_file_finding(err, spec.file)], "none"
    if workload:
        return list(d.findings), "workload"
    return [f for f in d.findings if f.rule not in WORKLOAD_RULES], "structural"


def _split_kept(findings: list[Any], opts: LintOptions, directives: _DirectiveCache) -> tuple[tuple, tuple]:
    """(kept, suppressed-by-directive) among the selected findings, each sorted and unique.

    Directives are matched against every finding (so a directive for a rule left out by --select is not
    "unused"); severity overrides apply first, per-file ignores with the selection.
    """
    kept, suppressed = [], []
    for f in findings:
        f = opts.severity_of(f)
        hidden = directives.get(f.file).suppresses(f.rule, f.line)
        if not opts.selected(f.rule) or opts.ignored_in_file(f.rule, f.file):
            continue
        if hidden:
            suppressed.append(f)
        else:
            kept.append(f)
    return tuple(sort_unique(kept)), tuple(sort_unique(suppressed))


def _lint_specs(display: str, build: Callable[[], list[Any]], opts: LintOptions,
                directives: _DirectiveCache) -> Any:
    """Build the engines of one input and collect their findings into a ``FileResult``."""
    try:
        specs = build()
    except SchedReaderError as err:
        if _is_option_error(err, opts):
            raise
        errs = [err, *getattr(err, "others", [])]  # every error of the input, one SR001 each
        kept, sup = _split_kept([_invalid_file_finding(e, display) for e in errs], opts, directives)
        return FileResult(file=display, findings=kept, suppressed=sup)
    engines = []
    for spec in specs:
        findings, scope = _engine_findings(spec, opts)
        kept, sup = _split_kept(findings, opts, directives)
        engines.append(EngineResult(name=spec.name, line=spec.line, model=spec.model_name or "",
                                    vllm_version=spec.vllm_version, findings=kept, suppressed=sup,
                                    capacity_checked=scope != "none", capacity_scope=scope))
    return FileResult(file=display, engines=tuple(engines))


def _build_from_raws(raws: list[Any], opts: LintOptions) -> list[Any]:
    """Engine specs from engines already read (the file is read once per lint)."""
    specs = [build_spec(r, gpu=opts.gpu, vllm=opts.vllm, model_config=opts.model_config, strict_model=False)
             for r in raws]
    note_shared_gpus(specs)
    return specs


def lint_file(path: str, explicit: bool, opts: LintOptions, directives: _DirectiveCache) -> Any:
    """One deploy file -> ``FileResult`` (skipped, SR001, or its engines' findings, and SR002 for its
    directives that suppressed nothing)."""
    result = _lint_file(path, explicit, opts, directives)
    extra = _unused_directive_findings(path, result, opts, directives)
    if extra:
        kept, sup = _split_kept(extra, opts, _DirectiveCache())
        result = replace(result, findings=tuple(sort_unique(list(result.findings) + list(kept))))
    return result


def _lint_file(path: str, explicit: bool, opts: LintOptions, directives: _DirectiveCache) -> Any:
    if directives.get(path).ignore_file:
        return FileResult(file=path, skipped="ignored by `# sched-reader: ignore-file`")
    try:
        raws = read_path(path)  # reading first tells "not a deploy file" apart from "a broken deploy file"
    except SchedReaderError as err:
        msg = getattr(err, "message", str(err))
        if isinstance(err, InputError) and msg.startswith(_PATH_ERROR_PREFIXES):
            raise
        no_engine = isinstance(err, InputError) and msg.startswith(_NO_ENGINE_PREFIXES)
        if explicit and no_engine:
            raise
        if not explicit and (no_engine or not _mentions_vllm(path)):
            return FileResult(file=path, skipped=f"not a vLLM deploy file ({msg})")
        errs = [err, *getattr(err, "others", [])]  # every error of the file, one SR001 each
        found = [_invalid_file_finding(e, path) for e in errs]
        if _is_template(path):
            if not explicit:
                return FileResult(file=path, skipped=_TEMPLATE_NOTE)
            found = [f.model_copy(update={"fix": _TEMPLATE_NOTE[0].upper() + _TEMPLATE_NOTE[1:]}) for f in found]
        kept, sup = _split_kept(found, opts, directives)
        return FileResult(file=path, findings=kept, suppressed=sup)
    if not explicit and not _plausible_vllm_config(path):
        return FileResult(file=path, skipped="not a vLLM deploy file (a YAML mapping whose keys are mostly not vLLM flags)")
    if any("Helm/Go template" in n for r in raws for n in r.notes):
        # config/diagnose read a template's literal flags; the gate keeps its contract for templates
        if not explicit:
            return FileResult(file=path, skipped=_TEMPLATE_NOTE)
        finding = _invalid_file_finding(InputError("a Helm/Go template is not YAML until rendered", file=path), path)
        finding = finding.model_copy(update={"fix": _TEMPLATE_NOTE[0].upper() + _TEMPLATE_NOTE[1:]})
        kept, sup = _split_kept([finding], opts, directives)
        return FileResult(file=path, findings=kept, suppressed=sup)
    return _lint_specs(path, lambda: _build_from_raws(raws, opts), opts, directives)


def _unevaluated_rules(result: Any, opts: LintOptions) -> set[str] | None:
    """Rules that did not run on this file (their directives cannot be judged unused); None: judge none."""
    if result.skipped is not None or not result.engines:
        return None
    scopes = {e.capacity_scope for e in result.engines}
    out: set[str] = set()
    if "none" in scopes:
        out |= {r for r in rule_ids() if r.startswith("SR2") or r in ("SR115", "SR116")}
    if scopes - {"workload"}:
        out |= set(WORKLOAD_RULES)
    return out


def _unused_directive_findings(path: str, result: Any, opts: LintOptions, directives: _DirectiveCache) -> list:
    """SR002 for each directive entry of ``path`` that suppressed nothing, or names no rule."""
    d = directives.get(path)
    if d.ignore_file:
        return []
    out = []
    for line, word in d.bad:
        guess = suggest(word)
        out.append(Finding(rule="SR002", severity="warning", file=path, line=line, key=word,
                           message=f"{word!r} in a sched-reader directive names no rule, so it suppresses nothing",
                           fix=f"did you mean {guess}?" if guess else "use a rule id from `sched-reader rules`"))
    skip = _unevaluated_rules(result, opts)
    if skip is None:
        return out
    for line, sel in d.unused():
        covered = rule_ids() if sel == "*" else [r for r in rule_ids() if matches(r, sel)]
        if any(r in skip for r in covered):
            continue  # e.g. ignore[SR202] on a file linted without a workload: cannot tell
        what = "every rule" if sel == "*" else sel
        where = "in this file" if line in d.file_lines.values() and line not in d.lines else (
            "on this line or the next" if line in d.comment_only else "on this line")
        out.append(Finding(rule="SR002", severity="warning", file=path, line=line or None,
                           key=None if sel == "*" else sel,
                           message=f"the directive ignoring {what} suppresses nothing: no such finding {where}",
                           fix="remove the directive (or correct the rule id)"))
    return out


def _plausible_vllm_config(path: str) -> bool:
    """In a directory walk, whether a file read as a bare vLLM ``--config`` mapping really is one.

    Any mapping whose keys look like flag names reads as a vLLM config (``kustomization.yaml``,
    a chart's ``values.yaml``); in a walk such a file counts only when at least half of its top-level
    keys are flags some vLLM release registers. Files of every other form are always plausible.
    """
    if not path.lower().endswith((".yaml", ".yml")):
        return True
    try:
        text = read_text(path)  # bounded: a regular file under limits.MAX_FILE_BYTES
        docs = load_documents(text, path)
        if kind_of(docs) != "vllm-config":
            return True
        root = next(d.root for d in docs if isinstance(d.root, dict))
    except Exception:  # noqa: BLE001 - the reader accepted it; let the analysis decide
        return True
    keys = [str(k) for k in root]
    known = sum(1 for k in keys if k == "model" or first_seen("--" + k) is not None)
    return known >= 1 and 2 * known >= len(keys)


_TEMPLATE_NOTE = ("a Helm/Go template, not YAML until rendered: lint the chart's values file, or the rendered "
                  "manifests (`helm template CHART | sched-reader lint -`)")


def _is_template(path: str) -> bool:
    """A file that is not YAML because it holds Go template actions (a Helm chart's ``templates/``)."""
    try:  # a regular file only: never blocks on a FIFO or reads a device
        head = read_regular_file(path)[: 1 << 20]
    except InputError:
        return False
    return b"{{" in head and b"}}" in head


def _mentions_vllm(path: str) -> bool:
    try:  # a regular file under the size bound only
        return b"vllm" in read_regular_file(path).lower()
    except InputError:
        return False


def _check_options(opts: LintOptions) -> None:
    """Resolve --vllm and --gpu once, before any file: a bad value is exit 2, not a finding per file."""
    if opts.vllm:
        resolve_version(opts.vllm)
    if opts.gpu:
        resolve_gpu(opts.gpu)


def parse_selectors(values: list[str] | None, where: str = "--select") -> list[str]:
    """Normalized selectors; one that is malformed or matches no rule is exit 2 with a suggestion
    (``--select SR999`` must not silently turn the gate off)."""
    return check_selectors(list(values or []), where)


# -- one file in a worker -------------------------------------------------------------------------

_WORKER: dict[str, Any] = {}


def _worker_init(opts: LintOptions) -> None:
    _WORKER["opts"] = opts
    _WORKER["directives"] = _DirectiveCache()


def _lint_worker(item: tuple[str, bool]) -> tuple[str, Any]:
    """``("ok", FileResult)``, ``("fail", message)`` (this input cannot be read), or ``("abort", message)``
    (an option is wrong: the whole run stops with exit 2)."""
    opts = _WORKER["opts"]
    path, explicit = item
    try:
        return "ok", lint_file(path, explicit, opts, _WORKER["directives"])
    except SchedReaderError as err:
        return ("abort" if _is_option_error(err, opts) else "fail"), str(err)


def _warm(opts: LintOptions) -> None:
    """Load the flag tables and catalogs once in this process, before workers are forked from it."""
    try:
        for spec in build_specs([], ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"], gpu=opts.gpu,
                                vllm=opts.vllm, strict_model=False):
            _engine_findings(spec, opts)
    except SchedReaderError:
        pass


def _rename(fr: Any, old: str, new: str) -> Any:
    """``fr`` with every mention of file ``old`` replaced by ``new`` (stdin's temporary file)."""
    def fix(fs: tuple) -> tuple:
        return tuple(f.model_copy(update={"file": new}) if f.file == old else f for f in fs)

    engines = tuple(replace(e, findings=fix(e.findings), suppressed=fix(e.suppressed)) for e in fr.engines)
    return replace(fr, file=new if fr.file == old else fr.file, engines=engines, findings=fix(fr.findings),
                   suppressed=fix(fr.suppressed))


def _lint_stdin(opts: LintOptions, stdin_filename: str | None) -> Any:
    """``-``: the deploy file on standard input (``--stdin-filename`` names it in the output)."""
    text = sys.stdin.read()
    display = stdin_filename or "<stdin>"
    base = os.path.basename(stdin_filename) if stdin_filename else (
        "stdin.sh" if text.lstrip().startswith(("#!", "vllm ", "python")) else "stdin.yaml")
    with tempfile.TemporaryDirectory(prefix="sched-reader-") as tmp:
        path = os.path.join(tmp, base)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        status, value = _lint_worker((path, True))
    if status != "ok":
        raise InputError(value.replace(path, display))
    return _rename(value, path, display)


def run_lint(paths: list[str], command_line: list[str] | None, opts: LintOptions, fail_on: str, *,
             force_exclude: bool = False,
             jobs: int = 1, progress: Callable[[int, int], None] | None = None,
             stdin_filename: str | None = None, skip_unrecognized: bool = False) -> Any:
    """Lint the inputs and return the ``LintReport`` (usable without the CLI).

    An input that cannot be read (missing path, an explicitly named file with no vLLM engine) is listed
    in ``report.failures`` and the others are still linted (exit 2 at the end); when no input at all
    could be read, the first failure is raised (exit 2, nothing on stdout).
    """
    if not paths and not command_line:
        raise InputError("nothing to lint", hint="give deploy files or directories, or a command line after `--`")
    _check_options(opts)
    items, failures, notes = expand_inputs(paths, opts.config, force_exclude)
    results: list[Any] = []
    file_items = [(p, explicit and not skip_unrecognized) for p, explicit in items if p != "-"]
    if effective_jobs(jobs, len(file_items)) > 1:
        _warm(opts)
    done = map_ordered(_lint_worker, file_items, jobs, initializer=_worker_init, initargs=(opts,),
                       progress=(lambda n: progress(n, len(file_items))) if progress else None)
    for (path, _explicit), (status, value) in zip(file_items, done):
        if status == "abort":
            raise InputError(value)
        if status == "fail":
            failures.append((path, value))
        else:
            results.append(value)
    if any(p == "-" for p, _ in items):
        _worker_init(opts)
        results.append(_lint_stdin(opts, stdin_filename))
    if command_line:
        results.append(_lint_specs(
            "<command line>",
            lambda: build_specs([], command_line, gpu=opts.gpu, vllm=opts.vllm, model_config=opts.model_config,
                                strict_model=False),
            opts, _DirectiveCache()))
    if failures and not results:
        raise InputError(failures[0][1]) if len(failures) == 1 else InputError(
            f"no input could be read: {'; '.join(m for _, m in failures)}")
    return LintReport(files=tuple(results), fail_on=fail_on, vllm=opts.vllm, notes=tuple(notes),
                      failures=tuple(failures))


def apply_baseline(report: Any, known: set) -> tuple[Any, int]:
    """``report`` without the findings already in the baseline, and how many were left out."""
    new, old = split_new(report.findings(), known)
    keep = set(new)
    files = []
    for fr in report.files:
        engines = tuple(replace(e, findings=tuple(f for f in e.findings if f in keep)) for e in fr.engines)
        files.append(replace(fr, engines=engines, findings=tuple(f for f in fr.findings if f in keep)))
    notes = report.notes + ((f"{len(old)} finding(s) already in the baseline are not shown",) if old else ())
    return replace(report, files=tuple(files), notes=notes), len(old)


def load_workload(path: str | None) -> dict[str, Any] | None:
    """``--workload FILE``: a YAML mapping with the keys of a sched-reader ``workload:`` section (or a
    file holding such a section), or a JSONL request trace."""
    if not path:
        return None
    p = Path(path)
    if not p.is_file():
        raise InputError("workload file not found", file=path)
    if p.suffix.lower() == ".jsonl":
        return {"trace": str(p.resolve())}
    # read like a deploy file: a regular file under limits.MAX_FILE_BYTES, UTF-8, safe YAML, no alias bombs
    text = read_text_file(path, key="--workload", what="workload file")
    docs = load_documents(text, path) if text.strip() else []
    data = docs[0].root if docs else None
    if isinstance(data, dict) and isinstance(data.get("workload"), dict):
        data = data["workload"]
    return check_workload(data, path)
