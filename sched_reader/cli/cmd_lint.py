"""``sched-reader lint``: the CI gate. Every finding of every engine in the deploy files, in a machine format.

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
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Callable, List, Optional

import typer

from sched_reader.cli.common import (
    COMMAND_LINE,
    GpuOption,
    ModelConfigOption,
    VllmOption,
    run_guarded,
    split_inputs,
)
from sched_reader.cli.fail_on import FailOn

WALK_SUFFIXES = (".yaml", ".yml", ".sh")

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


class LintFormat(str, Enum):
    """Output formats of ``lint`` (``auto``: github under GitHub Actions, else text)."""

    auto = "auto"
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"
    junit = "junit"


# ------------------------------------------------------------------------------------------------
# Inline directives
# ------------------------------------------------------------------------------------------------

_DIRECTIVE = re.compile(r"(?:^|\s)#+\s*sched-reader\s*:\s*(ignore-file|ignore)(?![\w-])(.*)$", re.IGNORECASE)


@dataclass
class Directives:
    """The ``# sched-reader: ...`` comments of one file."""

    ignore_file: bool = False  # bare ignore-file: skip the file
    file_selectors: list[str] = field(default_factory=list)  # ignore-file[...]: these rules, whole file
    lines: dict[int, list[str] | None] = field(default_factory=dict)  # line -> selectors (None: all rules)
    comment_only: set[int] = field(default_factory=set)  # lines holding nothing but a comment

    def suppresses(self, rule: str, line: int | None) -> bool:
        from sched_reader.analyzers.rule_catalog import matches

        if self.ignore_file or any(matches(rule, s) for s in self.file_selectors):
            return True
        if not line:
            return False
        for ln in (line, line - 1):
            if ln not in self.lines or (ln != line and ln not in self.comment_only):
                continue
            sel = self.lines[ln]
            if sel is None or any(matches(rule, s) for s in sel):
                return True
        return False


def _directive_selectors(rest: str) -> list[str] | None:
    """Rule selectors after ``ignore`` / ``ignore-file``: ``[SR101, SR104]`` or ``SR101 SR104 -- why``.

    None means every rule. Words after the list (a reason) are ignored.
    """
    from sched_reader.analyzers.rule_catalog import normalize_selector

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
            out.append(normalize_selector(w))
        except ValueError:
            if rest.startswith("["):
                continue  # a typo inside brackets: skip it, keep the others
            break
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
        sel = _directive_selectors(rest)
        if kind == "ignore-file":
            if sel is None:
                d.ignore_file = True
            else:
                d.file_selectors.extend(sel)
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
            from sched_reader.errors import InputError
            from sched_reader.limits import read_regular_file

            try:  # a regular file under the size bound only: never a device, FIFO or huge file
                text = read_regular_file(file).decode("utf-8", errors="replace")
            except InputError:
                text = ""  # reading the file itself reports why
            self._by_file[file] = parse_directives(text)
        return self._by_file[file]


# ------------------------------------------------------------------------------------------------
# Inputs
# ------------------------------------------------------------------------------------------------


def _split(files: list[str] | None) -> tuple[list[str], list[str] | None]:
    """Paths and a command line; an existing path (a directory named ``vllm``) is always a path."""
    if COMMAND_LINE.get() is not None:
        return split_inputs(files)
    words = list(files or [])
    for i, word in enumerate(words):
        if os.path.exists(word):
            continue
        head, tail = split_inputs(words[i:])
        if tail is not None:
            return words[:i] + head, tail
        break
    return words, None


def walk(directory: str) -> list[str]:
    """``*.yaml``/``*.yml``/``*.sh`` under ``directory``, sorted, hidden directories skipped."""
    from sched_reader.limits import display_name, os_error

    def unreadable(exc: OSError) -> None:  # a directory that cannot be listed is an error, not "0 files"
        raise os_error(exc, display_name(exc.filename or directory))

    out: list[str] = []
    for root, dirs, names in os.walk(directory, onerror=unreadable):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.lower().endswith(WALK_SUFFIXES) and not name.startswith("."):
                out.append(os.path.normpath(os.path.join(root, name)))
    return sorted(out, key=lambda p: Path(p).parts)


def expand_inputs(paths: list[str]) -> list[tuple[str, bool]]:
    """``(path, named_explicitly)`` for every file to lint; missing paths raise (exit 2)."""
    from sched_reader.errors import InputError

    from sched_reader.limits import display_name, os_error

    seen: set[str] = set()
    out: list[tuple[str, bool]] = []
    for p in paths:
        try:
            os.stat(p)  # the same message as every other command: not found, link loop, name too long
        except OSError as exc:
            raise os_error(exc, display_name(p)) from None
        except ValueError as exc:
            raise InputError(f"invalid file name: {exc}", file=display_name(p)) from None
        if os.path.isdir(p):
            items = [(f, False) for f in walk(p)]
        else:
            items = [(p, True)]
        for f, explicit in items:
            key = os.path.realpath(f)
            if key not in seen:
                seen.add(key)
                out.append((f, explicit))
    return out


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

    def selected(self, rule: str) -> bool:
        from sched_reader.analyzers.rule_catalog import matches

        return any(matches(rule, s) for s in self.select) and not any(matches(rule, s) for s in self.ignore)


def _invalid_file_finding(err: Any, fallback_file: str) -> Any:
    from sched_reader.findings import Finding

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
    from sched_reader.findings import Finding

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


def _engine_findings(spec: Any, opts: LintOptions) -> tuple[list[Any], bool]:
    """All findings of one engine (SR1xx, and SR2xx or SR115 with --capacity); and whether capacity ran."""
    from sched_reader.errors import SchedReaderError

    findings = list(spec.findings)
    if not opts.capacity:
        return findings, False
    if spec.arch is None or spec.effective is None:
        return findings + [_model_finding(spec)], False
    from sched_reader.analyzers.diagnosis import diagnose

    try:
        d = diagnose(spec, {}, performance=False)
    except SchedReaderError as err:
        if _is_option_error(err, opts):
            raise
        return findings + [_invalid_file_finding(err, spec.file)], False
    return list(d.findings), True


def _split_kept(findings: list[Any], opts: LintOptions, directives: _DirectiveCache) -> tuple[tuple, tuple]:
    """(kept, suppressed-by-directive) among the selected findings, each sorted and unique."""
    from sched_reader.report.findings_text import sort_unique

    kept, suppressed = [], []
    for f in findings:
        if not opts.selected(f.rule):
            continue
        if directives.get(f.file).suppresses(f.rule, f.line):
            suppressed.append(f)
        else:
            kept.append(f)
    return tuple(sort_unique(kept)), tuple(sort_unique(suppressed))


def _lint_specs(display: str, build: Callable[[], list[Any]], opts: LintOptions,
                directives: _DirectiveCache) -> Any:
    """Build the engines of one input and collect their findings into a ``FileResult``."""
    from sched_reader.errors import SchedReaderError
    from sched_reader.report.findings_text import EngineResult, FileResult

    try:
        specs = build()
    except SchedReaderError as err:
        if _is_option_error(err, opts):
            raise
        errs = [err, *getattr(err, "others", [])]  # every error of the file, one SR001 each
        kept, sup = _split_kept([_invalid_file_finding(e, display) for e in errs], opts, directives)
        return FileResult(file=display, findings=kept, suppressed=sup)
    engines = []
    for spec in specs:
        findings, checked = _engine_findings(spec, opts)
        kept, sup = _split_kept(findings, opts, directives)
        engines.append(EngineResult(name=spec.name, line=spec.line, model=spec.model_name or "",
                                    vllm_version=spec.vllm_version, findings=kept, suppressed=sup,
                                    capacity_checked=checked))
    return FileResult(file=display, engines=tuple(engines))


def lint_file(path: str, explicit: bool, opts: LintOptions, directives: _DirectiveCache) -> Any:
    """One deploy file -> ``FileResult`` (skipped, SR001, or its engines' findings)."""
    from sched_reader.errors import InputError, SchedReaderError
    from sched_reader.models.spec_builder import build_specs
    from sched_reader.readers import read_path
    from sched_reader.report.findings_text import FileResult

    if directives.get(path).ignore_file:
        return FileResult(file=path, skipped="ignored by `# sched-reader: ignore-file`")
    try:
        read_path(path)  # reading first tells "not a deploy file" apart from "a broken deploy file"
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
        kept, sup = _split_kept([_invalid_file_finding(e, path) for e in errs], opts, directives)
        return FileResult(file=path, findings=kept, suppressed=sup)
    if not explicit and not _plausible_vllm_config(path):
        return FileResult(file=path, skipped="not a vLLM deploy file (a YAML mapping whose keys are mostly not vLLM flags)")
    return _lint_specs(path, lambda: build_specs([path], None, gpu=opts.gpu, vllm=opts.vllm,
                                                 model_config=opts.model_config, strict_model=False),
                       opts, directives)


def _plausible_vllm_config(path: str) -> bool:
    """In a directory walk, whether a file read as a bare vLLM ``--config`` mapping really is one.

    Any mapping whose keys look like flag names reads as a vLLM config (``kustomization.yaml``,
    a chart's ``values.yaml``); in a walk such a file counts only when at least half of its top-level
    keys are flags some vLLM release registers. Files of every other form are always plausible.
    """
    from sched_reader.compat.argtable import first_seen
    from sched_reader.readers.detect import kind_of
    from sched_reader.readers.yaml_tree import load_documents

    if not path.lower().endswith((".yaml", ".yml")):
        return True
    from sched_reader.readers.source import read_text

    try:
        text = read_text(path)
        docs = load_documents(text, path)
        if kind_of(docs) != "vllm-config":
            return True
        root = next(d.root for d in docs if isinstance(d.root, dict))
    except Exception:  # noqa: BLE001 - the reader accepted it; let the analysis decide
        return True
    keys = [str(k) for k in root]
    known = sum(1 for k in keys if k == "model" or first_seen("--" + k) is not None)
    return known >= 1 and 2 * known >= len(keys)


def _mentions_vllm(path: str) -> bool:
    from sched_reader.errors import InputError
    from sched_reader.limits import read_regular_file

    try:
        return b"vllm" in read_regular_file(path).lower()
    except InputError:
        return False


def _check_options(opts: LintOptions) -> None:
    """Resolve --vllm and --gpu once, before any file: a bad value is exit 2, not a finding per file."""
    if opts.vllm:
        from sched_reader.compat.releases import resolve_version

        resolve_version(opts.vllm)
    if opts.gpu:
        from sched_reader.models.gpu_catalog import resolve_gpu

        resolve_gpu(opts.gpu)


def _selectors(values: list[str] | None) -> list[str]:
    from sched_reader.analyzers.rule_catalog import normalize_selector
    from sched_reader.errors import InputError

    out: list[str] = []
    for v in values or []:
        for word in v.split(","):
            if not word.strip():
                continue
            try:
                out.append(normalize_selector(word))
            except ValueError as err:
                raise InputError(str(err)) from None
    return out


def run_lint(files: list[str] | None, opts: LintOptions, fail_on: str) -> Any:
    """Lint the inputs and return the ``LintReport`` (usable without the CLI)."""
    from sched_reader.errors import InputError
    from sched_reader.models.spec_builder import build_specs
    from sched_reader.report.findings_text import LintReport

    paths, command_line = _split(files)
    if not paths and not command_line:
        raise InputError("nothing to lint", hint="give deploy files or directories, or a command line after `--`")
    _check_options(opts)
    directives = _DirectiveCache()
    results = [lint_file(p, explicit, opts, directives) for p, explicit in expand_inputs(paths)]
    if command_line:
        results.append(_lint_specs(
            "<command line>",
            lambda: build_specs([], command_line, gpu=opts.gpu, vllm=opts.vllm, model_config=opts.model_config,
                                strict_model=False),
            opts, directives))
    return LintReport(files=tuple(results), fail_on=fail_on, vllm=opts.vllm)


def resolve_format(fmt: LintFormat, environ: Any = None) -> LintFormat:
    """``auto`` -> ``github`` when GITHUB_ACTIONS and GITHUB_WORKFLOW are set, else ``text``."""
    if fmt != LintFormat.auto:
        return fmt
    env = os.environ if environ is None else environ
    return LintFormat.github if env.get("GITHUB_ACTIONS") and env.get("GITHUB_WORKFLOW") else LintFormat.text


def render(report: Any, fmt: LintFormat) -> str:
    from sched_reader import __version__

    if fmt == LintFormat.json:
        from sched_reader.report.findings_text import render_json

        return render_json(report, __version__)
    if fmt == LintFormat.sarif:
        from sched_reader.report.sarif import render_sarif

        return render_sarif(report, __version__)
    if fmt == LintFormat.github:
        from sched_reader.report.github import render_github

        return render_github(report)
    if fmt == LintFormat.junit:
        from sched_reader.report.junit import render_junit

        return render_junit(report)
    from sched_reader.report.findings_text import render_text

    return render_text(report)


def _write(path: str, text: str) -> None:
    from sched_reader.errors import InputError

    try:
        Path(path).write_text(text, encoding="utf-8", newline="\n")
    except OSError as exc:
        raise InputError(f"cannot write the output: {exc.strerror or exc}", file=path) from None


def lint(
    files: Optional[List[str]] = typer.Argument(
        None, help="Deploy files or directories (walked for *.yaml, *.yml, *.sh); or `-- vllm serve ...`."
    ),
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    fmt: LintFormat = typer.Option(
        LintFormat.auto, "--format", "-f", case_sensitive=False,
        help="Output format; auto = github under GitHub Actions (GITHUB_ACTIONS and GITHUB_WORKFLOW set), else text.",
    ),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the output to this file instead of stdout."),
    sarif_file: Optional[str] = typer.Option(
        None, "--sarif-file", help="Also write SARIF 2.1.0 to this file (for github/codeql-action/upload-sarif)."
    ),
    fail_on: FailOn = typer.Option(
        FailOn.error, "--fail-on", case_sensitive=False, help="Exit 1 when a finding of this severity or worse remains."
    ),
    capacity: bool = typer.Option(
        True, "--capacity/--no-capacity", help="Also run the capacity checks (SR2xx) for engines whose model resolves."
    ),
    select: Optional[List[str]] = typer.Option(
        None, "--select", help="Only these rules: ids, id prefixes (SR1), names, ALL; comma-separated or repeated."
    ),
    ignore: Optional[List[str]] = typer.Option(
        None, "--ignore", help="Leave out these rules (same forms as --select)."
    ),
) -> None:
    """Lint deploy configs for CI: flag/version checks (SR1xx) and capacity checks (SR2xx).

    Inline `# sched-reader: ignore SR101` (on the line, or a comment line above) and
    `# sched-reader: ignore-file` directives suppress findings.

    Exit codes: 0 no finding at or above --fail-on (default error), 1 otherwise, 2 could not complete.
    """

    def body() -> int:
        opts = LintOptions(gpu=gpu, vllm=vllm, model_config=model_config, capacity=capacity,
                           select=_selectors(select) or ["ALL"], ignore=_selectors(ignore))
        report = run_lint(files, opts, fail_on.value)
        chosen = resolve_format(fmt)
        text = render(report, chosen)
        if sarif_file:
            _write(sarif_file, render(report, LintFormat.sarif))
        if output:
            _write(output, text)
        else:
            typer.echo(text, nl=False)
        if chosen == LintFormat.github and os.environ.get("GITHUB_STEP_SUMMARY"):
            from sched_reader.report.github import step_summary

            try:
                with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as fh:
                    fh.write(step_summary(report))
            except OSError:
                pass  # the summary is a convenience; the annotations are already out
        return report.exit_code()

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``lint`` to the app."""
    app.command("lint")(lint)
