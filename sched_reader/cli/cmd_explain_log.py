"""``sched-reader explain-log LOG [CONFIG]``: a real vLLM start-up log beside the prediction, term by term."""

from __future__ import annotations

from typing import List, Optional

import typer

from sched_reader.cli.common import FormatOption, GpuOption, ModelConfigOption, OutputFormat, VllmOption, run_guarded


def explain_log(
    log: str = typer.Argument(..., help="A vLLM start-up log (plain or .gz; docker/kubectl logs, any rank prefix)."),
    config: Optional[List[str]] = typer.Argument(
        None, help="The deploy config of the same engine (default: rebuild the engine from the log itself)."),
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Read a vLLM start-up log; lay each memory term beside sched-reader's prediction; name the term that differs.

    Exit codes: 0 explained, 2 unreadable, truncated or mismatched input (a log of another model than the
    config, several engines interleaved).
    """

    def body() -> int:
        from sched_reader.analyzers.explain_log import explain
        from sched_reader.cli.common import split_inputs
        from sched_reader.errors import InputError
        from sched_reader.readers.vllm_log import parse_log, read_log_text

        facts = parse_log(read_log_text(log), log)
        spec = None
        paths, command_line = split_inputs(config)
        if paths or command_line:
            from sched_reader.models.spec_builder import build_specs

            release = vllm or facts.release or facts.release_from_format
            specs = build_specs(paths, command_line, gpu=gpu, vllm=release, model_config=model_config)
            if len(specs) != 1:
                raise InputError(f"the config has {len(specs)} engines; explain-log compares one",
                                 file=specs[0].file, hint="give a config with the one engine the log is of")
            spec = specs[0]
        ex = explain(facts, spec, gpu=gpu, vllm=vllm, model_config=model_config)
        if fmt == OutputFormat.json:
            from sched_reader.report.spec_json import dumps

            typer.echo(dumps({"schema_version": 1, "explain_log": ex.to_json()}), nl=False)
        else:
            from sched_reader.report.console import make_console
            from sched_reader.report.text_explain_log import render_explanation

            render_explanation(make_console(), ex)
        return 0

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``explain-log`` to the app."""
    app.command("explain-log")(explain_log)
