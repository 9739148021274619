"""Options and plumbing shared by every analysis command (kept light: no heavy imports here).

A command line after ``--`` (``sched-reader diagnose -- vllm serve MODEL ...``) is split off in
``app.main`` before typer parses anything, and kept in ``COMMAND_LINE``; when the app is driven
directly (``typer.testing.CliRunner``), click passes those words as positional arguments, and
``split_inputs`` recognizes them by their first word.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import os
import sys
from enum import Enum
from pathlib import Path
from typing import Any, Callable, List, NoReturn, Optional, TypeVar

import typer

from sched_reader.errors import EXIT_ERROR, InputError, SchedReaderError
from sched_reader.limits import MAX_PROMPTS, MAX_SEED, MAX_TOKENS, MIN_REQUEST_RATE, finite_float

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


GpuOption = typer.Option(
    None, "--gpu", "--gpu-spec", metavar="NAME|FILE", help="GPU to assume, e.g. H100, A100-40GB, L40S, 'NVIDIA H100 80GB HBM3', 'RTX 5000 32GB', or a FILE: a GPU spec (YAML/JSON: memory_gib, hbm_bandwidth_tb_s, tflops, interconnect) or the CSV of `nvidia-smi --query-gpu=name,memory.total --format=csv` (default: from the file, else H100 SXM5 80GB)."
)
VllmOption = typer.Option(
    None, "--vllm", metavar="VERSION", help="vLLM release to check against, e.g. 0.19.0 (default: from the image tag, else the newest known)."
)
ModelConfigOption = typer.Option(
    None, "--model-config", metavar="FILE", help="A local HF config.json (or its directory) for a model sched-reader does not ship."
)
ModelOption = typer.Option(
    None, "--model", metavar="NAME", help="Model to analyze (a Hugging Face id), when the file gives a path (/mnt/models, pvc://...) or a variable."
)
FormatOption = typer.Option(OutputFormat.text, "--format", "-f", help="Output format.", case_sensitive=False)
ProfileOption = typer.Option(
    None, "--profile", metavar="PROFILE.yaml",
    help="A calibration profile from `sched-reader calibrate` (its fitted terms apply to the speed predictions).")


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
        raise typer.Exit(0) from None
    except (typer.Exit, typer.Abort, SystemExit):
        raise
    except Exception as err:  # noqa: BLE001 - last line of defence: never a traceback
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
    raise typer.Exit(code)


# --------------------------------------------------------------------------------------------------
# Workload options shared by every analysis command (diagnose, simulate, tune): `--workload FILE` and
# the `vllm bench serve` flags, with vLLM's names and semantics (vllm/benchmarks/serve.py, datasets.py).
# A command declares the ones it takes with these objects and passes their values to
# `bench_overrides`, which returns the overrides dict `analyzers.diagnosis.resolve_workload` reads.
# --------------------------------------------------------------------------------------------------

WorkloadFileOption = typer.Option(
    None, "--workload", metavar="FILE",
    help="Workload to replay: a JSONL trace (one request a line: prompt_len, output_len, arrival_s, "
         "prefix_id, prefix_len), replayed exactly, or a workload YAML (classes, arrival, trace).")
DatasetNameOption = typer.Option(
    None, "--dataset-name", case_sensitive=False,
    help="Workload shape, as `vllm bench serve`: random or sharegpt (default random).")
InputLenOption = typer.Option(
    None, "--input-len", min=1, max=MAX_TOKENS, metavar="N", help="Prompt tokens; as vLLM, sets --random-input-len.")
OutputLenOption = typer.Option(
    None, "--output-len", min=1, max=MAX_TOKENS, metavar="N",
    help="Output tokens; as vLLM, sets --random-output-len (and the sharegpt output length).")
RandomInputLenOption = typer.Option(
    None, "--random-input-len", min=1, max=MAX_TOKENS, metavar="N", help="Prompt tokens (random dataset; default 1024).")
RandomOutputLenOption = typer.Option(
    None, "--random-output-len", min=1, max=MAX_TOKENS, metavar="N", help="Output tokens (random dataset; default 128).")
RangeRatioOption = typer.Option(
    None, "--random-range-ratio", metavar="R",
    help="Lengths drawn uniformly from [L(1-R), L(1+R)], as vLLM (0 <= R < 1; default 0: fixed).")
NumPromptsOption = typer.Option(
    None, "--num-prompts", min=1, max=MAX_PROMPTS, metavar="N", help="Requests in the run (default 1000).")
RequestRateOption = typer.Option(
    None, "--request-rate", metavar="RPS", help="Requests/s, or inf for all at once (default inf).")
BurstinessOption = typer.Option(
    None, "--burstiness", metavar="B",
    help="Gamma shape of the gaps between requests at a finite --request-rate: 1 Poisson (default), "
         "< 1 burstier, > 1 more uniform.")
MaxConcurrencyOption = typer.Option(
    None, "--max-concurrency", min=1, max=MAX_PROMPTS, metavar="N", help="Cap on requests in flight.")
BackendOption = typer.Option(
    None, "--backend", "--endpoint-type", metavar="NAME",
    help="vllm bench serve's client backend: vllm / openai (/v1/completions, the default) or openai-chat "
         "(/v1/chat/completions: chat template per request, larger TTFT share); offline for `vllm bench "
         "throughput` / the LLM class (no API server: no intake, streaming or HTTP share).")
EndpointOption = typer.Option(
    None, "--endpoint", metavar="PATH",
    help="API path the client calls, e.g. /v1/chat/completions (default /v1/completions; wins over --backend).")
# bounds (limits.py): lengths <= MAX_TOKENS, counts <= MAX_PROMPTS, seed in [0, MAX_SEED] (numpy's range)
SeedOption = typer.Option(0, "--seed", min=0, max=MAX_SEED, metavar="N", help="Random seed of the generated workload.")
MetricPercentilesOption = typer.Option(
    None, "--metric-percentiles", metavar="LIST",
    help="Comma list of percentiles to report for TTFT, TPOT, ITL, E2EL, as vLLM (e.g. 50,90,99.9).")
GoodputOption = typer.Option(
    None, "--goodput", metavar="KEY:MS",
    help="Goodput target as vLLM: ttft:MS, tpot:MS or e2el:MS; repeat the option or separate with commas "
         "or spaces.")


# The `vllm bench serve` options of diagnose and simulate, in their --help order: (parameter, type, option).
BENCH_OPTIONS: tuple[tuple[str, Any, Any], ...] = (
    ("workload", Optional[Path], WorkloadFileOption),
    ("dataset_name", Optional[Dataset], DatasetNameOption),
    ("input_len", Optional[int], InputLenOption),
    ("output_len", Optional[int], OutputLenOption),
    ("random_input_len", Optional[int], RandomInputLenOption),
    ("random_output_len", Optional[int], RandomOutputLenOption),
    ("random_range_ratio", Optional[float], RangeRatioOption),
    ("num_prompts", Optional[int], NumPromptsOption),
    ("request_rate", Optional[str], RequestRateOption),
    ("burstiness", Optional[float], BurstinessOption),
    ("max_concurrency", Optional[int], MaxConcurrencyOption),
    ("backend", Optional[str], BackendOption),
    ("endpoint", Optional[str], EndpointOption),
    ("seed", int, SeedOption),
    ("metric_percentiles", Optional[str], MetricPercentilesOption),
    ("goodput", Optional[List[str]], GoodputOption),
)


def with_bench_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` with the ``BENCH_OPTIONS`` in place of its ``bench`` parameter (same place in --help);
    the command is called with ``bench`` = {parameter: value}, for ``bench_overrides(**bench)`` inside its
    guarded body (so a bad value is an input error, exit code 2)."""
    signature = inspect.signature(command, eval_str=True)  # types, not the strings of `from __future__`
    names = [name for name, _, _ in BENCH_OPTIONS]
    expanded = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind)
                for name, kind, option in BENCH_OPTIONS]
    params: list[inspect.Parameter] = []
    for p in signature.parameters.values():
        params.extend(expanded if p.name == "bench" else [p.replace(kind=inspect.Parameter.KEYWORD_ONLY)])

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        bench = {name: kwargs.pop(name) for name in names}
        return command(**kwargs, bench=bench)

    wrapper.__annotations__ = {p.name: p.annotation for p in params} | {"return": signature.return_annotation}
    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    del wrapper.__wrapped__  # typer reads __signature__, not the wrapped function's
    return wrapper


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
                    num_prompts: int | None = None, request_rate: str | None = None,
                    burstiness: float | None = None, max_concurrency: int | None = None,
                    seed: int | None = None, metric_percentiles: str | None = None,
                    goodput: list[str] | None = None, backend: str | None = None,
                    endpoint: str | None = None) -> dict[str, Any]:
    """The workload overrides of one command line, as ``resolve_workload`` and ``diagnose`` read them.

    ``--input-len``/``--output-len`` map to the dataset-specific flags as in vLLM's ``main_async`` (an
    explicit ``--random-input-len`` loses to ``--input-len`` there too). ``--burstiness`` must be > 0.
    ``--endpoint`` (the path called) wins over ``--backend``; either becomes ``"chat"``, ``"completions"`` or
    ``"offline"``.
    """
    if burstiness is not None and not 0 < burstiness <= _MAX_BURSTINESS:  # nan and inf refused too
        raise InputError(f"must be > 0 and at most {_MAX_BURSTINESS:g}, got {burstiness}", key="--burstiness")
    if random_range_ratio is not None and not 0.0 <= random_range_ratio < 1.0:
        raise InputError(f"must be in [0, 1), got {random_range_ratio}", key="--random-range-ratio")
    if input_len is not None:
        random_input_len = input_len
    sharegpt_output_len = None
    if output_len is not None:
        random_output_len = output_len
        sharegpt_output_len = output_len
    out: dict[str, Any] = {
        "dataset_name": getattr(dataset_name, "value", dataset_name),
        "random_input_len": random_input_len,
        "random_output_len": random_output_len,
        "random_range_ratio": random_range_ratio,
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

PlotOption = typer.Option(
    None, "--plot", metavar="FILE",
    help="Also draw the figures to FILE (.png or .svg); needs the plot extra: pip install 'sched-reader[plot]'.")
