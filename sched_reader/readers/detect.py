"""Decide what a deploy file is, by content first (extension only breaks ties), and dispatch.

Forms: sched-reader's own file (``sched_reader:`` key), Kubernetes manifests (``apiVersion`` + ``kind``),
docker compose (``services:`` of mappings), production-stack Helm values (``servingEngineSpec``), llm-d
modelservice Helm values (``modelArtifacts`` / ``decode`` / ``prefill``), a vLLM ``--config`` mapping, and
shell scripts / command lines.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any, Callable

from sched_reader.errors import InputError, SchedReaderError
from sched_reader.limits import MAX_ENGINES
from sched_reader.readers.argv import find_invocation
from sched_reader.readers.cmdline import Context, engine_from_tokens, read_script
from sched_reader.readers.raw import RawEngine
from sched_reader.readers.shell import Tok
from sched_reader.readers.source import read_text
from sched_reader.readers.task_forms import looks_like_ci, looks_like_makefile, looks_like_skypilot
from sched_reader.readers.vllm_config import looks_like_vllm_config, read_vllm_config
from sched_reader.readers.yaml_tree import YamlDoc, YList, YMap, load_documents

# The reader of each form, as (module, function): imported when a file of that form is read, so a run on
# one file loads one form's reader, not all of them (start-up time). tests/project/test_layers.py reads
# this table as import edges of this module.
READERS: dict[str, tuple[str, str]] = {
    "own": ("sched_reader.readers.own_format", "read_own"),
    "kubernetes": ("sched_reader.readers.kubernetes", "read_manifests"),
    "compose": ("sched_reader.readers.compose", "read_compose"),
    "production-stack": ("sched_reader.readers.helm_production_stack", "read_production_stack"),
    "llm-d-modelservice": ("sched_reader.readers.helm_llmd", "read_llmd_values"),
    "llm-d-deployer": ("sched_reader.readers.task_files", "read_llmd_deployer"),
    "skypilot": ("sched_reader.readers.task_files", "read_skypilot"),
    "ci": ("sched_reader.readers.task_files", "read_ci"),
    "makefile": ("sched_reader.readers.task_files", "read_makefile"),
    "slurm": ("sched_reader.readers.task_files", "slurm_resources"),
}


def reader(form: str) -> Callable[..., Any]:
    """The function that reads ``form`` (a key of ``READERS``), its module imported on first use."""
    module, function = READERS[form]
    return getattr(importlib.import_module(module), function)


SHELL_SUFFIXES = {".sh", ".bash", ".zsh", ".ksh", ".cmd", ".txt"}
YAML_SUFFIXES = {".yaml", ".yml", ".json"}
_SHEBANG = re.compile(r"^#!.*\b(ba|z|k|da)?sh\b", re.M)
_VLLM_WORD = re.compile(r"\bvllm\b|vllm\.entrypoints|--[a-z][a-z0-9-]+")
LOOKED_FOR = ("`vllm serve`, `python -m vllm.entrypoints.openai.api_server` or `docker run vllm/vllm-openai` "
              "commands; Kubernetes Deployment/StatefulSet/Pod/Job/LeaderWorkerSet, KServe, KubeAI, AIBrix "
              "and llm-d objects; production-stack or llm-d Helm values; compose services; a vLLM --config "
              "mapping; a sched-reader file (sched_reader: 1)")


def kind_of(docs: list[YamlDoc]) -> str | None:
    """The YAML form of ``docs``, or None when no known form matches."""
    roots = [d.root for d in docs if d.root is not None]
    maps = [r for r in roots if isinstance(r, dict)]
    if not maps:
        return None
    first = maps[0]
    if "sched_reader" in first:
        return "own"
    if any("apiVersion" in m and "kind" in m for m in maps) or any(
            m.get("kind") == "List" or isinstance(m.get("items"), list) and "kind" in m for m in maps):
        return "kubernetes"
    if isinstance(first.get("services"), dict) and all(
            isinstance(v, dict) or v is None for v in first["services"].values()):
        return "compose"
    if isinstance(first.get("servingEngineSpec"), dict):
        return "production-stack"
    if "modelArtifacts" in first or any(
            isinstance(first.get(k), dict) and ("containers" in first[k] or "parallelism" in first[k])
            for k in ("decode", "prefill")):
        return "llm-d-modelservice"
    if isinstance(first.get("sampleApplication"), dict):
        return "llm-d-deployer"
    if looks_like_skypilot(first):
        return "skypilot"
    if looks_like_ci(first):
        return "ci"
    if len(maps) == 1 and looks_like_vllm_config(first):
        return "vllm-config"
    return None


def read_file(path: str | Path) -> list[RawEngine]:
    """Read every vLLM engine in the deploy file at ``path`` (``readers.read_path``; also handed to the
    own-format reader, whose ``deploy:`` key names another deploy file)."""
    file = str(path)
    text = read_text(path, display=file)
    return guard(lambda: read_text_as(text, file, Path(path)), file)


def guard(fn, file: str) -> list[RawEngine]:
    """Run a reader; an unexpected Python error on hostile input becomes an ``InputError``, never a traceback."""
    try:
        engines = fn()
        if len(engines) > MAX_ENGINES:
            raise InputError(f"{len(engines):,} vLLM engines in one file, over the {MAX_ENGINES:,}-engine limit",
                             file=file, line=engines[MAX_ENGINES].line,
                             hint="each engine is analyzed on its own; split the file")
        return engines
    except SchedReaderError as err:
        if err.file is None:  # raised below the reader that knows the file (e.g. the shell tokenizer)
            err.file = file
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError, UnicodeError) as exc:
        raise InputError(f"cannot read this file: {type(exc).__name__}: {exc}", file=file,
                         hint="the file has a shape sched-reader does not understand; please report it") from None


def read_text_as(text: str, file: str, path: Path | None) -> list[RawEngine]:
    """Detect the form of ``text`` (the content of ``file``) and read its engines."""
    suffix = path.suffix.lower() if path is not None else ""
    stem = path.stem if path is not None else Path(file).stem or file
    base_dir = path.parent if path is not None else None
    looks_shell = suffix in SHELL_SUFFIXES or bool(_SHEBANG.search(text[:2000]))
    if not looks_shell and suffix not in YAML_SUFFIXES:
        if looks_like_makefile(text, path if path is not None else Path(file)):
            engines = reader("makefile")(text, file, stem, base_dir)
            if not engines:
                raise InputError("no vLLM server command found in this Makefile", file=file,
                                 hint="looked for recipes that run `vllm serve` or the OpenAI api_server")
            return engines
    if looks_shell:
        return _shell(text, file, stem, base_dir)
    templated = False
    try:
        docs = load_documents(text, file)
    except InputError:
        docs = _load_template(text, file) if "{{" in text else None
        if docs is None:
            if suffix not in YAML_SUFFIXES and _VLLM_WORD.search(text):
                return _shell(text, file, stem, base_dir)
            raise
        templated = True
    if templated:
        engines = _dispatch_or_none(docs, text, file, stem, base_dir)
        for e in engines:
            e.notes.append("Helm/Go template: {{ ... }} values are unresolved until the chart is rendered "
                           "(`helm template` output reads fully)")
        if engines:
            return engines
        raise InputError("no vLLM engine found in this Helm template (its command comes from values)", file=file,
                         hint="run sched-reader on the chart's values.yaml or on `helm template` output")
    kind = kind_of(docs)
    if kind is None:
        roots = [d.root for d in docs if d.root is not None]
        if roots and all(isinstance(r, str) for r in roots) and _VLLM_WORD.search(text):
            return _shell(text, file, stem, base_dir)  # a one-line command parses as a YAML string
        if "vllm" in text:
            engines = _generic_yaml(docs, file, stem)
            if engines:
                return engines
        if not roots or not any(isinstance(r, dict) for r in roots):
            got = type(roots[0]).__name__ if roots else "nothing"
            raise InputError(f"expected a YAML mapping at the top level, found {got}", file=file,
                             line=docs[0].line if docs else None,
                             hint=f"sched-reader reads: {LOOKED_FOR}")
        raise InputError("no vLLM engine found", file=file, line=docs[0].line, hint=f"looked for {LOOKED_FOR}")
    return _dispatch(kind, docs, text, file, stem, base_dir)


_TEMPLATE = re.compile(r"\{\{.*?\}\}")


def _load_template(text: str, file: str) -> list[YamlDoc] | None:
    """A Helm/Go template as YAML: lines that are only template actions (``{{- if ... }}``, ``{{- include ...
    | nindent 4 }}``) are blanked (line numbers kept), other ``{{ ... }}`` become quoted strings that readers
    report as unresolved. None when the result is still not YAML."""
    out = []
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("{{") and stripped.endswith("}}") and _TEMPLATE.sub("", stripped).strip() == "":
            out.append("")
            continue

        def quote(m: re.Match) -> str:
            before = line[: m.start()]
            if before.count('"') % 2 == 1 or before.count("'") % 2 == 1:
                return m.group(0)  # already inside a quoted YAML string
            return '"' + m.group(0).replace('"', "'") + '"'

        out.append(_TEMPLATE.sub(quote, line))
    try:
        return load_documents("\n".join(out), file)
    except InputError:
        return None


def _dispatch_or_none(docs: list[YamlDoc], text: str, file: str, stem: str, base_dir: Path | None) -> list[RawEngine]:
    kind = kind_of(docs)
    if kind is None:
        return _generic_yaml(docs, file, stem) if "vllm" in text else []
    try:
        return _dispatch(kind, docs, text, file, stem, base_dir)
    except InputError:
        return []


def _dispatch(kind: str, docs: list[YamlDoc], text: str, file: str, stem: str, base_dir: Path | None) -> list[RawEngine]:
    if kind == "own":
        engines = reader("own")(docs, file, stem, base_dir, read_path=read_file)
    elif kind == "kubernetes":
        engines = reader("kubernetes")(docs, file)
    elif kind == "compose":
        engines = reader("compose")(docs[0].root, file, base_dir)
    elif kind == "production-stack":
        engines = reader("production-stack")(docs[0].root, file)
    elif kind == "llm-d-modelservice":
        engines = reader("llm-d-modelservice")(docs[0].root, file)
    elif kind == "llm-d-deployer":
        engines = reader("llm-d-deployer")(docs[0].root, file)
    elif kind == "skypilot":
        engines = reader("skypilot")(docs[0].root, file, stem)
    elif kind == "ci":
        engines = reader("ci")(docs[0].root, file, looks_like_ci(docs[0].root) or "github")
    else:
        engines = read_vllm_config(docs, file, stem)
    if not engines:
        raise InputError(f"no vLLM engine found in this {kind.replace('-', ' ')} file", file=file,
                         line=docs[0].line, hint=f"looked for {LOOKED_FOR}")
    return engines


def _generic_yaml(docs: list[YamlDoc], file: str, stem: str) -> list[RawEngine]:
    """Any other YAML (Argo, Tekton, Nomad, a CI system sched-reader does not know): every string value that
    starts a vLLM server is read as a shell script, every list of words that does as an argv."""
    engines: list[RawEngine] = []

    def walk(node: object, path: str, line: int | None, depth: int) -> None:
        if depth > 50:
            return
        if isinstance(node, YMap):
            for k, v in node.items():
                walk(v, f"{path}.{k}" if path else str(k), node.vline(k) or node.kline(k), depth + 1)
        elif isinstance(node, YList):
            words = [x for x in node if isinstance(x, (str, int, float))]
            if len(words) == len(node) and words:
                toks = [Tok(str(x), node.iline(i)) for i, x in enumerate(node)]
                if find_invocation(toks) is not None:
                    e = engine_from_tokens(toks, Context(file=file), name=path or stem, line=node.line)
                    if e is not None:
                        e.detected_by = f"vLLM command in {path}"
                        engines.append(e)
                    return
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]", node.iline(i), depth + 1)
        elif isinstance(node, str) and "vllm" in node:
            for e in read_script(node, file, name=path or stem, base_line=line or 1):
                e.detected_by = f"vLLM command in {path}"
                engines.append(e)

    for d in docs:
        walk(d.root, "", d.line, 0)
    return engines


def _shell(text: str, file: str, stem: str, base_dir: Path | None) -> list[RawEngine]:
    engines = read_script(text, file, name=stem, base_dir=base_dir)
    if engines and "#SBATCH" in text:
        count, gtype = reader("slurm")(text, file)
        for e in engines:
            e.detected_by = e.detected_by or "Slurm batch script"
            if count is not None and e.gpu_count is None:
                e.gpu_count = count
            if gtype is not None and e.gpu_type is None:
                e.gpu_type = gtype
    if not engines:
        raise InputError("no vLLM server command found in this script", file=file,
                         hint="looked for `vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server "
                              "...` and `docker run ... vllm/vllm-openai:TAG ...` (commented-out lines are ignored)")
    return engines
