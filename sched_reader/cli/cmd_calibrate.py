"""``sched-reader calibrate``: fit a deployment's profile to its real `vllm bench serve` results."""

from __future__ import annotations

from typing import List, Optional

import typer

from sched_reader.cli.common import FormatOption, GpuOption, ModelConfigOption, OutputFormat, VllmOption, run_guarded


def calibrate(
    files: Optional[List[str]] = typer.Argument(
        None, help="The deployment: a deploy file, or `-- vllm serve ...` (default: rebuilt from --log)."),
    bench: List[str] = typer.Option(..., "--bench", metavar="RESULT",
                                    help="A `vllm bench serve --save-result` JSON or its printed summary "
                                         "(repeatable; several concurrency levels or lengths fit more terms)."),
    log: Optional[str] = typer.Option(None, "--log", metavar="VLLM_LOG",
                                      help="The deployment's vLLM start-up log (checked against the config, or "
                                           "the config rebuilt from it)."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="PROFILE.yaml",
                                         help="Write the profile here (default: print it)."),
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Fit the named efficiency and host terms of the cost model to real benchmark results; write a profile.

    Use the profile with `diagnose/simulate/tune --profile FILE`. Exit codes: 0 written, 2 bad input (a result
    of another model or tool, a log of another model than the config).
    """

    def body() -> int:
        from sched_reader.analyzers.calibrate import fit
        from sched_reader.cli.common import split_inputs
        from sched_reader.errors import InputError
        from sched_reader.readers.bench_result import read_bench

        paths, command_line = split_inputs(files)
        spec = None
        note = None
        kw = dict(gpu=gpu, vllm=vllm, model_config=model_config)
        if paths or command_line:
            from sched_reader.models.spec_builder import build_specs

            specs = build_specs(paths, command_line, **kw)
            if len(specs) != 1:
                raise InputError(f"the config has {len(specs)} engines; calibrate fits one deployment",
                                 file=specs[0].file)
            spec = specs[0]
        if log:
            from sched_reader.analyzers.explain_log import explain
            from sched_reader.models.spec_builder import build_specs
            from sched_reader.readers.vllm_log import parse_log, read_log_text

            facts = parse_log(read_log_text(log), log)
            ex = explain(facts, spec, **kw)  # raises on a log of another model
            if spec is None:
                if not ex.rebuilt_args:
                    raise InputError("the log does not state the deployment", file=log)
                [spec] = build_specs([], ex.rebuilt_args, gpu=gpu or ex.gpu, vllm=vllm or facts.release,
                                     model_config=model_config)
            note = f"deployment checked against {log}: {ex.verdict}"
        if spec is None:
            raise InputError("no deployment: give a deploy file, `-- vllm serve ...`, or --log",
                             hint="sched-reader calibrate -- vllm serve MODEL ... --bench result.json")
        if spec.arch is None or spec.effective is None:
            raise InputError(f"cannot calibrate {spec.name!r}: model not resolved", file=spec.file,
                             hint="pass --model-config PATH")
        prof = fit(spec, [read_bench(b) for b in bench], note)
        text = prof.dump_yaml()
        if output:
            from pathlib import Path

            Path(output).write_text(text)
        if fmt == OutputFormat.json:
            from sched_reader.report.spec_json import dumps

            typer.echo(dumps({"schema_version": 1, "profile": prof.model_dump(by_alias=True)}), nl=False)
        else:
            from sched_reader.report.text_calibrate import render_profile

            render_profile(typer.echo, prof, output)
            if not output:
                typer.echo(text, nl=False)
        return 0

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``calibrate`` to the app."""
    app.command("calibrate")(calibrate)
