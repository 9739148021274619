"""Configuration of ``sched-reader lint``: discovery, validation, and merging with the command line.

Discovery (first match wins; ``--config-file PATH`` names one, ``--isolated`` skips them all):

1. walking up from the directory of the first input (or the working directory), in each directory:
   ``.sched-reader.yaml``, ``.sched-reader.yml``, then ``pyproject.toml`` *with* a
   ``[tool.sched-reader]`` table (a pyproject without that table is passed over, as ruff does);
2. the walk stops at the repository root (the first directory holding ``.git``), else at ``/``;
3. nothing found: the defaults below.

Keys (kebab-case; snake_case accepted)::

    select: [SR1, SR201]          # rules to run (ids, id prefixes, names, ALL); default ALL
    extend-select: [...]          # added to select
    ignore: [SR110]               # left out
    per-file-ignores:             # glob (relative to the config's directory) -> selectors
      "legacy/**": [SR104]
    severity: {SR110: warning}    # per-rule severity override: error | warning | info
    fail-on: warning              # error | warning | info | never (default error)
    vllm: 0.19.0                  # release to check against
    gpu: H100                     # GPU to assume when the file does not say
    exclude: ["build/**"]         # globs replacing the default excludes
    extend-exclude: ["tmp/**"]    # globs added to them
    respect-gitignore: true       # skip what .gitignore ignores (default true)
    workload: {random-input-len: 2048, num-prompts: 500, max-concurrency: 64}
    baseline: sched-reader-baseline.json   # report only findings not in it (path relative to this file)

An unknown key, a wrong type, or a rule selector that matches no rule is an ``InputError`` (exit 2)
naming the file, line and key, with a did-you-mean suggestion: a typo must never turn the gate off.
Command-line options win over the file: ``--select`` replaces ``select``; ``--extend-select``,
``--ignore``, ``--exclude`` and ``--extend-exclude`` add to the file's lists.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
import tomllib

from sched_reader.errors import InputError
from sched_reader.analyzers.rule_catalog import matches, normalize_selector
from sched_reader.analyzers.rule_docs import rule_ids, rule_names
from sched_reader.analyzers.simulator.workloads import WorkloadSpec
from sched_reader.models.workload import Workload

CONFIG_NAMES = (".sched-reader.yaml", ".sched-reader.yml")
PYPROJECT = "pyproject.toml"
SEVERITIES = ("error", "warning", "info")
FAIL_ON = ("error", "warning", "info", "never")

# Excluded in a directory walk unless ``exclude`` replaces the list (hidden directories are always skipped).
DEFAULT_EXCLUDES = ("node_modules", "venv", ".venv", "__pycache__", "site-packages", "dist", "build")

_LIST_KEYS = ("select", "extend-select", "ignore", "exclude", "extend-exclude")
KNOWN_KEYS = _LIST_KEYS + ("per-file-ignores", "severity", "fail-on", "vllm", "gpu", "respect-gitignore",
                           "workload", "baseline")


@dataclass(frozen=True)
class LintConfig:
    """Settings from one configuration file (or the defaults); ``path`` is None for the defaults."""

    path: str | None = None
    root: str = "."  # directory that globs are relative to
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    severity: tuple[tuple[str, str], ...] = ()
    fail_on: str | None = None
    vllm: str | None = None
    gpu: str | None = None
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    workload: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    baseline: str | None = None  # absolute path

    def excludes(self) -> tuple[str, ...]:
        base = DEFAULT_EXCLUDES if self.exclude is None else self.exclude
        return tuple(base) + tuple(self.extend_exclude)


# ------------------------------------------------------------------------------------------------
# Discovery
# ------------------------------------------------------------------------------------------------


def repo_root(start: str | Path) -> Path | None:
    """The nearest directory at or above ``start`` that holds ``.git`` (a repository root), or None."""
    p = Path(start).resolve()
    if p.is_file():
        p = p.parent
    for d in (p, *p.parents):
        if (d / ".git").exists():
            return d
    return None


def find_config(start: str | Path) -> Path | None:
    """The nearest configuration file at or above ``start`` (stopping at the repository root)."""
    p = Path(start).resolve()
    if not p.is_dir():
        p = p.parent
    stop = repo_root(p)
    for d in (p, *p.parents):
        for name in CONFIG_NAMES:
            if (d / name).is_file():
                return d / name
        pp = d / PYPROJECT
        if pp.is_file() and _pyproject_table(pp) is not None:
            return pp
        if stop is not None and d == stop:
            break
    return None


def discover(inputs: list[str], config_file: str | None = None, isolated: bool = False) -> LintConfig:
    """The configuration for a run over ``inputs`` (paths; ``-`` and missing ones are passed over)."""
    if config_file:
        if isolated:
            raise InputError("--config-file and --isolated cannot be used together")
        return load_config(config_file)
    if isolated:
        return LintConfig()
    start = next((p for p in inputs if p != "-" and os.path.exists(p)), ".")
    found = find_config(start)
    if found is None:
        return LintConfig()
    rel = os.path.relpath(found)
    return load_config(rel if not rel.startswith("..") else str(found))


# ------------------------------------------------------------------------------------------------
# Loading and validation
# ------------------------------------------------------------------------------------------------


def _pyproject_table(path: Path) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    tool = data.get("tool")
    table = tool.get("sched-reader") if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None


def load_config(path: str) -> LintConfig:
    """Read and validate one configuration file (``.yaml``/``.yml`` or ``pyproject.toml``)."""
    p = Path(path)
    if not p.is_file():
        raise InputError("configuration file not found", file=path, hint="check the --config-file path")
    lines: dict[str, int] = {}
    if p.name == PYPROJECT or p.suffix == ".toml":
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the configuration: {exc}", file=path) from None
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"invalid TOML: {exc}", file=path) from None
        tool = data.get("tool") if isinstance(data, dict) else None
        table = tool.get("sched-reader") if isinstance(tool, dict) else None
        if table is None:
            if p.suffix == ".toml" and p.name != PYPROJECT:
                table = data
            else:
                raise InputError("no [tool.sched-reader] table", file=path,
                                 hint="add a [tool.sched-reader] table, or name a .sched-reader.yaml")
        lines = _toml_key_lines(p)
    else:
        table, lines = _load_yaml(p)
    return parse_config(table, path, lines)


def _load_yaml(p: Path) -> tuple[Any, dict[str, int]]:
    import yaml

    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the configuration: {exc}", file=str(p)) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"invalid YAML: {getattr(exc, 'problem', None) or exc}", file=str(p),
                         line=mark.line + 1 if mark else None) from None
    lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for k, _v in node.value:
            lines[str(k.value)] = k.start_mark.line + 1
    return ({} if data is None else data), lines


def _toml_key_lines(p: Path) -> dict[str, int]:
    """1-based line of each top-level key of the [tool.sched-reader] table (for messages)."""
    out: dict[str, int] = {}
    inside = p.suffix == ".toml" and p.name != PYPROJECT
    try:
        text = p.read_text(encoding="utf-8")
    except OSError:
        return out
    for i, raw in enumerate(text.splitlines(), start=1):
        s = raw.strip()
        if s.startswith("["):
            inside = s.replace(" ", "").strip("[]").replace('"', "") in ("tool.sched-reader",)
            sub = s.replace(" ", "").strip("[]").replace('"', "")
            if sub.startswith("tool.sched-reader."):
                out.setdefault(sub[len("tool.sched-reader."):].split(".")[0], i)
            continue
        if inside and "=" in s and not s.startswith("#"):
            out.setdefault(s.split("=", 1)[0].strip().strip('"'), i)
    return out


def _suggest(word: str, choices: list[str]) -> str | None:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return close[0] if close else None


def parse_config(data: Any, path: str, lines: dict[str, int] | None = None) -> LintConfig:
    """Validate a configuration mapping (from YAML or TOML) into a ``LintConfig``."""
    lines = lines or {}
    if not isinstance(data, dict):
        raise InputError("the configuration must be a mapping of keys", file=path,
                         hint="see README 'Configuration' for the keys")
    root = str(Path(path).resolve().parent)
    values: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = str(raw_key).replace("_", "-")
        line = lines.get(str(raw_key))
        if key not in KNOWN_KEYS:
            guess = _suggest(key, list(KNOWN_KEYS))
            raise InputError(f"unknown configuration key {str(raw_key)!r}", file=path, line=line,
                             hint=f"did you mean {guess!r}?" if guess else f"known keys: {', '.join(KNOWN_KEYS)}")
        values[key] = _check_value(key, value, path, line)
    kw: dict[str, Any] = {"path": path, "root": root}
    for key, value in values.items():
        kw[key.replace("-", "_")] = value
    return LintConfig(**kw)


def _err(path: str, line: int | None, key: str, message: str, hint: str | None = None) -> InputError:
    return InputError(message, file=path, line=line, key=key, hint=hint)


def _str_list(key: str, value: Any, path: str, line: int | None) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [v for v in value.replace(",", " ").split()]
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) for v in value):
        raise _err(path, line, key, "must be a list of strings")
    return tuple(str(v) for v in value)


def _check_value(key: str, value: Any, path: str, line: int | None) -> Any:
    if key in ("select", "extend-select", "ignore"):
        return tuple(check_selectors(_str_list(key, value, path, line), f"{key}", path=path, line=line))
    if key in ("exclude", "extend-exclude"):
        return _str_list(key, value, path, line)
    if key == "per-file-ignores":
        if not isinstance(value, dict):
            raise _err(path, line, key, "must be a mapping of glob -> rule selectors")
        return tuple((str(g), tuple(check_selectors(_str_list(key, v, path, line), f"{key} {g!r}", path=path,
                                                    line=line)))
                     for g, v in value.items())
    if key == "severity":
        if not isinstance(value, dict):
            raise _err(path, line, key, "must be a mapping of rule -> error|warning|info")
        out = []
        for sel, sev in value.items():
            [norm] = check_selectors([str(sel)], key, path=path, line=line)
            if str(sev).lower() not in SEVERITIES:
                raise _err(path, line, key, f"severity {sev!r} for {sel} is not one of {', '.join(SEVERITIES)}")
            out.append((norm, str(sev).lower()))
        return tuple(out)
    if key == "fail-on":
        if str(value).lower() not in FAIL_ON:
            raise _err(path, line, key, f"{value!r} is not one of {', '.join(FAIL_ON)}")
        return str(value).lower()
    if key == "baseline":
        if not isinstance(value, str) or not value.strip():
            raise _err(path, line, key, "must be a file path")
        return str((Path(path).resolve().parent / value).resolve())
    if key in ("vllm", "gpu"):
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise _err(path, line, key, "must be a string")
        return str(value)
    if key == "respect-gitignore":
        if not isinstance(value, bool):
            raise _err(path, line, key, "must be true or false")
        return value
    if key == "workload":
        return check_workload(value, path, line)
    raise AssertionError(key)  # pragma: no cover - KNOWN_KEYS and this function list the same keys


_RICH_WORKLOAD_KEYS = ("classes", "arrival", "dataset", "trace")


def check_workload(value: Any, path: str, line: int | None = None) -> dict[str, Any]:
    """Validate a workload mapping (``vllm bench serve`` keys, or a simulator workload with classes /
    arrival / trace) the way ``diagnose`` will read it; unknown keys are errors. A relative ``trace``
    is made absolute against ``path``'s directory. Returns the mapping with snake_case keys."""
    if not isinstance(value, dict) or not value:
        raise _err(path, line, "workload", "must be a mapping of workload keys (random-input-len, num-prompts, ...)",
                   hint="the keys of a sched-reader file's workload: section")
    data = {str(k).replace("-", "_"): v for k, v in value.items()}
    if isinstance(data.get("trace"), str) and not os.path.isabs(data["trace"]):
        data["trace"] = str((Path(path).resolve().parent / data["trace"]).resolve())
    from pydantic import ValidationError

    if any(k in data for k in _RICH_WORKLOAD_KEYS):
        model: Any = WorkloadSpec
    else:
        model = Workload
        unknown = [k for k in data if k not in model.model_fields]
        if unknown:
            guess = _suggest(unknown[0], list(model.model_fields))
            raise _err(path, line, "workload", f"unknown workload key {unknown[0]!r}",
                       hint=f"did you mean {guess!r}?" if guess else
                       f"known keys: {', '.join(model.model_fields)}, or classes/arrival/trace")
    try:
        model.model_validate(data)
    except ValidationError as exc:
        e = exc.errors()[0]
        where = ".".join(str(x) for x in e.get("loc", ()))
        raise _err(path, line, "workload", f"invalid workload: {where}: {e.get('msg')}") from None
    return data


# ------------------------------------------------------------------------------------------------
# Rule selectors (a selector matching no rule is an error: it would silently turn checks off)
# ------------------------------------------------------------------------------------------------


def check_selectors(words: list[str] | tuple[str, ...], where: str, *, path: str | None = None,
                    line: int | None = None) -> list[str]:
    """Normalize rule selectors; raise ``InputError`` for one that is malformed or matches no rule."""
    ids = rule_ids()
    out: list[str] = []
    for w in words:
        for word in str(w).split(","):
            word = word.strip()
            if not word:
                continue
            try:
                sel = normalize_selector(word)
            except ValueError:
                sel = None
            if sel is None or not any(matches(i, sel) for i in ids):
                guess = _suggest(word.upper(), ids) or _suggest(word.lower(), rule_names())
                hint = f"did you mean {guess}?" if guess else "see `sched-reader rules` for the rule ids"
                raise InputError(f"{where}: {word!r} matches no rule", file=path, line=line, hint=hint)
            out.append(sel)
    return out


def with_cli(config: LintConfig, *, select: list[str] | None = None, extend_select: list[str] | None = None,
             ignore: list[str] | None = None, exclude: list[str] | None = None,
             extend_exclude: list[str] | None = None, fail_on: str | None = None, vllm: str | None = None,
             gpu: str | None = None) -> LintConfig:
    """``config`` with command-line values applied (already validated selectors)."""
    return replace(
        config,
        select=tuple(select) if select else config.select,
        extend_select=config.extend_select + tuple(extend_select or ()),
        ignore=config.ignore + tuple(ignore or ()),
        extend_exclude=config.extend_exclude + tuple(exclude or ()) + tuple(extend_exclude or ()),
        fail_on=fail_on or config.fail_on,
        vllm=vllm or config.vllm,
        gpu=gpu or config.gpu,
    )
