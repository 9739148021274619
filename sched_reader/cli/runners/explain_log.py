"""``sched-reader explain-log``: read a vLLM start-up log, optionally the config it ran, lay each memory term
of the prediction beside the log's, print as text or JSON."""

from __future__ import annotations

from typing import Callable

from sched_reader.analyzers.explain_log import explain
from sched_reader.cli.common import split_inputs
from sched_reader.errors import InputError
from sched_reader.analyzers.pipeline import build_specs
from sched_reader.readers.vllm_log import parse_log, read_log_text
from sched_reader.report.console import make_console
from sched_reader.report.spec_json import dumps
from sched_reader.report.text_explain_log import render_explanation


def run(log: str, config: list[str] | None, *, gpu: str | None, vllm: str | None, model_config: str | None,
        fmt: str, echo: Callable[[str], None]) -> int:
    facts = parse_log(read_log_text(log), log)
    spec = None
    paths, command_line = split_inputs(config)
    if paths or command_line:
        release = vllm or facts.release or facts.release_from_format
        specs = build_specs(paths, command_line, gpu=gpu, vllm=release, model_config=model_config)
        if len(specs) != 1:
            raise InputError(f"the config has {len(specs)} engines; explain-log compares one",
                             file=specs[0].file, hint="give a config with the one engine the log is of")
        spec = specs[0]
    ex = explain(facts, spec, gpu=gpu, vllm=vllm, model_config=model_config)
    if fmt == "json":
        echo(dumps({"schema_version": 1, "explain_log": ex.to_json()}))
    else:
        render_explanation(make_console(), ex)
    return 0
