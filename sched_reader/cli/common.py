"""Options shared by every analysis command: the typer declarations (kept light: no heavy imports here).

The plumbing behind them (the command line after ``--``, the guarded command body, the bench option
values) lives in ``cli/plumbing.py``, which does not import typer; every name of it is re-exported here.
"""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import Any, Callable, List, Optional

import typer

from sched_reader.cli.fail_on import FailOn
from sched_reader.cli.plumbing import (COMMAND_LINE, GOODPUT_KEYS, Dataset, OutputFormat, bench_overrides,
                                       exit_with, fail, parse_goodput, parse_percentiles, parse_rate,
                                       run_guarded, split_inputs)
from sched_reader.limits import MAX_PROMPTS, MAX_SEED, MAX_TOKENS

__all__ = ["COMMAND_LINE", "GOODPUT_KEYS", "Dataset", "OutputFormat", "bench_overrides", "exit_with", "fail",
           "parse_goodput", "parse_percentiles", "parse_rate", "run_guarded", "split_inputs"]

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
RandomPrefixLenOption = typer.Option(
    None, "--random-prefix-len", min=0, max=MAX_TOKENS, metavar="N",
    help="Tokens of one prefix every random prompt starts with, as vLLM (shared, so the prefix cache holds it; "
         "a prompt is N + --random-input-len tokens; default 0).")
SharegptOutputLenOption = typer.Option(
    None, "--sharegpt-output-len", min=1, max=MAX_TOKENS, metavar="N",
    help="Output tokens of every sharegpt request, as vLLM (overrides the dataset's lengths).")
IgnoreEosOption = typer.Option(
    False, "--ignore-eos", help="Accepted as vLLM's flag: the prediction already runs every output to its "
                                "length (random) or to the dataset's length (sharegpt).")
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
    ("random_prefix_len", Optional[int], RandomPrefixLenOption),
    ("sharegpt_output_len", Optional[int], SharegptOutputLenOption),
    ("ignore_eos", bool, IgnoreEosOption),
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


# One default for every command (config, diagnose, lint): exit 1 on an error-level finding.
FailOnOption = typer.Option(
    FailOn.error, "--fail-on", case_sensitive=False,
    help="Exit 1 when a finding of this severity or worse is reported (default error).",
)

PlotOption = typer.Option(
    None, "--plot", metavar="FILE",
    help="Also draw the figures to FILE (.png or .svg); needs the plot extra: pip install 'sched-reader[plot]'.")
