"""Bounds on what sched-reader accepts at its edges (files, flags, workload and trace fields).

Every input enters through a reader, a flag or a workload field; the checks here run there, before any
parsing or arithmetic, so hostile or careless input becomes one ``InputError`` line naming the value and
the bound (exit code 2) instead of a Python error deep inside, a hang or an exhausted memory.

Each bound is named, with its unit and the reason for its value:

* ``MAX_FILE_BYTES`` (bytes): deploy files, workload files, traces and model configs are KiB to a few
  MiB; a larger file is a log, an archive or a device, and reading it would only waste memory.
* ``MAX_NESTING`` (levels): vLLM configs, HF ``config.json`` files and workload YAML are under ~10 levels
  deep; Python's parsers recurse per level, so deep nesting is refused before parsing.
* ``MAX_TOKENS`` (tokens): prompt and output lengths; the longest context of any shipped model is
  10M tokens (Llama 4 Scout).
* ``MAX_PROMPTS`` (requests): ``num_prompts`` and trace lines; a benchmark run is 1k-100k requests.
* ``MAX_INT_DIGITS`` (decimal digits): no vLLM flag or workload field needs more than 19 digits (int64);
  Python refuses to parse integers over 4,300 digits and numpy overflows past 19.
* ``MAX_PARALLEL`` (ranks): a tensor/pipeline/data parallel size; the largest published deployments use
  a few hundred GPUs per model.
* ``MAX_GPUS`` (devices): GPUs attached to one engine (a compose ``count``, a Kubernetes limit).
* ``MAX_SEED``: numpy's generators take a seed in [0, 2**64); vLLM's ``--seed`` is a non-negative int.
* ``MAX_ENGINES``: vLLM engines in one file (see below); ``MAX_SUGGESTIONS``: "did you mean" searches.
* ``MIN_REQUEST_RATE`` (requests/s): below one request per ~11.6 days the run is not a benchmark, and
  the simulated duration would overflow the time arithmetic.
"""

from __future__ import annotations

import errno
import math
import os
import stat
from pathlib import Path
from typing import Any

from sched_reader.errors import InputError

MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_NESTING = 64
MAX_TOKENS = 10_000_000
MAX_PROMPTS = 10_000_000
MAX_INT_DIGITS = 19
MAX_PARALLEL = 4096
MAX_GPUS = 4096
MAX_SEED = 2**63 - 1
MIN_REQUEST_RATE = 1e-6
# vLLM flags (by dest) with a range: (lowest, highest, unit). Parallel sizes multiply into the number of
# GPUs and the per-stage layer split; token budgets bound the simulator's work per step.
FLAG_BOUNDS: dict[str, tuple[int, int, str]] = {
    "tensor_parallel_size": (1, MAX_PARALLEL, "GPUs"),
    "pipeline_parallel_size": (1, MAX_PARALLEL, "stages"),
    "data_parallel_size": (1, MAX_PARALLEL, "ranks"),
    "max_num_seqs": (1, MAX_PROMPTS, "sequences"),
    "max_num_batched_tokens": (1, 16 * MAX_TOKENS, "tokens"),
}
# "did you mean" searches per engine: each compares a flag with every option of the release (~1-2 ms);
# past this many unknown flags the file is not a vLLM config with typos, and the rest get no suggestion.
MAX_SUGGESTIONS = 50
# vLLM engines in one input file (compose services, manifests, commands): the deploy files in
# tests/data/deploy have 1-6; every engine gets its own analysis (~0.3 s for diagnose).
MAX_ENGINES = 100
# Simulation size. Work grows with the tokens to decode and with preemption churn (a request evicted
# and recomputed again and again when its KV does not fit): 1,000 prompts x 1,024 output tokens is ~1M
# tokens and ~1k event-loop steps; 100 prompts x 60k tokens on one H100 is 235k steps (~25 s).
MAX_SIM_TOKENS = 20_000_000   # output tokens + prefill chunks, checked before the run
MAX_SIM_STEPS = 150_000       # event-loop steps (batched steps; decode stretches count once), during it
MAX_ECHO_CHARS = 60  # characters of a rejected value repeated in a message


def clip(value: Any, limit: int = MAX_ECHO_CHARS) -> str:
    """``repr`` of a value for an error message, cut to ``limit`` characters (a 1 MB value stays one line)."""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        return repr(text[:limit]) + f"... ({len(text):,} characters)"
    return repr(text)


def display_name(path: str | Path) -> str:
    """A file name that can be printed and encoded as UTF-8 (undecodable bytes shown as ``\\xNN``)."""
    text = str(path)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


_OS_REASONS = {
    errno.ENOENT: ("file not found", "check the path and the current directory"),
    errno.ELOOP: ("symbolic link loop (too many levels of symbolic links)", "fix the link"),
    errno.ENAMETOOLONG: ("file name too long", "check the path"),
    errno.EACCES: ("permission denied", "check the file's permissions"),
    errno.EPERM: ("permission denied", "check the file's permissions"),
    errno.ENOTDIR: ("a part of the path is not a directory", "check the path"),
}


def os_error(exc: OSError, name: str, key: str | None = None) -> InputError:
    """The one message for an ``OSError`` on a path, the same in every command."""
    reason, hint = _OS_REASONS.get(exc.errno, (f"cannot read the file: {exc.strerror or exc}",
                                               "check the path and its permissions"))
    return InputError(reason, file=name, key=key, hint=hint)


def read_regular_file(path: str | Path, *, display: str | None = None, key: str | None = None,
                      max_bytes: int = MAX_FILE_BYTES, what: str = "file") -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; anything else is an ``InputError``.

    The file is opened non-blocking and checked with ``fstat`` on the open descriptor, so a FIFO never
    blocks, a device (``/dev/zero``, also through a symlink) is refused before a byte is read, and at most
    ``max_bytes + 1`` bytes are ever read (a file growing while read is still bounded).
    """
    name = display_name(display if display is not None else path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise os_error(exc, name, key) from None
    except (ValueError, TypeError) as exc:  # embedded NUL in the name
        raise InputError(f"invalid file name: {exc}", file=name, key=key) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"is a directory, not a {what}", file=name, key=key,
                             hint="pass one file, e.g. values.yaml, serve.sh or docker-compose.yml")
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"is not a regular file (a device, FIFO or socket), not a {what}", file=name,
                             key=key, hint="pass a file saved on disk")
        if st.st_size > max_bytes:
            raise InputError(f"{what} is {st.st_size:,} bytes, over the {max_bytes:,} byte limit", file=name,
                             key=key, hint=f"pass the {what} itself, not a log or an archive")
        chunks, total = [], 0
        while total <= max_bytes:
            try:
                chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            except BlockingIOError:  # pragma: no cover - regular files never block
                break
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise InputError(f"{what} is over the {max_bytes:,} byte limit", file=name, key=key,
                             hint=f"pass the {what} itself")
        return b"".join(chunks)
    except OSError as exc:
        raise os_error(exc, name, key) from None
    finally:
        os.close(fd)


def decode_utf8(data: bytes, name: str, *, key: str | None = None) -> str:
    """UTF-8 text of ``data``; a bad byte is an ``InputError`` naming its line and offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"not valid UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                         file=name, line=line, key=key, hint="save the file as UTF-8") from None


def read_text_file(path: str | Path, *, display: str | None = None, key: str | None = None,
                   max_bytes: int = MAX_FILE_BYTES, what: str = "file") -> str:
    """``read_regular_file`` decoded as UTF-8 (BOM dropped)."""
    name = display_name(display if display is not None else path)
    text = decode_utf8(read_regular_file(path, display=name, key=key, max_bytes=max_bytes, what=what), name,
                       key=key)
    return text[1:] if text.startswith("\ufeff") else text


def json_depth(text: str) -> int:
    """Deepest ``[``/``{`` nesting of JSON text (brackets inside strings ignored); linear time."""
    depth = deepest = 0
    in_str = escaped = False
    for ch in text:
        if in_str:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif ch in "]}":
            depth -= 1
    return deepest


def check_json_depth(text: str, *, file: str | None = None, line: int | None = None, key: str | None = None,
                     limit: int = MAX_NESTING) -> None:
    """Refuse JSON nested deeper than ``limit`` before ``json.loads`` recurses into it."""
    if ("[" in text or "{" in text) and json_depth(text) > limit:
        raise InputError(f"JSON nested more than {limit} levels deep", file=file, line=line, key=key,
                         hint="vLLM and model configs are a few levels deep")


def loads_json(text: str, *, file: str | None = None, line: int | None = None, key: str | None = None,
               limit: int = MAX_NESTING, allow_nonfinite: bool = False) -> Any:
    """``json.loads`` after the nesting check; ``NaN``/``Infinity`` and huge integers are refused.

    ``allow_nonfinite`` lets ``Infinity``/``NaN`` through as floats: Hugging Face ``config.json`` files
    written by ``transformers`` hold them (Nemotron-H ``"time_step_limit": [0.0, Infinity]``).

    Raises ``json.JSONDecodeError`` for malformed JSON (callers word that error themselves) and
    ``InputError`` for input over a bound.
    """
    import json

    check_json_depth(text, file=file, line=line, key=key, limit=limit)

    def bad_constant(name: str) -> Any:
        raise InputError(f"{name} is not a number sched-reader accepts", file=file, line=line, key=key,
                         hint="write a finite number")

    def parse_int(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_INT_DIGITS:
            raise InputError(f"integer of {len(digits):,} digits is over the {MAX_INT_DIGITS}-digit limit",
                             file=file, line=line, key=key)
        return int(digits)

    if allow_nonfinite:
        return json.loads(text, parse_int=parse_int)
    return json.loads(text, parse_constant=bad_constant, parse_int=parse_int)


def bounded_int(value: Any, *, key: str, lo: int, hi: int, unit: str = "", file: str | None = None,
                line: int | None = None, hint: str | None = None) -> int:
    """``value`` as an integer in [lo, hi]: ints, integral floats and digit strings; else an ``InputError``."""
    what = f" {unit}" if unit else ""
    if isinstance(value, bool):
        raise InputError(f"expects an integer, got {value!r}", key=key, file=file, line=line)
    if isinstance(value, float):
        if not math.isfinite(value) or not lo <= value <= hi or value != int(value):
            raise InputError(f"expects a whole number in [{lo:,}, {hi:,}]{what}, got {value!r}", key=key,
                             file=file, line=line, hint=hint)
        value = int(value)
    elif isinstance(value, str):
        text = value.strip().replace("_", "")
        if len(text.lstrip("+-")) > MAX_INT_DIGITS or not text.lstrip("+-").isdigit():
            raise InputError(f"expects an integer in [{lo:,}, {hi:,}]{what}, got {clip(value)}", key=key,
                             file=file, line=line, hint=hint)
        value = int(text)
    elif not isinstance(value, int):
        raise InputError(f"expects an integer, got {clip(value)}", key=key, file=file, line=line)
    if not lo <= value <= hi:
        shown = clip(value) if len(str(value)) > 24 else f"{value:,}"
        raise InputError(f"{shown}{what} is outside [{lo:,}, {hi:,}]{what}", key=key, file=file, line=line,
                         hint=hint)
    return int(value)


def finite_float(value: Any, *, key: str, lo: float, hi: float = math.inf, unit: str = "",
                 file: str | None = None, line: int | None = None, allow_inf: bool = False,
                 hint: str | None = None) -> float:
    """``value`` as a float in [lo, hi] (``inf`` only when ``allow_inf``); else an ``InputError``."""
    what = f" {unit}" if unit else ""
    try:
        v = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"not a number: {clip(value)}", key=key, file=file, line=line) from None
    if math.isnan(v) or (math.isinf(v) and not (allow_inf and v > 0)):
        raise InputError(f"expects a finite number, got {clip(value)}", key=key, file=file, line=line, hint=hint)
    if math.isinf(v):
        return v
    if not lo <= v <= hi:
        raise InputError(f"{v:g}{what} is outside [{lo:g}, {hi:g}]{what}", key=key, file=file, line=line,
                         hint=hint)
    return v
