"""The typer-free half of the CLI's shared plumbing: the command line after ``--``, the guarded command
body (one error line and an exit code, never a traceback) and the ``vllm bench serve`` option values.

A command line after ``--`` (``sched-reader diagnose -- vllm serve MODEL ...``) is split off in
``app.main`` (or ``fast_diagnose.run``) before any option is parsed, and kept in ``COMMAND_LINE``; when
the app is driven directly (``typer.testing.CliRunner``), click passes those words as positional
arguments, and ``split_inputs`` recognizes them by their first word.

Nothing here imports typer: ``cli/fast_diagnose.py`` runs ``sched-reader diagnose FILE`` through these
functions without loading typer (~7% of a ``diagnose`` process). ``cli/common.py`` re-exports every name,
beside the typer option declarations.
"""

from __future__ import annotations

import contextvars
import os
import sys
from enum import Enum
from pathlib import Path
from typing import Any, Callable, NoReturn, TypeVar

from sched_reader.errors import EXIT_ERROR, InputError, SchedReaderError
from sched_reader.limits import MIN_REQUEST_RATE, finite_float

COMMAND_LINE: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("command_line", default=None)

_LAUNCHERS = ("vllm", "python", "python3", "docker", "podman")


class Dataset(str, Enum):
    """``vllm bench serve --dataset-name`` shapes sched-reader can generate."""

    random = "random"
    sharegpt = "sharegpt"


class OutputFormat(str, Enum):
    """Output formats of the analysis commands."""

    text = "text"
    json = "json"


def split_inputs(files: list[str] | None) -> tuple[list[str], list[str] | None]:
    """Separate deploy files from a command line (the words after ``--``)."""
    files = list(files or [])
    tail = COMMAND_LINE.get()
    if tail is not None:
        return files, tail
    for i, word in enumerate(files):
        base = Path(word).name
        if base in _LAUNCHERS and not Path(word).exists():
            return files[:i], files[i:]
        if word.startswith("--"):
            return files[:i], files[i:]
    return files, None


T = TypeVar("T")


def run_guarded(fn: Callable[[], T]) -> T:
    """Run a command body; a ``SchedReaderError`` becomes one line on stderr and exit code 2."""
    try:
        return _with_profile_reset(fn)
    except SchedReaderError as err:
        fail(str(err), err.exit_code)
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as Unix tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise exit_with(0) from None
    except SystemExit:
        raise
    except Exception as err:  # noqa: BLE001 - last line of defence: never a traceback
        if isinstance(err, _click_exits()):   # typer's Exit / Abort: the command's exit, not an error
            raise
        fail(
            f"internal error: {type(err).__name__}: {err} (please report this with the input that caused it)",
            EXIT_ERROR,
        )


def _with_profile_reset(fn: Callable[[], T]) -> T:
    """A ``--profile`` lasts for one command only."""
    try:
        return fn()
    finally:
        if "sched_reader.models.calibration_profile" in sys.modules:
            sys.modules["sched_reader.models.calibration_profile"].use_profile(None)


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    """Print ``sched-reader: error: MESSAGE`` on stderr and exit with ``code``."""
    sys.stderr.write(f"sched-reader: error: {message}\n")
    raise exit_with(code)


def exit_with(code: int) -> BaseException:
    """The exception that ends a command with exit code ``code``: typer's ``Exit`` when typer runs the
    command (click returns its code to ``app.main``), ``SystemExit`` when typer is not loaded (the
    entry point's typer-free ``diagnose``, ``cli/fast_diagnose.py``): the same exit code either way."""
    typer = sys.modules.get("typer")
    return typer.Exit(code) if typer is not None else SystemExit(code)


def _click_exits() -> tuple[type, ...]:
    """typer's ``Exit`` and ``Abort`` when typer is loaded (none can be raised otherwise)."""
    typer = sys.modules.get("typer")
    return (typer.Exit, typer.Abort) if typer is not None else ()


def parse_rate(text: str | None, key: str = "--request-rate") -> float | None:
    """A request rate (requests/s), at least ``limits.MIN_REQUEST_RATE``, or inf; an input error otherwise.

    Below one request per ~11.6 days the simulated duration overflows the time arithmetic (limits.py)."""
    if text is None:
        return None
    return finite_float(text, key=key, lo=MIN_REQUEST_RATE, unit="req/s", allow_inf=True,
                        hint="a rate in requests/s, or inf to send every request at once")


def parse_percentiles(text: str | None) -> tuple[float, ...]:
    """``--metric-percentiles 25,50,99.9`` -> (25.0, 50.0, 99.9); each in [0, 100]."""
    if not text:
        return ()
    out = []
    for word in text.replace(" ", ",").split(","):
        if not word:
            continue
        try:
            q = float(word)
        except ValueError:
            raise InputError(f"not a number: {word!r}", key="--metric-percentiles",
                             hint="a comma list such as 50,90,99") from None
        if not 0.0 <= q <= 100.0:
            raise InputError(f"percentile {word} is outside 0..100", key="--metric-percentiles")
        out.append(q)
    return tuple(dict.fromkeys(out))


GOODPUT_KEYS = ("ttft", "tpot", "e2el")


def parse_goodput(values: list[str] | None) -> dict[str, float]:
    """``--goodput ttft:500 tpot:50`` (vLLM's KEY:VALUE pairs, milliseconds) -> {"ttft": 500.0, ...}."""
    import difflib

    out: dict[str, float] = {}
    for value in values or []:
        for pair in value.replace(",", " ").split():
            name, sep, ms = pair.partition(":")
            name = name.strip().lower()
            if not sep:
                raise InputError(f"{pair!r} is not KEY:VALUE", key="--goodput", hint="e.g. ttft:500 tpot:50 (ms)")
            if name not in GOODPUT_KEYS:
                close = difflib.get_close_matches(name, GOODPUT_KEYS, n=1)
                raise InputError(f"unknown goodput metric {name!r}; choose from {', '.join(GOODPUT_KEYS)}",
                                 key="--goodput", hint=f"did you mean {close[0]!r}?" if close else None)
            try:
                v = float(ms)
            except ValueError:
                raise InputError(f"{pair!r}: {ms!r} is not a number of milliseconds", key="--goodput") from None
            if v < 0 or v != v:
                raise InputError(f"{pair!r}: the target must be >= 0 ms", key="--goodput")
            out[name] = v
    return out


_MAX_BURSTINESS = 1e6  # gamma shape; the workload model's bound (Arrival.burstiness)


def bench_overrides(*, workload: Any = None, dataset_name: Any = None, input_len: int | None = None,
                    output_len: int | None = None, random_input_len: int | None = None,
                    random_output_len: int | None = None, random_range_ratio: float | None = None,
                    random_prefix_len: int | None = None, sharegpt_output_len: int | None = None,
                    ignore_eos: bool = False,
                    num_prompts: int | None = None, request_rate: str | None = None,
                    burstiness: float | None = None, max_concurrency: int | None = None,
                    seed: int | None = None, metric_percentiles: str | None = None,
                    goodput: list[str] | None = None, backend: str | None = None,
                    endpoint: str | None = None) -> dict[str, Any]:
    """The workload overrides of one command line, as ``resolve_workload`` and ``diagnose`` read them.

    ``--input-len``/``--output-len`` map to the dataset-specific flags as in vLLM's ``main_async`` (an
    explicit ``--random-input-len`` loses to ``--input-len`` there too). ``--burstiness`` must be > 0.
    ``--endpoint`` (the path called) wins over ``--backend``; either becomes ``"chat"``, ``"completions"`` or
    ``"offline"``. ``--ignore-eos`` is accepted and changes nothing: every output already runs to its length.
    """
    if burstiness is not None and not 0 < burstiness <= _MAX_BURSTINESS:  # nan and inf refused too
        raise InputError(f"must be > 0 and at most {_MAX_BURSTINESS:g}, got {burstiness}", key="--burstiness")
    if random_range_ratio is not None and not 0.0 <= random_range_ratio < 1.0:
        raise InputError(f"must be in [0, 1), got {random_range_ratio}", key="--random-range-ratio")
    if input_len is not None:
        random_input_len = input_len
    if output_len is not None:   # vLLM main_async: --output-len sets both dataset-specific lengths
        random_output_len = output_len
        sharegpt_output_len = output_len
    out: dict[str, Any] = {
        "dataset_name": getattr(dataset_name, "value", dataset_name),
        "random_input_len": random_input_len,
        "random_output_len": random_output_len,
        "random_range_ratio": random_range_ratio,
        "random_prefix_len": random_prefix_len,
        "sharegpt_output_len": sharegpt_output_len,
        "num_prompts": num_prompts,
        "request_rate": parse_rate(request_rate),
        "burstiness": burstiness,
        "max_concurrency": max_concurrency,
    }
    entry = endpoint if endpoint is not None else backend
    if entry is not None:
        out["endpoint"] = entry  # checked and resolved to chat / completions by resolve_workload
    if workload is not None:
        out["workload_file"] = str(workload)
    if seed:
        out["seed"] = int(seed)
    pct = parse_percentiles(metric_percentiles)
    if pct:
        out["metric_percentiles"] = pct
    gp = parse_goodput(goodput)
    if gp:
        out["goodput"] = gp
    return out
