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
import shlex
from pathlib import Path

from sched_reader.errors import InputError
from sched_reader.limits import MAX_GPUS
from sched_reader.readers.argv import find_invocation, vllm_signature
from sched_reader.readers.cmdline import Context, engine_from_tokens, read_script
from sched_reader.readers.images import gpu_quantity, is_vllm_image, release_from_image
from sched_reader.errors import SchedReaderError
from sched_reader.readers.raw import Hint, Origin, RawEngine, Unresolved
from sched_reader.readers.shell import Tok, Var
from sched_reader.readers.yaml_tree import YList, YMap

_SHELLS = {"sh", "bash", "/bin/sh", "/bin/bash"}
_INTERP = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def read_compose(root: YMap, file: str, base_dir: Path | None) -> list[RawEngine]:
    """Every vLLM engine among ``services``."""
    dotenv = _dotenv(base_dir)
    engines: list[RawEngine] = []
    skipped: list[str] = []
    services = root.get("services")
    for sname, svc in services.items():
        if not isinstance(svc, YMap):
            continue
        try:
            found = _service(str(sname), svc, services, file, dotenv, base_dir)
        except (SchedReaderError, ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            bad = RawEngine(name=str(sname), file=file, line=services.kline(sname))  # never hides the others
            bad.unresolved.append(Unresolved(text=str(sname), reason=f"cannot read this service: {exc}",
                                             origin=Origin(file=file, line=services.kline(sname), source="compose")))
            found = [bad]
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


def interpolate_text(text: str, dotenv: dict[str, tuple[str, int]]) -> tuple[str, list[str], list[str], list[str]]:
    """Compose interpolation of ``text``: (value, unresolved ``${...}`` texts, their reasons, notes).

    Rules (compose spec, "Interpolation"): ``${VAR}`` / ``$VAR`` from ``.env``; ``${VAR:-default}`` (unset or
    empty) and ``${VAR-default}`` (unset) use the default; ``${VAR:?err}`` / ``${VAR?err}`` stop compose when
    unset; ``${VAR:+alt}`` / ``${VAR+alt}`` give alt when set; ``$$`` is a literal ``$``. A variable that is
    not in ``.env`` and has no default, or whose default is empty (``${X:-}``), is unresolved."""
    if "$" not in text:
        return text, [], [], []
    unresolved: list[str] = []
    reasons: list[str] = []
    notes: list[str] = []

    def repl(m: re.Match) -> str:
        name = m.group(1) or m.group(4)
        op, arg = m.group(2) or "", m.group(3) or ""
        if name in dotenv:
            value = dotenv[name][0]
            if op in (":-",) and value == "":
                return arg
            if op in (":+", "+"):
                return arg if (value or op == "+") else ""
            return value
        if op in (":-", "-") and arg != "":
            notes.append(f"{m.group(0)}: {name} is not set in .env, compose uses the default {arg!r}")
            return arg
        unresolved.append(m.group(0))
        if op in (":?", "?"):
            reasons.append(f"{m.group(0)}: compose requires {name} at run time ({arg or 'no message'})")
        elif op in (":-", "-"):
            reasons.append(f"{m.group(0)}: {name} is not set in .env and its default is empty")
        else:
            reasons.append(f"{m.group(0)}: compose takes it from the shell environment or .env, which this file "
                           "does not set")
        return m.group(0)

    parts = text.split("$$")
    return "$".join(_INTERP.sub(repl, part) for part in parts), unresolved, reasons, notes


def _interpolate(tok: Tok, dotenv: dict[str, tuple[str, int]]) -> Tok:
    """Compose interpolation of one word (see :func:`interpolate_text`)."""
    if "$" not in tok.text:
        return tok
    new, unresolved, reasons, notes = interpolate_text(tok.text, dotenv)
    return Tok(new, tok.line, tuple(unresolved), tuple(reasons) + tuple(notes))


_PLACE = re.compile("\ue100(\\d+)\ue101")


def _words(svc: YMap, key: str, dotenv: dict | None = None) -> tuple[list[Tok], bool]:
    """(words, was_string) of ``entrypoint`` / ``command``. A string is interpolated by compose first, then
    split like a shell would (compose runs no shell: no ``$VAR`` expansion); a list is taken item by item."""
    value = svc.get(key)
    if value is None:
        return [], False
    if isinstance(value, YList):
        return [Tok(str(v), value.iline(i)) for i, v in enumerate(value) if v is not None], False
    text = str(value)
    first = svc.vline(key) or svc.kline(key) or 1
    multiline = svc.styles.get(key) == "|"
    held: list[tuple[str, str]] = []
    notes: list[str] = []

    def hold(part: str) -> str:
        new, unresolved, reasons, part_notes = interpolate_text(part, dotenv or {})
        notes.extend(part_notes)
        if not unresolved:
            return new
        # keep each unresolved ${...} as one opaque placeholder through the split
        for u, r in zip(unresolved, reasons):
            held.append((u, r))
            new = new.replace(u, f"\ue100{len(held) - 1}\ue101", 1)
        return new

    text2 = "\x00".join(hold(part) for part in text.split("$$")).replace("\x00", "$")
    if not multiline:
        text2 = text2.replace("\n", " ")
    try:
        lex = shlex.shlex(text2, posix=True)
        lex.whitespace_split = True
        lex.commenters = ""
        words = list(lex)
    except ValueError:
        words = text2.split()
    out: list[Tok] = []
    cursor = 0
    for w in words:
        probe = w[:8]
        pos = text2.find(probe, cursor) if probe else -1
        if pos >= 0:
            cursor = pos + len(probe)
        line = first + (text2.count("\n", 0, pos) if multiline and pos >= 0 else 0)
        idx = [int(k) for k in _PLACE.findall(w)]
        plain = _PLACE.sub(lambda m: held[int(m.group(1))][0], w)
        out.append(Tok(plain, line, tuple(held[i][0] for i in idx), tuple(held[i][1] for i in idx)))
    if notes and out:
        out[-1] = Tok(out[-1].text, out[-1].line, out[-1].unresolved, out[-1].notes + tuple(notes))
    return out, True


def _service(sname: str, svc: YMap, services: YMap, file: str, dotenv: dict, base_dir: Path | None = None
             ) -> list[RawEngine]:
    raw_image = str(svc.get("image") or "")
    image, image_unresolved, _, image_notes = interpolate_text(raw_image, dotenv)
    entry, _ = _words(svc, "entrypoint", dotenv)
    cmd, _ = _words(svc, "command", dotenv)
    env = _environment(svc, file, dotenv)
    words = [_interpolate(t, dotenv) for t in entry + cmd]
    build_from = _build_base_image(svc, base_dir)
    engines: list[RawEngine] = []
    signal = None
    if len(words) >= 3 and words[0].text in _SHELLS and words[1].text == "-c":
        engines = read_script(words[2].text, file, name=sname, base_line=words[2].line or 1,
                              env={k: Var(v.value, v.origin.line, exported=True, source="env") for k, v in env.items()})
    else:
        inv = find_invocation(words)
        vllm_image = is_vllm_image(image) or (build_from is not None and is_vllm_image(build_from))
        default = "image" if not entry and vllm_image else None
        if inv is None and default is None and not entry and words and words[0].text.startswith("-"):
            signal = vllm_signature([w.text for w in words])
            default = "image" if signal else None
        if inv is not None or default is not None:
            e = engine_from_tokens(words, Context(file=file, source="command-line"), name=sname,
                                   line=svc.line, invocation=inv, default_kind=default)
            engines = [e] if e is not None else []
    for e in engines:
        e.name = sname if len(engines) == 1 else e.name
        e.line = services.kline(sname)
        if signal:
            e.detected_by = signal
            e.notes.append(f"image {image or '?'} is not named vllm; read as a vLLM server by its command: {signal}")
        elif build_from is not None and not is_vllm_image(image):
            e.detected_by = f"build context FROM {build_from}"
            e.notes.append(f"read as vLLM: its build context Dockerfile says FROM {build_from}")
        for k, v in env.items():
            e.env.setdefault(k, v)
        e.notes.extend(image_notes)
        version_image = image if is_vllm_image(image) or build_from is None else build_from
        if image_unresolved and (build_from is None or is_vllm_image(image)):
            e.notes.append(f"image {raw_image}: {', '.join(image_unresolved)} is not set in .env; the vLLM release "
                           "is unknown")
        elif version_image:
            release_from_image(e, version_image, Origin(file=file, line=svc.kline("image") or svc.kline("build"),
                                                        source="compose", key=version_image))
        _gpus(e, svc, file, dotenv)
        cvd = e.env.get("CUDA_VISIBLE_DEVICES") or e.env.get("NVIDIA_VISIBLE_DEVICES")
        ids = [d for d in str(cvd.value).split(",") if d.strip()] if cvd is not None else []
        if ids and ids != ["all"] and (e.gpu_count is None or e.gpu_count.value == "all"):
            e.gpu_count = Hint(value=len(ids), origin=Origin(file=file, line=cvd.origin.line, source="inferred",
                                                             key=cvd.origin.key))
            e.notes.append(f"GPU count {len(ids)} from {cvd.origin.key}={cvd.value} (the GPUs the container sees)")
        profiles = svc.get("profiles")
        if isinstance(profiles, YList) and profiles:
            e.notes.append(f"compose profile(s) {', '.join(str(x) for x in profiles)}: started only with "
                           f"`docker compose --profile {profiles[0]} up`")
    return engines


_FROM = re.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)", re.I | re.M)


def _build_base_image(svc: YMap, base_dir: Path | None) -> str | None:
    """The ``FROM`` image of the service's build context Dockerfile (the last stage's base), if readable."""
    build = svc.get("build")
    if build is None or base_dir is None:
        return None
    context = build if isinstance(build, str) else str(build.get("context", ".")) if isinstance(build, YMap) else "."
    dockerfile = str(build.get("dockerfile", "Dockerfile")) if isinstance(build, YMap) else "Dockerfile"
    path = (base_dir / context / dockerfile)
    try:
        if not path.is_file() or path.stat().st_size > 1_000_000:
            return None
        froms = _FROM.findall(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None
    return froms[-1] if froms else None


def _environment(svc: YMap, file: str, dotenv: dict | None = None) -> dict[str, Hint]:
    env = svc.get("environment")
    out: dict[str, Hint] = {}
    items: list[tuple[str, object, int | None]] = []
    if isinstance(env, YList):
        for i, item in enumerate(env):
            k, eq, v = str(item).partition("=")
            if eq:
                items.append((k, v, env.iline(i)))
    elif isinstance(env, YMap):
        items = [(str(k), v, env.kline(k)) for k, v in env.items() if v is not None]
    for k, v, line in items:
        value, unresolved, _, _ = interpolate_text(str(v), dotenv or {})
        if not unresolved:
            out[k] = Hint(value=value, origin=Origin(file=file, line=line, source="compose", key=f"environment.{k}"))
    return out


def _gpus(e: RawEngine, svc: YMap, file: str, dotenv: dict | None = None) -> None:
    dotenv = dotenv or {}
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
                ids: list[str] = []
                for x in dev["device_ids"]:
                    value, unresolved, _, _ = interpolate_text(str(x), dotenv)
                    if unresolved:
                        e.notes.append(f"device_ids entry {x}: not set in .env (GPU count unknown)")
                        return
                    ids.extend(d.strip() for d in value.split(",") if d.strip())
                if ids == ["all"]:
                    e.gpu_count = Hint(value="all", origin=Origin(file=file, line=dev.kline("device_ids"),
                                                                  source="compose", key="device_ids"))
                    return
                e.gpu_count = Hint(value=len(ids), origin=Origin(file=file, line=dev.kline("device_ids"),
                                                                 source="compose", key="device_ids"))
                e.shared_gpu_group = "compose:devices=" + ",".join(sorted(ids))
                return
            if "count" in dev:
                raw_count = dev["count"]
                if isinstance(raw_count, str) and "$" in raw_count:
                    value, unresolved, _, _ = interpolate_text(raw_count, dotenv)
                    if unresolved:
                        e.notes.append(f"GPU count {raw_count}: not set in .env (unresolved)")
                        return
                    raw_count = value
                count = gpu_quantity(raw_count)
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
            e.gpu_count = Hint(value="all", origin=Origin(file=file, line=devices.iline(i), source="compose",
                                                          key="devices (no count: all GPUs)"))
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

