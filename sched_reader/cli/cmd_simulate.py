"""`sched-reader simulate`: replay a workload through vLLM's scheduler (and the lesson's toy policies)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from sched_reader.cli.common import (
    ProfileOption,
    Dataset,
    FormatOption,
    GpuOption,
    ModelConfigOption,
    OutputFormat,
    VllmOption,
    run_guarded,
)


def simulate(
    config: Optional[List[str]] = typer.Argument(
        None, help="Deploy file(s) (compose, k8s, helm values, vLLM config); or a command line after --."
    ),
    policy: str = typer.Option("vllm", "--policy", help="naive | static | continuous | chunked | vllm."),
    compare: Optional[str] = typer.Option(
        None, "--compare", help="Comma list of policies to run side by side, e.g. naive,continuous,vllm."
    ),
    workload: Optional[Path] = typer.Option(None, "--workload", help="Workload YAML (classes, arrivals, trace)."),
    dataset_name: Optional[Dataset] = typer.Option(
        None, "--dataset-name", case_sensitive=False, help="Workload shape, as `vllm bench serve` (default random)."
    ),
    random_input_len: Optional[int] = typer.Option(None, "--random-input-len", min=1, help="Prompt tokens (random dataset; default 1024)."),
    random_output_len: Optional[int] = typer.Option(None, "--random-output-len", min=1, help="Output tokens (random dataset; default 128)."),
    num_prompts: Optional[int] = typer.Option(None, "--num-prompts", min=1, max=10_000_000, help="Requests in the run (default 1000)."),
    request_rate: Optional[str] = typer.Option(None, "--request-rate", help="Requests/s (Poisson arrivals), or inf for all at once (default inf)."),
    max_concurrency: Optional[int] = typer.Option(None, "--max-concurrency", min=1, help="Cap on requests in flight."),
    seed: int = typer.Option(0, "--seed", help="Random seed of the generated workload."),
    chunk_size: int = typer.Option(512, "--chunk-size", min=1, help="Prefill chunk of the 'chunked' policy (tokens)."),
    slo_ttft_ms: Optional[float] = typer.Option(None, "--slo-ttft-ms", help="Goodput TTFT target (ms)."),
    slo_tpot_ms: Optional[float] = typer.Option(None, "--slo-tpot-ms", help="Goodput TPOT/ITL target (ms)."),
    fmt: OutputFormat = FormatOption,
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    profile: Optional[str] = ProfileOption,
) -> None:
    """Predict throughput, TTFT, ITL, KV use and preemptions of a deploy config under a workload.

    Each policy replays the same requests on the same KV budget and step-cost model; the table's first
    rows show the scheduler limits that make the policies differ.

    Exit codes: 0 simulated, 2 unreadable or invalid input (unknown policy, GPU, model or file).

    \b
    Examples:
      sched-reader simulate deploy.yaml
      sched-reader simulate --compare naive,static,continuous,chunked,vllm --num-prompts 200 deploy.yaml
      sched-reader simulate --request-rate 8 --format json -- vllm serve meta-llama/Llama-3.1-8B-Instruct
    """

    def body() -> int:
        from sched_reader.cli.runners import simulate as runner

        overrides = {"dataset_name": dataset_name.value if dataset_name else None,
                     "random_input_len": random_input_len, "random_output_len": random_output_len,
                     "num_prompts": num_prompts, "request_rate": request_rate, "max_concurrency": max_concurrency}
        return runner.run(config, policy=policy, compare=compare, workload=workload, overrides=overrides, seed=seed,
                          chunk_size=chunk_size, slo_ttft_ms=slo_ttft_ms, slo_tpot_ms=slo_tpot_ms, fmt=fmt.value,
                          gpu=gpu, vllm=vllm, model_config=model_config, profile=profile, echo=typer.echo)

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``simulate`` to the app."""
    app.command("simulate")(simulate)
