"""Decide what a deploy file is, by content first (extension only breaks ties), and dispatch.

Forms: sched-reader's own file (``sched_reader:`` key), Kubernetes manifests (``apiVersion`` + ``kind``),
docker compose (``services:`` of mappings), production-stack Helm values (``servingEngineSpec``), llm-d
modelservice Helm values (``modelArtifacts`` / ``decode`` / ``prefill``), a vLLM ``--config`` mapping, and
shell scripts / command lines.
"""

from __future__ import annotations

import re
from pathlib import Path

from sched_reader.errors import InputError, SchedReaderError
from sched_reader.readers.cmdline import read_script
from sched_reader.readers.compose import read_compose
from sched_reader.readers.helm_llmd import read_llmd_values
from sched_reader.readers.helm_production_stack import read_production_stack
from sched_reader.readers.kubernetes import read_manifests
from sched_reader.readers.own_format import read_own
from sched_reader.readers.raw import RawEngine
from sched_reader.readers.source import read_text
from sched_reader.readers.vllm_config import looks_like_vllm_config, read_vllm_config
from sched_reader.readers.yaml_tree import YamlDoc, load_documents

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
    from sched_reader.limits import MAX_ENGINES

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
    if looks_shell:
        return _shell(text, file, stem, base_dir)
    try:
        docs = load_documents(text, file)
    except InputError:
        if suffix not in YAML_SUFFIXES and _VLLM_WORD.search(text):
            return _shell(text, file, stem, base_dir)
        raise
    kind = kind_of(docs)
    if kind is None:
        roots = [d.root for d in docs if d.root is not None]
        if roots and all(isinstance(r, str) for r in roots) and _VLLM_WORD.search(text):
            return _shell(text, file, stem, base_dir)  # a one-line command parses as a YAML string
        if not roots or not any(isinstance(r, dict) for r in roots):
            got = type(roots[0]).__name__ if roots else "nothing"
            raise InputError(f"expected a YAML mapping at the top level, found {got}", file=file,
                             line=docs[0].line if docs else None,
                             hint=f"sched-reader reads: {LOOKED_FOR}")
        raise InputError("no vLLM engine found", file=file, line=docs[0].line, hint=f"looked for {LOOKED_FOR}")
    return _dispatch(kind, docs, text, file, stem, base_dir)


def _dispatch(kind: str, docs: list[YamlDoc], text: str, file: str, stem: str, base_dir: Path | None) -> list[RawEngine]:
    if kind == "own":
        engines = read_own(docs, file, stem, base_dir, read_path=read_file)
    elif kind == "kubernetes":
        engines = read_manifests(docs, file)
    elif kind == "compose":
        engines = read_compose(docs[0].root, file, base_dir)
    elif kind == "production-stack":
        engines = read_production_stack(docs[0].root, file)
    elif kind == "llm-d-modelservice":
        engines = read_llmd_values(docs[0].root, file)
    else:
        engines = read_vllm_config(docs, file, stem)
    if not engines:
        raise InputError(f"no vLLM engine found in this {kind.replace('-', ' ')} file", file=file,
                         line=docs[0].line, hint=f"looked for {LOOKED_FOR}")
    return engines


def _shell(text: str, file: str, stem: str, base_dir: Path | None) -> list[RawEngine]:
    engines = read_script(text, file, name=stem, base_dir=base_dir)
    if not engines:
        raise InputError("no vLLM server command found in this script", file=file,
                         hint="looked for `vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server "
                              "...` and `docker run ... vllm/vllm-openai:TAG ...` (commented-out lines are ignored)")
    return engines
