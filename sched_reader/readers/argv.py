"""Find a vLLM server invocation in a list of words and record its flags exactly as written.

Recognised invocations: ``vllm serve [MODEL] ...`` (any path ending in ``vllm``), ``python[3] -m
vllm.entrypoints.openai.api_server ...`` / ``-m vllm.entrypoints.api_server``, ``docker|podman run ...
IMAGE ...`` with a vLLM image, and bare ``--flags`` (a vLLM image's own entrypoint). Flag rules (argparse's,
without any vLLM flag table): ``--k=v`` is split at the first ``=``; otherwise the next word is the value
unless it looks like an option (starts with ``-`` and is not a negative number); further non-option words
extend the value into a list (``--cuda-graph-sizes 1 2 4``) except the first positional of ``vllm serve``,
which is the model. Words holding unresolved ``$VARS`` become ``Unresolved`` items, never settings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from sched_reader.readers.images import docker_gpus, is_vllm_image, vllm_version_from_image
from sched_reader.readers.raw import Hint, Origin, Setting, SourceKind, Unresolved
from sched_reader.readers.shell import Tok, unresolved_reason

_NUMBER = re.compile(r"^-\d+(\.\d+)?([eE][-+]?\d+)?$")
API_SERVER_MODULES = ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server")
# docker/podman run options that take a value (so the word after them is not the image)
_DOCKER_VALUE_OPTS = {
    "-v", "-e", "-p", "-w", "-u", "-h", "-m", "-l", "--name", "--gpus", "--volume", "--env", "--publish",
    "--shm-size", "--ipc", "--network", "--net", "--entrypoint", "--runtime", "--env-file", "--mount",
    "--workdir", "--user", "--label", "--device", "--cpus", "--memory", "--ulimit", "--cap-add",
    "--cap-drop", "--security-opt", "--hostname", "--add-host", "--platform", "--pull", "--restart",
    "--log-driver", "--log-opt", "--cidfile", "--tmpfs", "--group-add", "--cpuset-cpus", "--pid", "--uts",
    "--dns", "--expose", "--stop-signal", "--health-cmd", "--memory-swap", "--oom-score-adj",
}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def is_option(text: str) -> bool:
    """True for an option-looking word: ``-x`` / ``--x`` but not a negative number nor ``-`` itself."""
    return text.startswith("-") and text != "-" and not _NUMBER.match(text)


# Flags that only a vLLM server takes (spelled with dashes or underscores): words after an image that is
# not named "vllm" are read as vLLM arguments when they include ``--model`` together with one of these, or
# two of these. Detection only; no flag table.
VLLM_SIGNATURE_FLAGS = frozenset({
    "--max-model-len", "--tensor-parallel-size", "--pipeline-parallel-size", "--gpu-memory-utilization",
    "--max-num-seqs", "--max-num-batched-tokens", "--served-model-name", "--enable-prefix-caching",
    "--enable-chunked-prefill", "--kv-cache-dtype", "--enforce-eager", "--data-parallel-size",
    "--enable-expert-parallel", "--max-lora-rank", "--enable-lora", "--swap-space", "--block-size",
    "--distributed-executor-backend", "--speculative-config", "--kv-transfer-config", "--limit-mm-per-prompt",
})


def vllm_signature(words: list[str]) -> str | None:
    """Why ``words`` look like a vLLM server's arguments (e.g. ``"--model and --max-model-len"``), or None."""
    flags = {w.split("=", 1)[0].replace("_", "-") for w in words if w.startswith("--")}
    known = sorted(flags & VLLM_SIGNATURE_FLAGS)
    if "--model" in flags and known:
        return f"vLLM flags (--model, {known[0]})"
    if len(known) >= 2:
        return f"vLLM flags ({known[0]}, {known[1]})"
    return None


@dataclass
class Invocation:
    """Where the vLLM arguments start in a word list. ``kind``: ``serve`` (positional model allowed),
    ``api_server`` (legacy module, model only via ``--model``), ``image`` (a vLLM image entrypoint:
    positional model allowed), ``bare`` (flags only), ``bench_throughput`` (`vllm bench throughput` /
    benchmark_throughput.py: the offline LLM class, model via ``--model``, plus the benchmark's own flags)."""

    kind: str
    start: int
    image: Tok | None = None
    docker_gpus: Tok | None = None
    docker_env: list[Tok] = field(default_factory=list)
    program: str = ""
    docker_runtime: str | None = None      # --runtime (nvidia, habana, ...)
    docker_devices: list[str] = field(default_factory=list)  # --device paths (/dev/kfd, /dev/dri: AMD)


def _vllm_subcommand(toks: list[Tok], j: int) -> Invocation | None:
    """The vLLM CLI subcommand starting at word ``j`` (after ``vllm`` or ``python -m vllm.entrypoints.cli.main``):
    ``serve`` or ``bench throughput``; None for any other."""
    words = [t.text for t in toks[j:j + 2]]
    if words[:1] == ["serve"]:
        return Invocation("serve", j + 1, program="vllm serve")
    if words == ["bench", "throughput"]:
        return Invocation("bench_throughput", j + 2, program="vllm bench throughput")
    return None


def find_invocation(toks: list[Tok]) -> Invocation | None:
    """Locate a vLLM server start in ``toks`` (None when there is none)."""
    n = len(toks)
    i = 0
    while i < n:
        t = toks[i].text
        base = t.rsplit("/", 1)[-1]
        if base == "vllm":
            inv = _vllm_subcommand(toks, i + 1)
            if inv is not None:
                return inv
        if base == "benchmark_throughput.py":
            return Invocation("bench_throughput", i + 1, program="benchmarks/benchmark_throughput.py")
        if t == "-m" and i + 1 < n:
            mod = toks[i + 1].text
            if mod in API_SERVER_MODULES:
                return Invocation("api_server", i + 2, program=f"python -m {mod}")
            if mod == "vllm.entrypoints.cli.main":
                inv = _vllm_subcommand(toks, i + 2)
                if inv is not None:
                    return inv
        if base in ("docker", "podman") and i + 1 < n and toks[i + 1].text == "run":
            inv = _docker(toks, i + 2)
            if inv is not None:
                return inv
        i += 1
    return None


def _docker(toks: list[Tok], i: int) -> Invocation | None:
    gpus: Tok | None = None
    env: list[Tok] = []
    entrypoint: str | None = None
    runtime: str | None = None
    devices: list[str] = []
    while i < len(toks):
        t = toks[i].text
        if t.startswith("-"):
            name, eq, val = t.partition("=")
            if name in _DOCKER_VALUE_OPTS:
                value_tok = Tok(val, toks[i].line, toks[i].unresolved) if eq else (
                    toks[i + 1] if i + 1 < len(toks) else None)
                if value_tok is not None:
                    if name == "--gpus":
                        gpus = value_tok
                    elif name in ("-e", "--env"):
                        env.append(value_tok)
                    elif name == "--entrypoint":
                        entrypoint = value_tok.text
                    elif name == "--runtime":
                        runtime = value_tok.text
                    elif name == "--device":
                        devices.append(value_tok.text)
                i += 1 if eq else 2
                continue
            i += 1
            continue
        image = toks[i]
        if is_vllm_image(image.text) and entrypoint in (None, "vllm", "python3", "python"):
            rest = [x.text for x in toks[i + 1 : i + 3]]
            if rest[:1] == ["serve"] or (entrypoint == "vllm" and rest[:1] == ["serve"]):
                return Invocation("serve", i + 2, image=image, docker_gpus=gpus, docker_env=env,
                                  program=f"docker run {image.text} vllm serve", docker_runtime=runtime, docker_devices=devices)
            if rest[:1] == ["vllm"] or rest[:1] == ["-m"]:
                # the command after the image (`rocm/vllm:TAG vllm serve MODEL`, the usual form for images without
                # a vLLM entrypoint): that invocation, keeping the image (its release), --gpus and -e env
                inner = find_invocation(toks[i + 1:])
                if inner is None:
                    return None
                return replace(inner, start=inner.start + i + 1, image=image, docker_gpus=gpus, docker_env=env,
                               program=f"docker run {image.text} {inner.program}", docker_runtime=runtime,
                               docker_devices=devices)
            return Invocation("image", i + 1, image=image, docker_gpus=gpus, docker_env=env,
                              program=f"docker run {image.text} (the image's vLLM entrypoint)", docker_runtime=runtime, docker_devices=devices)
        after = [x.text for x in toks[i + 1:]]
        signal = vllm_signature(after) if entrypoint is None and after[:1] and after[0].startswith("-") else None
        if signal is not None:
            return Invocation("image", i + 1, image=image, docker_gpus=gpus, docker_env=env,
                              program=f"docker run {image.text} (image not named vllm; detected by {signal})",
                              docker_runtime=runtime, docker_devices=devices)
        return None
    return None


@dataclass
class ParsedArgs:
    """What a vLLM argument list says: model, settings in order, unresolved words, notes, and the
    ``--config`` file it names (resolved by the caller, whose settings go first)."""

    model: Setting | None = None
    settings: list[Setting] = field(default_factory=list)
    unresolved: list[Unresolved] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    config: Tok | None = None
    config_flag: str = "--config"


_ATTACHED_LEVEL = re.compile(r"-O\d+")


def parse_args(toks: list[Tok], *, kind: str, file: str, source: SourceKind = "command-line",
               key_prefix: str = "") -> ParsedArgs:
    """Record the flags in ``toks`` (words after the program) in order, as written.

    ``kind`` (see ``Invocation``) decides whether the first positional word is the model. ``key_prefix``
    is prepended to ``Origin.key`` for words that come from a structured file (e.g. ``extraArgs[0]``).
    """
    out = ParsedArgs()
    positional_model = kind in ("serve", "image")
    cli_model: Setting | None = None
    last: Setting | None = None
    i = 0
    n = len(toks)

    def origin(tok: Tok, key: str) -> Origin:
        return Origin(file=file, line=tok.line, source=source, key=key_prefix + key)

    while i < n:
        tok = toks[i]
        text = tok.text
        if text == "--":
            i += 1
            continue
        if is_option(text) and not (tok.unresolved and text.startswith("$")):
            flag, eq, inline = text.partition("=") if text.startswith("-") else (text, "", "")
            if not eq and _ATTACHED_LEVEL.fullmatch(text):
                # argparse reads a one-letter option's value attached to it: vLLM's -O3 is -O 3
                flag, eq, inline = text[:2], "=", text[2:]
            value_tok: Tok | None = None
            if eq:
                value_tok = Tok(inline, tok.line, tok.unresolved, tok.notes)
                i += 1
            elif i + 1 < n and not is_option(toks[i + 1].text):
                value_tok = toks[i + 1]
                i += 2
            else:
                i += 1
            if flag in ("--config",):
                out.config = value_tok
                out.config_flag = flag
                last = None
                continue
            if value_tok is not None and value_tok.unresolved:
                out.unresolved.append(Unresolved(
                    text=text if eq else f"{flag} {value_tok.text}",
                    reason=unresolved_reason(value_tok), origin=origin(tok, flag)))
                last = None
                continue
            if tok.unresolved:  # the flag name itself holds a variable (--$NAME)
                out.unresolved.append(Unresolved(text=text, reason=unresolved_reason(tok), origin=origin(tok, text)))
                last = None
                continue
            value = None if value_tok is None else value_tok.text
            setting = Setting(flag=flag, value=value, origin=origin(tok, flag))
            if flag == "--model":
                if value is not None:
                    cli_model = setting
                last = None
                continue
            out.settings.append(setting)
            last = setting if value is not None and not eq else None
            continue
        # a positional word
        if tok.unresolved:
            if positional_model and out.model is None and last is None:
                out.unresolved.append(Unresolved(text=text, reason=unresolved_reason(tok),
                                                 origin=origin(tok, "model (positional)")))
                positional_model = False
            else:
                out.unresolved.append(Unresolved(
                    text=text, reason=unresolved_reason(tok) + " (a variable here may expand to more arguments)",
                    origin=origin(tok, text)))
            i += 1
            continue
        numeric_list = last is not None and _is_number(text) and _is_number(str(last.value if not isinstance(last.value, list) else last.value[-1]))
        if positional_model and out.model is None and not numeric_list and (kind == "serve" or cli_model is None):
            out.model = Setting(flag="--model", value=text, origin=origin(tok, "model (positional)"))
            positional_model = False
        elif last is not None:
            prev = last.value if isinstance(last.value, list) else [last.value]
            idx = out.settings.index(last)
            last = Setting(flag=last.flag, value=prev + [text], origin=last.origin)
            out.settings[idx] = last
        else:
            out.notes.append(f"line {tok.line}: positional argument {text!r} ignored "
                             f"({'the model is already set' if out.model else 'this entrypoint takes no positional'})")
        i += 1
    if cli_model is not None:
        if out.model is not None:
            out.notes.append(f"--model {cli_model.value} (line {cli_model.origin.line}) is overridden by the "
                             f"positional model {out.model.value} (vllm serve uses the positional one)")
        else:
            out.model = cli_model
    return out


def docker_hints(inv: Invocation, file: str) -> tuple[Hint | None, Hint | None, dict[str, Hint]]:
    """vLLM version (from the image tag), GPU count (``--gpus``) and ``-e`` env of a ``docker run``."""
    version = gpus = None
    env: dict[str, Hint] = {}
    if inv.image is not None:
        v = vllm_version_from_image(inv.image.text)
        if v is not None and not inv.image.unresolved:
            version = Hint(value=v, origin=Origin(file=file, line=inv.image.line, source="command-line",
                                                  key=inv.image.text))
    if inv.docker_gpus is not None and not inv.docker_gpus.unresolved:
        gpus = Hint(value=docker_gpus(inv.docker_gpus.text),
                    origin=Origin(file=file, line=inv.docker_gpus.line, source="command-line", key="--gpus"))
    elif inv.image is not None and inv.docker_gpus is None:
        line = inv.image.line
        if inv.docker_runtime == "habana":
            gpus = Hint(value="all", origin=Origin(file=file, line=line, source="command-line", key="--runtime habana.ai/gaudi"))
        elif inv.docker_runtime == "nvidia":
            gpus = Hint(value="all", origin=Origin(file=file, line=line, source="command-line", key="--runtime nvidia"))
        elif any("/dev/kfd" in d or "/dev/dri" in d for d in inv.docker_devices):
            gpus = Hint(value="all", origin=Origin(file=file, line=line, source="command-line", key="--device amd.com/gpu"))
        else:  # docker gives a container no GPU unless asked (--gpus, the nvidia runtime, or device nodes)
            gpus = Hint(value=0, origin=Origin(file=file, line=line, source="command-line",
                                               key="docker run (no --gpus)"))
    for t in inv.docker_env:
        name, eq, val = t.text.partition("=")
        if eq and not t.unresolved:
            env[name] = Hint(value=val, origin=Origin(file=file, line=t.line, source="command-line", key="-e"))
    return version, gpus, env
