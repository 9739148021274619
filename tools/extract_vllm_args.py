#!/usr/bin/env python3
"""Write ``args/<version>.json`` (every flag ``vllm serve`` registers) for one vLLM release.

This is the extractor behind ``shared/vllm/args/<version>.json``, the input of
``tools/build_vllm_data.py``. It runs *inside an environment where the target
vLLM release is installed*; sched-reader itself never needs vLLM::

    python -m venv /tmp/vllm-0.34.0 && . /tmp/vllm-0.34.0/bin/activate
    pip install vllm==0.34.0 pyyaml          # a CPU box is enough: nothing is run
    python tools/extract_vllm_args.py --out /path/to/shared/vllm/args
    # -> /path/to/shared/vllm/args/0.34.0.json   (version from vllm.__version__)
    deactivate
    python tools/build_vllm_data.py --shared /path/to/shared/vllm \\
        --out sched_reader/compat/data/releases

(then follow the remaining steps in ``tools/build_vllm_data.py``'s docstring:
``facts.yaml`` versions/ranges, ``source_commits.json``, the compat tests.)

How it works
------------
It imports vLLM and builds the very parser ``vllm serve`` parses with:
``ServeSubcommand().subparser_init(subparsers)`` from
``vllm.entrypoints.cli.serve`` (0.7.3+), which calls ``make_arg_parser`` (found
in ``vllm.entrypoints.{common,launchers,openai}.cli_args`` depending on the
era) on a ``FlexibleArgumentParser`` (``vllm.utils.argparse_utils`` or
``vllm.utils``). Older releases (no ``vllm.entrypoints.cli``) get
``make_arg_parser`` plus the ``model_tag``/``--config`` extras that
``vllm.scripts:main`` added. It then walks ``parser._actions`` with
:func:`records_from_parser`, which needs only the standard library (the unit
tests run it on a hand-built parser).

Which function registered a flag (``source``) is found by building the
pieces separately (``EngineArgs.add_cli_args``, ``AsyncEngineArgs.add_cli_args``,
``FrontendArgs.add_cli_args``, ``make_arg_parser``) and diffing flag sets; what
is left was added by the serve sub-command. ``engine_default`` is the
``EngineArgs`` dataclass default of the flag's ``dest``.

Record fields (see shared/vllm/README.md, "args/<version>.json record")
-----------------------------------------------------------------------
``flag aliases dest type default choices deprecated action nargs optional
hidden config group source`` always; ``engine_default`` for engine flags;
``negative_flag`` for ``BooleanOptionalAction``; ``positional`` for
``model_tag``; ``config_default`` / ``valid_values`` / ``enum_values`` when
known.

Limits (best effort, unlike the exact fields above):

* ``config``/``group`` come from the argparse group title (``ModelConfig``...);
  a flag whose name differs from its config field is matched through the
  field docstring (``get_attr_docs``) and otherwise gets ``config: null``.
* ``deprecated`` is ``"deprecated=True"`` for flags registered with
  ``deprecated=True`` (``FlexibleArgumentParser._deprecated`` on Python < 3.13,
  ``action.deprecated`` on 3.13+), else the help sentences that mention
  "deprecat" (downstream ``compat.checks.is_deprecated`` filters false hits).
* Values come from the running interpreter, not from source text: platform
  dependent choices/defaults are those of the machine the tool runs on, and a
  default that is not plain JSON is written as ``{"factory": "<Class>"}``
  (config objects) or ``{"expr": "<repr>"}``. The static extractor that wrote
  the existing files wrote source text there (``{"expr": "int(ssl.CERT_NONE)"}``),
  so re-extracting an *old* release gives small, harmless differences; use this
  tool for new releases.
* ``choices`` drops the trailing ``"None"`` that vLLM's ``get_kwargs`` appends
  for optional fields (``optional: true`` already says "None" is accepted).
* ``type`` is ``int|float|str|bool|json|dict|str|kv-list|list[<T>]``; an
  unknown converter is written by its qualified name (``PoolerConfig.from_json``).
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import importlib
import inspect
import json
import re
import sys
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

# Titles argparse gives its own default groups (not vLLM config groups).
_DEFAULT_GROUP_TITLES = {None, "positional arguments", "optional arguments", "options"}

# argparse's built-in action classes -> the names used in args/<version>.json
# (None = plain "store").
_ACTION_NAMES = {
    "_StoreAction": None,
    "_StoreTrueAction": "store_true",
    "_StoreFalseAction": "store_false",
    "_StoreConstAction": "store_const",
    "_AppendAction": "append",
    "_AppendConstAction": "append_const",
    "_ExtendAction": "extend",
    "_CountAction": "count",
    "_VersionAction": "version",
    "BooleanOptionalAction": "BooleanOptionalAction",
}
_BOOL_ACTIONS = {"store_true", "store_false", "BooleanOptionalAction", "StoreBoolean"}
_SKIP_ACTIONS = ("_HelpAction", "_SubParsersAction")

# Converter functions vLLM has used, by __name__ / __qualname__.
_TYPE_BY_NAME = {
    "nullable_str": "str",
    "nullable_kvs": "kv-list",
    "union_dict_and_str": "dict|str",
    "human_readable_int": "int",
    "human_readable_int_or_auto": "int",
    "parse_dataclass": "json",
}
_OPTIONAL_CONVERTERS = {"nullable_str", "nullable_kvs", "_optional_type"}
_WRAPPING_CONVERTERS = {"_optional_type", "_parse_type"}  # closures over ``return_type``

ENGINE_SOURCE = "vllm.engine.arg_utils:EngineArgs.add_cli_args"
ASYNC_ENGINE_SOURCE = "vllm.engine.arg_utils:AsyncEngineArgs.add_cli_args"


# --------------------------------------------------------------------------------------------------
# The vLLM-free core: argparse parser -> records
# --------------------------------------------------------------------------------------------------

def action_key(action: argparse.Action) -> str:
    """Stable key of an action: its primary long option, or ``dest`` for a positional."""
    return primary_flag(action) if action.option_strings else action.dest


def primary_flag(action: argparse.Action) -> str:
    """The ``--long-form`` option (first one that is not a ``--no-x`` negative)."""
    opts = list(action.option_strings)
    if not opts:
        return action.dest
    negatives = set(_negative_flags(action))
    longs = [o for o in opts if o.startswith("--") and o not in negatives]
    return longs[0] if longs else opts[0]


def _negative_flags(action: argparse.Action) -> list[str]:
    if type(action).__name__ != "BooleanOptionalAction" and not isinstance(
            action, getattr(argparse, "BooleanOptionalAction", ())):
        return []
    return [o for o in action.option_strings if o.startswith("--no-")]


def action_name(action: argparse.Action) -> str | None:
    """``store_true``, ``BooleanOptionalAction``, ``append``, a custom class name, or None."""
    if isinstance(action, getattr(argparse, "BooleanOptionalAction", ())):
        return "BooleanOptionalAction"
    for cls in type(action).__mro__:
        if cls.__module__ == "argparse" and cls.__name__ in _ACTION_NAMES:
            if cls is type(action):
                return _ACTION_NAMES[cls.__name__]
            break
    return type(action).__name__


def _closure_var(fn: Any, name: str) -> Any:
    code = getattr(fn, "__code__", None)
    closure = getattr(fn, "__closure__", None)
    if code is None or not closure or name not in code.co_freevars:
        return None
    try:
        return closure[code.co_freevars.index(name)].cell_contents
    except ValueError:  # empty cell
        return None


def converter_name(fn: Any) -> tuple[str | None, bool]:
    """``(type name, optional)`` for an argparse ``type=`` converter.

    ``optional`` is True for vLLM's None-accepting converters (``nullable_str``,
    ``optional_type(...)``): the string ``"None"`` (or empty) means None.
    """
    if fn is None:
        return None, False
    if fn in (int, float, str, bool):
        return fn.__name__, False
    if fn is json.loads:
        return "json", False
    name = getattr(fn, "__name__", None) or type(fn).__name__
    qual = getattr(fn, "__qualname__", None) or name
    optional = name in _OPTIONAL_CONVERTERS
    if name in _WRAPPING_CONVERTERS:
        inner = _closure_var(fn, "return_type")
        if inner is not None:
            inner_name, inner_optional = converter_name(inner)
            return inner_name, optional or inner_optional
    if name in _TYPE_BY_NAME:
        return _TYPE_BY_NAME[name], optional
    if name in ("validate_json", "from_cli") or "json" in name.lower() and name.startswith(
            ("parse", "load")):
        return "json", optional
    if isinstance(fn, type) and issubclass(fn, enum.Enum):
        return "str", optional
    return qual.rsplit("<locals>.", 1)[-1], optional


def type_name(action: argparse.Action, act: str | None) -> tuple[str | None, bool]:
    """Record ``type`` (and ``optional``) of an action."""
    if act in _BOOL_ACTIONS:
        return "bool", False
    if act in ("version", "store_const", "append_const"):
        return None, False
    if act == "count":
        return "int", False
    name, optional = converter_name(action.type)
    if name is None:
        name = "str"  # argparse passes the raw string through
    if action.nargs in ("+", "*") and act not in ("append", "extend") and name in (
            "str", "int", "float"):
        # "list[str]" etc. for plain multi-value flags (vLLM's list[...] fields); custom
        # actions that build their own value from several strings keep the element type.
        if act is None:
            name = f"list[{name}]"
    return name, optional


def jsonable(value: Any) -> Any:
    """A JSON-safe form of a default/choice value read at run time."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) \
            else {"expr": repr(value)}
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, type) or callable(value) and not dataclasses.is_dataclass(value):
        return {"expr": getattr(value, "__qualname__", repr(value))}
    if dataclasses.is_dataclass(value) or hasattr(value, "model_fields"):
        return {"factory": type(value).__name__}
    return {"expr": repr(value)}


def deprecation_text(action: argparse.Action, deprecated_actions: Collection = ()) -> str | None:
    """``"deprecated=True"`` or the help sentence(s) that mention deprecation, else None."""
    if getattr(action, "deprecated", False) is True or any(a is action for a in deprecated_actions):
        return "deprecated=True"
    text = action.help
    if not isinstance(text, str) or text == argparse.SUPPRESS or "deprecat" not in text.lower():
        return None
    flat = " ".join(text.split())
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z`\-\"'(\[])", flat)
    hits = [s for s in sentences if "deprecat" in s.lower()]
    return " ".join(hits) if hits else flat


def _group_titles(parser: argparse.ArgumentParser) -> dict[int, str | None]:
    titles: dict[int, str | None] = {}
    for group in parser._action_groups:
        for action in group._group_actions:
            titles.setdefault(id(action), group.title)
    return titles


def records_from_parser(
    parser: argparse.ArgumentParser,
    engine_defaults: dict[str, Any],
    *,
    sources: dict[str, str] | None = None,
    default_source: str = "vllm.entrypoints.openai.cli_args:make_arg_parser",
    configs: dict[str, str | None] | None = None,
    deprecated_actions: Collection = (),
    extra: dict[str, dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Walk ``parser._actions`` and return one args/<version>.json record per flag.

    ``engine_defaults`` maps ``dest`` -> ``EngineArgs`` dataclass default; a record
    gets ``engine_default`` when its dest is there and its source is an engine
    source (or no ``sources`` are given). ``sources`` maps :func:`action_key` ->
    the registering function (``module:Qualname``); missing keys get
    ``default_source``. ``configs`` maps key -> ``Class.field`` (or None); without
    an entry a flag in a group titled ``<Something>Config`` gets
    ``<Something>Config.<dest>``. ``deprecated_actions`` are actions registered
    with ``deprecated=True`` (vLLM's ``FlexibleArgumentParser._deprecated``).
    ``extra`` maps key -> keys merged into that record last
    (``config_default``, ``valid_values``, ``enum_values``...).
    Help and sub-parser actions are skipped; order is registration order.
    """
    sources = sources or {}
    configs = configs or {}
    extra = extra or {}
    titles = _group_titles(parser)
    out: list[dict[str, Any]] = []
    for action in parser._actions:
        if type(action).__name__ in _SKIP_ACTIONS:
            continue
        key = action_key(action)
        act = action_name(action)
        typ, optional = type_name(action, act)
        flag = primary_flag(action)
        negatives = _negative_flags(action)
        aliases = [o for o in action.option_strings if o != flag and o not in negatives]
        title = titles.get(id(action))
        group = None if title in _DEFAULT_GROUP_TITLES else title
        if key in configs:
            config = configs[key]
        elif group and group.endswith("Config"):
            config = f"{group}.{action.dest}"
        else:
            config = None
        nargs = action.nargs if action.nargs not in (None, 0) else None
        choices = None if action.choices is None else [jsonable(c) for c in action.choices]
        if optional and choices and choices[-1] == "None":
            choices = choices[:-1]  # get_kwargs appends "None" for optional Literal fields
        source = sources.get(key, default_source)
        rec: dict[str, Any] = {
            "flag": flag,
            "aliases": aliases,
            "dest": action.dest,
            "type": typ,
            "default": jsonable(action.default),
            "choices": choices,
            "deprecated": deprecation_text(action, deprecated_actions),
            "action": act,
            "nargs": nargs,
            "optional": optional,
            "hidden": action.help == argparse.SUPPRESS,
            "config": config,
            "group": group,
            "source": source,
        }
        if negatives:
            rec["negative_flag"] = negatives[0]
        if not action.option_strings:
            rec["positional"] = True
        is_engine = not sources or source.startswith("vllm.engine.arg_utils:")
        if action.dest in engine_defaults and is_engine and action.option_strings:
            rec["engine_default"] = jsonable(engine_defaults[action.dest])
        rec.update(extra.get(key, {}))
        out.append(rec)
    return out


def normalize_version(raw: str) -> str:
    """``0.34.0+cu128`` / ``0.34.0rc1`` -> ``0.34.0`` (build_vllm_data sorts plain X.Y.Z)."""
    m = re.match(r"\d+(?:\.\d+)*", raw.strip().lstrip("v"))
    if not m:
        raise SystemExit(f"cannot read a release number from version {raw!r}")
    return m.group(0)


def dumps_records(records: list[dict[str, Any]]) -> str:
    """The file format of args/<version>.json: a JSON list, one record per flag."""
    return json.dumps(records, indent=1, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------------------------------
# vLLM side (imports vllm; only called from main())
# --------------------------------------------------------------------------------------------------

def _import_first(candidates: list[str], attr: str) -> Any:
    errors = []
    for mod in candidates:
        try:
            return getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError) as exc:
            errors.append(f"{mod}.{attr}: {exc}")
    raise SystemExit("cannot import " + attr + " from vLLM:\n  " + "\n  ".join(errors))


def _flexible_parser_cls() -> type:
    return _import_first(["vllm.utils.argparse_utils", "vllm.utils"], "FlexibleArgumentParser")


_CLI_ARGS_MODULES = ["vllm.entrypoints.common.cli_args", "vllm.entrypoints.launchers.cli_args",
                     "vllm.entrypoints.openai.cli_args"]


def _make_arg_parser(serve_mod: Any) -> Callable:
    """The ``make_arg_parser`` the serve sub-command uses in this release."""
    if serve_mod is not None:
        fn = getattr(serve_mod, "make_arg_parser", None)
        if callable(fn):
            return fn
        try:
            src = inspect.getsource(serve_mod)
        except (OSError, TypeError):
            src = ""
        m = re.search(r"from\s+([\w.]+)\s+import\s+\(?[\w\s,]*\bmake_arg_parser\b", src)
        if m:
            try:
                return getattr(importlib.import_module(m.group(1)), "make_arg_parser")
            except (ImportError, AttributeError):
                pass
    return _import_first(_CLI_ARGS_MODULES, "make_arg_parser")


def _keys(parser: argparse.ArgumentParser) -> list[str]:
    return [action_key(a) for a in parser._actions if type(a).__name__ not in _SKIP_ACTIONS]


def _field_default(f: Any) -> Any:
    """A dataclass field's default (calls default_factory); pydantic FieldInfo aware."""
    value = f.default
    if value is dataclasses.MISSING and f.default_factory is not dataclasses.MISSING:
        try:
            return f.default_factory()
        except Exception:  # noqa: BLE001 - best effort
            return {"factory": getattr(f.default_factory, "__qualname__", "?")}
    if value is dataclasses.MISSING:
        return None
    if type(value).__name__ == "FieldInfo":  # pydantic Field(...)
        factory = getattr(value, "default_factory", None)
        if callable(factory):
            try:
                return factory()
            except Exception:  # noqa: BLE001
                return {"factory": getattr(factory, "__qualname__", "?")}
        inner = getattr(value, "default", None)
        return None if type(inner).__name__ == "PydanticUndefinedType" else inner
    return value


def dataclass_defaults(cls: type) -> dict[str, Any]:
    """``{field: default}`` of a (pydantic) dataclass; {} when not a dataclass."""
    if not dataclasses.is_dataclass(cls):
        return {}
    return {f.name: _field_default(f) for f in dataclasses.fields(cls)}


def _config_class(title: str | None, frontend_cls: type | None) -> type | None:
    if not title:
        return None
    if frontend_cls is not None and title in (frontend_cls.__name__,
                                              frontend_cls.__name__.replace("Args", "")):
        return frontend_cls
    try:
        cls = getattr(importlib.import_module("vllm.config"), title, None)
    except ImportError:
        return None
    return cls if isinstance(cls, type) else None


def _attr_docs(cls: type) -> dict[str, str]:
    for mod in ("vllm.config.utils", "vllm.config"):
        try:
            fn = getattr(importlib.import_module(mod), "get_attr_docs")
            return fn(cls)
        except Exception:  # noqa: BLE001 - helper moved / failed: skip doc matching
            continue
    return {}


def _enum_values(cls: type, field: str) -> list[Any] | None:
    import typing

    try:
        hint = typing.get_type_hints(cls).get(field)
    except Exception:  # noqa: BLE001
        return None
    candidates = [hint, *typing.get_args(hint)] if hint is not None else []
    for cand in candidates:
        if isinstance(cand, type) and issubclass(cand, enum.Enum):
            return [jsonable(m.value) if isinstance(m.value, (str, int)) else m.name
                    for m in cand]
    return None


def config_info(parser: argparse.ArgumentParser, frontend_cls: type | None
                ) -> tuple[dict[str, str | None], dict[str, dict[str, Any]]]:
    """``configs`` and ``extra`` (config_default / enum_values) for records_from_parser."""
    titles = _group_titles(parser)
    configs: dict[str, str | None] = {}
    extra: dict[str, dict[str, Any]] = {}
    cache: dict[type, tuple[dict[str, Any], dict[str, str]]] = {}
    for action in parser._actions:
        if type(action).__name__ in _SKIP_ACTIONS:
            continue
        key = action_key(action)
        cls = _config_class(titles.get(id(action)), frontend_cls)
        if cls is None:
            continue
        if cls not in cache:
            cache[cls] = (dataclass_defaults(cls), _attr_docs(cls))
        defaults, docs = cache[cls]
        field = action.dest if action.dest in defaults else None
        if field is None and isinstance(action.help, str):
            help_flat = " ".join(action.help.split())
            matches = [name for name, doc in docs.items()
                       if doc and " ".join(doc.split()) and help_flat.startswith(" ".join(doc.split()))]
            field = matches[0] if len(matches) == 1 else None
        configs[key] = f"{cls.__name__}.{field}" if field else None
        if field is None:
            continue
        more: dict[str, Any] = {}
        cfg_default = defaults.get(field)
        if action.default is None and cfg_default is not None:
            more["config_default"] = jsonable(cfg_default)
        if action.choices is None and action.type not in (int, float):
            values = _enum_values(cls, field)
            if values:
                more["enum_values"] = values
        if more:
            extra[key] = more
    return configs, extra


def build_serve_parser() -> tuple[argparse.ArgumentParser, dict[str, str], type | None]:
    """The parser ``vllm serve`` uses, plus ``{key: source}`` and the FrontendArgs class."""
    fap = _flexible_parser_cls()
    try:
        serve_mod = importlib.import_module("vllm.entrypoints.cli.serve")
        serve_cls = getattr(serve_mod, "ServeSubcommand")
    except (ImportError, AttributeError):
        serve_mod = serve_cls = None
    make_arg_parser = _make_arg_parser(serve_mod)

    top = fap(description="vLLM CLI")
    subparsers = top.add_subparsers(required=False, dest="subparser")
    if serve_cls is not None:
        serve_parser = serve_cls().subparser_init(subparsers)
        serve_source = f"{serve_cls.__module__}:ServeSubcommand.subparser_init"
    else:  # vllm.scripts era (<= 0.7.2): main() added these before make_arg_parser
        serve_parser = subparsers.add_parser("serve", usage="vllm serve <model_tag> [options]")
        serve_parser.add_argument("model_tag", type=str, help="The model tag to serve")
        serve_parser.add_argument("--config", type=str, default="",
                                  help="Read CLI options from a config file.")
        serve_parser = make_arg_parser(serve_parser)
        serve_source = "vllm.scripts:main"

    # Attribution: build each piece on its own parser (after the real one, in case a
    # vLLM helper mutates cached kwargs) and diff the flag sets.
    arg_utils = importlib.import_module("vllm.engine.arg_utils")
    sources: dict[str, str] = {}
    engine = _keys(arg_utils.EngineArgs.add_cli_args(fap()))
    for k in engine:
        sources.setdefault(k, ENGINE_SOURCE)
    for k in _keys(arg_utils.AsyncEngineArgs.add_cli_args(fap())):
        sources.setdefault(k, ASYNC_ENGINE_SOURCE)
    cli_mod = importlib.import_module(make_arg_parser.__module__)
    frontend_cls = getattr(cli_mod, "FrontendArgs", None)
    if frontend_cls is not None and hasattr(frontend_cls, "add_cli_args"):
        meth = frontend_cls.add_cli_args
        fn = getattr(meth, "__func__", meth)
        label = f"{fn.__module__}:{fn.__qualname__} (all fields of {frontend_cls.__name__})"
        for k in _keys(frontend_cls.add_cli_args(fap())):
            sources.setdefault(k, label)
    for k in _keys(make_arg_parser(fap())):
        sources.setdefault(k, f"{make_arg_parser.__module__}:make_arg_parser")
    for k in _keys(serve_parser):
        sources.setdefault(k, serve_source)
    return serve_parser, sources, frontend_cls


def engine_defaults_for(parser: argparse.ArgumentParser, sources: dict[str, str]) -> dict[str, Any]:
    """``EngineArgs``/``AsyncEngineArgs`` dataclass defaults of the engine flags' dests."""
    arg_utils = importlib.import_module("vllm.engine.arg_utils")
    defaults = dataclass_defaults(arg_utils.AsyncEngineArgs)
    defaults.update(dataclass_defaults(arg_utils.EngineArgs))
    engine_dests = {a.dest for a in parser._actions
                    if sources.get(action_key(a), "").startswith("vllm.engine.arg_utils:")}
    return {d: v for d, v in defaults.items() if d in engine_dests}


def _quantization_values() -> list[str] | None:
    try:
        mod = importlib.import_module("vllm.model_executor.layers.quantization")
    except Exception:  # noqa: BLE001
        return None
    methods = getattr(mod, "QUANTIZATION_METHODS", None)
    return [str(m) for m in methods] if methods else None


def extract() -> tuple[str, list[dict[str, Any]]]:
    """Import the installed vLLM and return ``(version, records)``.

    ``sys.argv`` is ``[prog, "--help"]`` while vLLM is imported and the parser is
    built: vllm/engine/arg_utils.py only puts the config docstrings into the help
    text (which ``deprecated`` and the config-field matching read) when
    ``NEEDS_HELP`` (``--help`` in argv at import), and it drops ``--model`` only for
    ``serve --help``, so no ``serve`` word is passed.
    """
    saved_argv = sys.argv[:]
    sys.argv = [saved_argv[0] if saved_argv else "extract_vllm_args", "--help"]
    try:
        return _extract()
    finally:
        sys.argv = saved_argv


def _extract() -> tuple[str, list[dict[str, Any]]]:
    import vllm

    parser, sources, frontend_cls = build_serve_parser()
    configs, extra = config_info(parser, frontend_cls)
    quant = _quantization_values()
    if quant:
        extra.setdefault("--quantization", {})["valid_values"] = quant
    deprecated = getattr(_flexible_parser_cls(), "_deprecated", ())
    # every action of the serve parser has a source (build_serve_parser falls back to
    # the serve sub-command), so records_from_parser's default_source is never used here
    records = records_from_parser(
        parser, engine_defaults_for(parser, sources), sources=sources,
        configs=configs, deprecated_actions=deprecated, extra=extra)
    return str(vllm.__version__), records


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True,
                    help="folder to write <version>.json into (shared/vllm/args)")
    ap.add_argument("--version", dest="version",
                    help="release name to write (default: vllm.__version__ without local suffix)")
    ap.add_argument("--force", action="store_true", help="overwrite an existing file")
    args = ap.parse_args(argv)

    raw_version, records = extract()
    version = args.version or normalize_version(raw_version)
    if version != raw_version:
        print(f"note: vllm.__version__ is {raw_version!r}; writing {version}.json", file=sys.stderr)
    path = args.out / f"{version}.json"
    if path.exists() and not args.force:
        raise SystemExit(f"{path} exists (use --force to overwrite)")
    args.out.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps_records(records), encoding="utf-8")
    by_source: dict[str, int] = {}
    for rec in records:
        by_source[rec["source"]] = by_source.get(rec["source"], 0) + 1
    print(f"{path}: {len(records)} flags")
    for src, n in by_source.items():
        print(f"  {n:4d}  {src}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
