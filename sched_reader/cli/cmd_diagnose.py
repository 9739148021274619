"""``sched-reader diagnose``: KV budget, capacity, speed and the scheduler bottleneck for each engine."""

from __future__ import annotations

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
    split_inputs,
)
from sched_reader.cli.fail_on import FailOn, exit_for
from sched_reader.limits import MAX_PROMPTS, MAX_TOKENS


def diagnose(
    files: Optional[List[str]] = typer.Argument(
        None, help="Deploy files (vLLM YAML, shell, Kubernetes, Helm values, compose); or `-- vllm serve ...`."
    ),
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    fmt: OutputFormat = FormatOption,
    explain: bool = typer.Option(False, "--explain", help="Show each figure's formula and inputs."),
    dataset_name: Optional[Dataset] = typer.Option(
        None, "--dataset-name", help="Workload shape, as `vllm bench serve` (default random)."
    ),
    random_input_len: Optional[int] = typer.Option(None, "--random-input-len", min=1, max=MAX_TOKENS, help="Prompt tokens (random dataset; default 1024)."),
    random_output_len: Optional[int] = typer.Option(None, "--random-output-len", min=1, max=MAX_TOKENS, help="Output tokens (random dataset; default 128)."),
    num_prompts: Optional[int] = typer.Option(None, "--num-prompts", min=1, max=MAX_PROMPTS, help="Requests in the run (default 1000)."),
    request_rate: Optional[str] = typer.Option(None, "--request-rate", help="Requests/s, or inf for all at once (default inf)."),
    max_concurrency: Optional[int] = typer.Option(None, "--max-concurrency", min=1, max=MAX_PROMPTS, help="Cap on requests in flight."),
    fail_on: FailOn = typer.Option(FailOn.error, "--fail-on", case_sensitive=False,
                                   help="Exit 1 when a finding of this severity or worse is reported."),
    sets: Optional[List[str]] = typer.Option(
        None, "--set", metavar="FLAG=VALUE",
        help="What-if: override a vLLM flag (repeatable), e.g. --set max-num-batched-tokens=2048; "
             "prints the predicted metrics without -> with the overrides."),
    effects: bool = typer.Option(True, "--effects/--no-effects",
                                 help="Evaluate each recommendation's predicted effect (one re-run each); "
                                      "a recommendation that does not improve its target metric is not printed."),
    profile: Optional[str] = ProfileOption,
) -> None:
    """Predict vLLM's KV-cache budget, capacity, prefill/decode speed and which scheduling default binds.

    Exit codes: 0 no finding at or above --fail-on (default error), 1 otherwise, 2 unreadable input.
    """

    def body() -> int:
        from sched_reader.cli.common import activate_profile

        activate_profile(profile)
        from sched_reader.analyzers.diagnosis import diagnose as run_diagnosis
        from sched_reader.report.spec_json import dumps, envelope

        from sched_reader.limits import MIN_REQUEST_RATE, finite_float

        rate: float | None = None
        if request_rate is not None:
            rate = finite_float(request_rate, key="--request-rate", lo=MIN_REQUEST_RATE, unit="req/s",
                                allow_inf=True, hint="a rate in requests/s, or inf to send every request at once")
        overrides = {
            "dataset_name": dataset_name.value if dataset_name else None,
            "random_input_len": random_input_len,
            "random_output_len": random_output_len,
            "num_prompts": num_prompts,
            "request_rate": rate,
            "max_concurrency": max_concurrency,
        }
        from sched_reader.analyzers import whatif

        paths, command_line = split_inputs(files)
        flag_sets = whatif.parse_sets(sets)
        kw = dict(gpu=gpu, vllm=vllm, model_config=model_config)
        raws, specs = whatif.build(paths, command_line, flag_sets, **kw)
        results = [run_diagnosis(s, overrides) for s in specs]
        if effects:
            whatif.attach_effects(raws, specs, results, overrides, **kw)
        if flag_sets:
            base = whatif.build(paths, command_line, None, **kw)[1]
            for d, w in zip(results, whatif.compare(raws, base, specs, results, overrides, flag_sets)):
                d.what_if = w
        for spec, d in zip(specs, results):
            spec.findings = d.findings
        if fmt == OutputFormat.json:
            typer.echo(dumps(envelope([d.to_json(explain=True) for d in results])), nl=False)
        else:
            from sched_reader.report.console import make_console
            from sched_reader.report.text_diagnose import render_diagnoses

            render_diagnoses(make_console(), results, explain=explain)
        return exit_for(specs, fail_on)

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``diagnose`` to the app."""
    app.command("diagnose")(diagnose)
