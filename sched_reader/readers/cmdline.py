"""Command lines and shell scripts -> ``RawEngine``: one engine per vLLM server start found.

Shared by every reader that meets a command line (scripts, Kubernetes ``command``/``args``, compose
``command``, ``sh -c`` blocks, sched-reader's own ``serve:``). A ``--config FILE`` is read from the
script's here-documents first, then from disk relative to ``base_dir``; its settings come before the
command-line settings (vLLM: command line > config file). A missing config file is an ``Unresolved``.
"""

from __future__ import annotations

import os
import re

from dataclasses import dataclass, field
from pathlib import Path

from sched_reader.errors import InputError
from sched_reader.readers.bench_throughput import split_bench_throughput
from sched_reader.readers.argv import Invocation, docker_hints, find_invocation, parse_args
from sched_reader.readers.raw import Hint, Origin, RawEngine, SourceKind, Unresolved
from sched_reader.readers.shell import Command, Tok, Var, parse_script
from sched_reader.readers.vllm_config import config_settings, load_config_file
from sched_reader.readers.yaml_tree import load_documents


@dataclass
class Context:
    """Where words come from: the file, how to label their origin, and what a ``--config`` may refer to."""

    file: str
    source: SourceKind = "command-line"
    base_dir: Path | None = None
    heredoc_files: dict[str, tuple[str, int]] = field(default_factory=dict)
    key_prefix: str = ""


def engine_from_tokens(toks: list[Tok], ctx: Context, *, name: str, line: int | None,
                       env: dict[str, Var] | None = None, invocation: Invocation | None = None,
                       default_kind: str | None = None) -> RawEngine | None:
    """Build an engine from one command's words; None when they hold no vLLM server start.

    ``default_kind`` (``"bare"``/``"image"``) treats words with no recognisable program as vLLM
    arguments (a vLLM image's entrypoint, or argv given after sched-reader's ``--``).
    """
    inv = invocation or find_invocation(toks)
    if inv is None:
        if default_kind is None:
            return None
        inv = Invocation(default_kind, 0, program="vLLM image entrypoint" if default_kind == "image" else "")
    parsed = parse_args(toks[inv.start:], kind=inv.kind, file=ctx.file, source=ctx.source, key_prefix=ctx.key_prefix)
    engine = RawEngine(name=name, file=ctx.file, line=line, model=parsed.model, settings=parsed.settings,
                       unresolved=parsed.unresolved, notes=parsed.notes)
    if inv.program:
        engine.notes.insert(0, f"started by: {inv.program}")
        engine.detected_by = inv.program
    if inv.kind == "bench_throughput":
        split_bench_throughput(engine)
    if inv.kind == "api_server" and "vllm.entrypoints.api_server" in inv.program:
        engine.notes.append("vllm.entrypoints.api_server is vLLM's legacy demo server, not the OpenAI server")
    version, gpus, denv = docker_hints(inv, ctx.file)
    engine.vllm_version, engine.gpu_count = version, gpus
    if inv.image is not None and version is None:
        engine.notes.append(f"image {inv.image.text} does not name a vLLM release")
    for k, v in (env or {}).items():
        if v.value is not None:
            engine.env[k] = Hint(value=v.value, origin=Origin(file=ctx.file, line=v.line, source=ctx.source, key=k))
    engine.env.update(denv)
    if parsed.config is not None:
        _apply_config(engine, parsed.config, parsed.config_flag, ctx)
    cvd = engine.env.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None and engine.gpu_count is None:
        ids = [d for d in str(cvd.value).split(",") if d.strip()]
        if ids:
            engine.gpu_count = Hint(value=len(ids), origin=Origin(
                file=cvd.origin.file, line=cvd.origin.line, source="inferred", key="CUDA_VISIBLE_DEVICES"))
            engine.notes.append(f"GPU count {len(ids)} inferred from CUDA_VISIBLE_DEVICES={cvd.value}")
    return engine


def _apply_config(engine: RawEngine, tok: Tok, flag: str, ctx: Context) -> None:
    """Prepend the settings of the ``--config`` file (or record why it could not be read)."""
    where = Origin(file=ctx.file, line=tok.line, source=ctx.source, key=ctx.key_prefix + flag)
    if tok.unresolved:
        engine.unresolved.append(Unresolved(text=f"{flag} {tok.text}", reason="config path is not static", origin=where))
        return
    path = tok.text
    heredoc = ctx.heredoc_files.get(path) or next(
        (v for k, v in ctx.heredoc_files.items() if Path(k).name == Path(path).name), None)
    if heredoc is not None:
        body, first_line = heredoc
        docs = load_documents(body, ctx.file) if body.strip() else []
        if not docs or not isinstance(docs[0].root, dict):
            engine.unresolved.append(Unresolved(text=f"{flag} {path}", reason="the here-document that writes "
                                                "it is not a YAML mapping", origin=where))
            return
        model, settings, notes = config_settings(docs[0].root, ctx.file, line_offset=first_line - 1)
        engine.notes.append(f"{flag} {path}: read from the here-document at {ctx.file}:{first_line}")
    else:
        candidate = Path(path)
        if not candidate.is_absolute() and ctx.base_dir is not None:
            candidate = ctx.base_dir / candidate
        if not os.path.isfile(candidate):  # False (not OSError) for a too-long name or a link loop
            engine.unresolved.append(Unresolved(text=f"{flag} {path}", reason=f"config file not found at "
                                                f"{candidate} (its settings are unknown)", origin=where))
            return
        try:
            root = load_config_file(candidate, str(candidate))
        except InputError as exc:
            engine.unresolved.append(Unresolved(text=f"{flag} {path}", reason=f"cannot read it: {exc}", origin=where))
            return
        model, settings, notes = config_settings(root, str(candidate))
        engine.notes.append(f"{flag} {path}: read from {candidate}")
    engine.settings = settings + engine.settings
    engine.notes.extend(notes)
    if engine.model is None and model is not None:
        engine.model = model
    elif model is not None:
        engine.notes.append(f"model: {model.value} in the config file is overridden by the command line's model")


def read_script(text: str, file: str, *, name: str, base_line: int = 1, base_dir: Path | None = None,
                env: dict[str, Var] | None = None, source: SourceKind = "command-line",
                key_prefix: str = "") -> list[RawEngine]:
    """Every vLLM server started by a shell script (or a ``sh -c`` string) ``text``."""
    script = parse_script(text, base_line=base_line, env=env)
    ctx = Context(file=file, source=source, base_dir=base_dir, heredoc_files=script.heredoc_files,
                  key_prefix=key_prefix)
    found: list[tuple[Command, RawEngine]] = []
    for cmd in script.commands:
        eng = engine_from_tokens(cmd.tokens, ctx, name=name, line=cmd.line, env=cmd.env)
        if eng is not None:
            found.append((cmd, eng))
    engines = [e for _, e in found]
    if len(engines) > 1:
        for k, e in enumerate(engines, 1):
            e.name = f"{name}#{k}"
        _group_by_visible_devices(engines)
    return engines


def _group_by_visible_devices(engines: list[RawEngine]) -> None:
    """Engines of one script that see the same CUDA_VISIBLE_DEVICES share those GPUs."""
    by_devices: dict[str, list[RawEngine]] = {}
    for e in engines:
        cvd = e.env.get("CUDA_VISIBLE_DEVICES")
        if cvd is not None:
            by_devices.setdefault(str(cvd.value), []).append(e)
    for devices, group in by_devices.items():
        if len(group) > 1:
            for e in group:
                e.shared_gpu_group = f"CUDA_VISIBLE_DEVICES={devices}"
                e.notes.append(f"{len(group)} engines share GPUs {devices}: their gpu-memory-utilization "
                               "fractions add up on each GPU")


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def read_argv(argv: list[str], file: str) -> list[RawEngine]:
    """One engine from an argv list (after sched-reader's ``--``).

    Leading ``env`` and ``NAME=value`` words (``VLLM_USE_V1=1 vllm serve ...``) set the engine's environment,
    as a shell would."""
    env: dict[str, str] = {}
    argv = list(argv)
    while argv and (argv[0] == "env" or _ASSIGNMENT.match(argv[0])):
        word = argv.pop(0)
        if word != "env":
            name, value = word.split("=", 1)
            env[name] = value
    toks = [Tok(a, None) for a in argv]
    if not toks:
        raise InputError("empty command line", file=file, hint="give e.g. -- vllm serve MODEL --max-model-len 8192")
    inv = find_invocation(toks)
    default = "bare" if toks[0].text.startswith("-") else None
    engine = engine_from_tokens(toks, Context(file=file, base_dir=Path.cwd()), name="command-line", line=None,
                                invocation=inv, default_kind=default)
    if engine is None:
        raise InputError(f"no vLLM server command found in: {' '.join(argv)[:120]}", file=file,
                         hint="expected `vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server "
                              "...`, `vllm bench throughput --model MODEL ...`, `docker run ... "
                              "vllm/vllm-openai:TAG ...` or bare --flags")
    for name, value in env.items():
        engine.env.setdefault(name, Hint(value=value, origin=Origin(file=file, source="command-line", key=name)))
    return [engine]
