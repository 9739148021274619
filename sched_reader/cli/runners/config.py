"""``sched-reader config``: build the engines (the one analysis pipeline), print them, exit by --fail-on."""

from __future__ import annotations

from typing import Callable

from sched_reader.analyzers.pipeline import build_specs
from sched_reader.cli.common import split_inputs
from sched_reader.cli.fail_on import FailOn, exit_for
from sched_reader.report.console import make_console
from sched_reader.report.spec_json import dumps, envelope, spec_json
from sched_reader.report.text_config import render_config


def run(files: list[str] | None, *, gpu: str | None, vllm: str | None, model_config: str | None, fmt: str,
        fail_on: FailOn, echo: Callable[[str], None], model: str | None = None) -> int:
    """Print every engine's flags with their origins; ``model`` stands in for a path or variable model."""
    paths, command_line = split_inputs(files)
    specs = build_specs(paths, command_line, gpu=gpu, vllm=vllm, model_config=model_config, strict_model=False,
                        model=model)
    if fmt == "json":
        echo(dumps(envelope([spec_json(s) for s in specs])))
    else:
        render_config(make_console(), specs)
    return exit_for(specs, fail_on)
