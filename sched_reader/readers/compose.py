"""docker compose files -> one engine per service that starts a vLLM server.

``entrypoint`` + ``command`` (each a string or a list) form the argv; a vLLM image with no entrypoint
override runs the vLLM server, so a ``command`` of bare flags is its arguments. The image tag gives the
vLLM release. GPUs: ``deploy.resources.reservations.devices[]`` ``count`` / ``device_ids``. Docker hands
``count: N`` the first N GPUs (moby daemon/nvidia_linux.go, ``countToDevices``), so services with the same
device ids, or with counts, land on the same GPUs: they get one ``shared_gpu_group`` and a note that their
gpu-memory-utilization fractions add up. ``$VAR`` / ``${VAR:-default}`` in compose values are interpolated
by compose from the shell or a ``.env`` file next to the compose file; ``$$`` is a literal ``$``.
"""

from __future__ import annotations

import re
from pathlib import Path

from sched_reader.errors import InputError
from sched_reader.limits import MAX_GPUS
from sched_reader.readers.argv import find_invocation
from sched_reader.readers.cmdline import Context, engine_from_tokens, read_script
from sched_reader.readers.images import gpu_quantity, is_vllm_image, vllm_version_from_image
from sched_reader.readers.raw import Hint, Origin, RawEngine
from sched_reader.readers.shell import Tok, Var, parse_script
from sched_reader.readers.yaml_tree import YList, YMap

_SHELLS = {"sh", "bash", "/bin/sh", "/bin/bash"}
_INTERP = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def read_compose(root: YMap, file: str, base_dir: Path | None) -> list[RawEngine]:
    """Every vLLM engine among ``services``."""
    dotenv = _dotenv(base_dir)
    engines: list[RawEngine] = []
    skipped: list[str] = []
    services = root.get("services")
    for sname, svc in services.items():
        if not isinstance(svc, YMap):
            continue
        found = _service(str(sname), svc, services, file, dotenv)
        if found:
            engines.extend(found)
        else:
            skipped.append(str(sname))
    if engines and skipped:
        engines[0].notes.append(f"services that start no vLLM server (skipped): {', '.join(skipped)}")
    _share_groups(engines)
    return engines


def _dotenv(base_dir: Path | None) -> dict[str, tuple[str, int]]:
    """KEY=VALUE lines of ``.env`` next to the compose file (compose's default interpolation source)."""
    out: dict[str, tuple[str, int]] = {}
    if base_dir is None:
        return out
    p = base_dir / ".env"
    try:
        if not p.is_file() or p.stat().st_size > 1_000_000:
            return out
        for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, _, v = line.removeprefix("export ").partition("=")
                out[k.strip()] = (v.strip().strip("'\""), n)
    except OSError:
        return {}
    return out


def _interpolate(tok: Tok, dotenv: dict[str, tuple[str, int]]) -> Tok:
    """Compose interpolation of one word: ``.env`` values, ``${VAR:-default}`` defaults; else unresolved."""
    text = tok.text
    if "$" not in text:
        return tok
    unresolved: list[str] = []
    notes: list[str] = []

    def repl(m: re.Match) -> str:
        name = m.group(1) or m.group(4)
        if name in dotenv:
            return dotenv[name][0]
        if m.group(2):
            notes.append(f"{m.group(0)}: {name} is not set in .env, compose uses the default {m.group(3)!r}")
            return m.group(3)
        unresolved.append(m.group(0))
        return m.group(0)

    parts = text.split("$$")
    new = "$".join(_INTERP.sub(repl, p) for p in parts)
    reasons = tuple(f"{u}: compose takes it from the shell environment or .env, which this file does not set"
                    for u in unresolved)
    return Tok(new, tok.line, tuple(unresolved), reasons + tuple(notes))


def _words(svc: YMap, key: str) -> tuple[list[Tok], bool]:
    """(words, was_string) of ``entrypoint`` / ``command``. A string is split like a shell would (no
    expansion); a list is taken item by item."""
    value = svc.get(key)
    if value is None:
        return [], False
    if isinstance(value, YList):
        return [Tok(str(v), value.iline(i)) for i, v in enumerate(value) if v is not None], False
    text = str(value)
    first = svc.vline(key) or svc.kline(key)
    if svc.styles.get(key) == "|":
        script = parse_script(text, base_line=first or 1)
        return [t for c in script.commands for t in c.tokens], True
    script = parse_script(text.replace("\n", " "), base_line=first or 1)
    return [t for c in script.commands for t in c.tokens], True


def _service(sname: str, svc: YMap, services: YMap, file: str, dotenv: dict) -> list[RawEngine]:
    image = str(svc.get("image") or "")
    entry, _ = _words(svc, "entrypoint")
    cmd, _ = _words(svc, "command")
    env = _environment(svc, file)
    words = [_interpolate(t, dotenv) for t in entry + cmd]
    engines: list[RawEngine] = []
    if len(words) >= 3 and words[0].text in _SHELLS and words[1].text == "-c":
        engines = read_script(words[2].text, file, name=sname, base_line=words[2].line or 1,
                              env={k: Var(v.value, v.origin.line, exported=True, source="env") for k, v in env.items()})
    else:
        inv = find_invocation(words)
        default = "image" if not entry and is_vllm_image(image) else None
        if inv is not None or default is not None:
            e = engine_from_tokens(words, Context(file=file, source="command-line"), name=sname,
                                   line=svc.line, invocation=inv, default_kind=default)
            engines = [e] if e is not None else []
    for e in engines:
        e.name = sname if len(engines) == 1 else e.name
        e.line = services.kline(sname)
        for k, v in env.items():
            e.env.setdefault(k, v)
        if image:
            version = vllm_version_from_image(image)
            if version is not None:
                e.vllm_version = Hint(value=version, origin=Origin(file=file, line=svc.kline("image"),
                                                                   source="compose", key=image))
            else:
                e.notes.append(f"image {image} does not name a vLLM release")
        _gpus(e, svc, file)
    return engines


def _environment(svc: YMap, file: str) -> dict[str, Hint]:
    env = svc.get("environment")
    out: dict[str, Hint] = {}
    if isinstance(env, YList):
        for i, item in enumerate(env):
            k, eq, v = str(item).partition("=")
            if eq:
                out[k] = Hint(value=v, origin=Origin(file=file, line=env.iline(i), source="compose", key=f"environment.{k}"))
    elif isinstance(env, YMap):
        for k, v in env.items():
            if v is not None:
                out[str(k)] = Hint(value=str(v), origin=Origin(file=file, line=env.kline(k), source="compose",
                                                              key=f"environment.{k}"))
    return out


def _gpus(e: RawEngine, svc: YMap, file: str) -> None:
    devices = svc.get("deploy")
    for key in ("resources", "reservations", "devices"):
        devices = devices.get(key) if isinstance(devices, YMap) else None
    if isinstance(devices, YList):
        for i, dev in enumerate(devices):
            if not isinstance(dev, YMap):
                continue
            caps = dev.get("capabilities") or []
            if not isinstance(caps, list):  # compose: a list of strings, e.g. [gpu]
                raise InputError(f"capabilities must be a list such as [gpu], got {caps!r}"[:120], file=file,
                                 line=dev.kline("capabilities"), key="capabilities",
                                 hint="write capabilities: [gpu]")
            if "gpu" not in [str(c) for c in caps] and dev.get("driver") != "nvidia":
                continue
            if "device_ids" in dev and isinstance(dev["device_ids"], list):
                ids = [str(x) for x in dev["device_ids"]]
                e.gpu_count = Hint(value=len(ids), origin=Origin(file=file, line=dev.kline("device_ids"),
                                                                 source="compose", key="device_ids"))
                e.shared_gpu_group = "compose:devices=" + ",".join(sorted(ids))
                return
            if "count" in dev:
                count = gpu_quantity(dev["count"])
                e.gpu_count = Hint(value=count, origin=Origin(file=file, line=dev.kline("count"),
                                                              source="compose", key="count"))
                if isinstance(count, int) and not 0 <= count <= MAX_GPUS:
                    raise InputError(f"{count:,} GPUs is outside [0, {MAX_GPUS:,}] for one service"
                                     if count < 10**24 else f"a GPU count of {len(str(count)):,} digits",
                                     file=file, line=dev.kline("count"), key="count",
                                     hint="give the number of GPUs the service uses, or 'all'")
                if isinstance(count, int):
                    e.shared_gpu_group = "compose:devices=" + ",".join(str(d) for d in range(count))
                elif count == "all":
                    e.shared_gpu_group = "compose:devices=all"
                return
    gpus = svc.get("gpus")
    if gpus is not None:
        e.gpu_count = Hint(value=gpu_quantity(gpus), origin=Origin(file=file, line=svc.kline("gpus"),
                                                                   source="compose", key="gpus"))


def _share_groups(engines: list[RawEngine]) -> None:
    """Keep a shared group only where two or more engines are on the same GPUs; explain it."""
    groups: dict[str, list[RawEngine]] = {}
    for e in engines:
        if e.shared_gpu_group:
            groups.setdefault(e.shared_gpu_group, []).append(e)
    for gid, members in groups.items():
        if len(members) < 2:
            members[0].shared_gpu_group = None
            continue
        names = ", ".join(m.name for m in members)
        by_count = any(m.gpu_count and m.gpu_count.origin.key == "count" for m in members)
        for m in members:
            m.notes.append(f"shares GPUs ({gid.split(':', 1)[1]}) with {names}: their gpu-memory-utilization "
                           "fractions add up on each GPU"
                           + ("; docker gives `count: N` the first N GPUs, it does not spread services" if by_count else ""))

