"""`sched-reader simulate`: replay a workload through vLLM's scheduler (and the lesson's toy policies)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from sched_reader.cli.common import (FormatOption, GpuOption, ModelConfigOption, OutputFormat, PlotOption,
                                     ProfileOption, VllmOption, bench_overrides, run_guarded, with_bench_options)

@with_bench_options
def simulate(
    files: Optional[List[str]] = typer.Argument(
        None, metavar="FILE",
        help="Deploy files (compose, k8s, helm values, vLLM config); or a command line after --."),
    policy: str = typer.Option("vllm", "--policy", metavar="NAME", help="naive | static | continuous | chunked | vllm."),
    compare: Optional[str] = typer.Option(
        None, "--compare", metavar="LIST", help="Comma list of policies to run side by side, e.g. naive,continuous,vllm."
    ),
    bench: dict = ...,  # the `vllm bench serve` options (common.BENCH_OPTIONS)
    chunk_size: int = typer.Option(512, "--chunk-size", min=1, metavar="N", help="Prefill chunk of the 'chunked' policy (tokens)."),
    slo_ttft_ms: Optional[float] = typer.Option(None, "--slo-ttft-ms", metavar="MS", help="Goodput TTFT target (ms); same as --goodput ttft:MS."),
    slo_tpot_ms: Optional[float] = typer.Option(None, "--slo-tpot-ms", metavar="MS", help="Goodput TPOT target (ms); same as --goodput tpot:MS."),
    plot: Optional[Path] = PlotOption,
    timeseries: Optional[Path] = typer.Option(
        None, "--timeseries", metavar="FILE", help="Write batch size, KV blocks and step time over time to FILE (CSV)."),
    fmt: OutputFormat = FormatOption,
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    profile: Optional[str] = ProfileOption,
) -> None:
    """Predict throughput, TTFT, ITL, KV use and preemptions of a deploy config under a workload.

    Each policy replays the same requests on the same KV budget and step-cost model; the table's first
    rows show the scheduler limits that make the policies differ. A trace (--workload FILE.jsonl, or a
    `workload: {trace: ...}` section) is replayed exactly: its arrival times, lengths and prefixes.

    Exit codes: 0 simulated, 2 unreadable or invalid input (unknown policy, GPU, model or file).

    \b
    Examples:
      sched-reader simulate examples/llama3-8b-h100.yaml
      sched-reader simulate --compare naive,static,continuous,chunked,vllm --num-prompts 200 examples/llama3-8b-h100.yaml
      sched-reader simulate --request-rate 8 --format json -- vllm serve meta-llama/Llama-3.1-8B-Instruct
    """

    def body() -> int:
        from sched_reader.cli.runners import simulate as runner
        from sched_reader.cli.runners.profile import activate_profile

        activate_profile(profile)
        overrides = bench_overrides(**bench)
        return runner.run(files, policy=policy, compare=compare, overrides=overrides, slo_ttft_ms=slo_ttft_ms,
                          slo_tpot_ms=slo_tpot_ms, chunk_size=chunk_size, plot=plot, timeseries=timeseries,
                          fmt=fmt.value, gpu=gpu, vllm=vllm, model_config=model_config, echo=typer.echo)

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``simulate`` to the app."""
    app.command("simulate")(simulate)
