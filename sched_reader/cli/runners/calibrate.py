"""``sched-reader calibrate``: build (or rebuild from --log) one deployment, fit its profile, write and print it."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from sched_reader.analyzers.calibrate import bench_endpoint, fit
from sched_reader.analyzers.explain_log import explain
from sched_reader.analyzers.pipeline import build_specs
from sched_reader.cli.common import split_inputs
from sched_reader.errors import InputError
from sched_reader.readers.bench_result import read_bench
from sched_reader.readers.vllm_log import parse_log, read_log_text
from sched_reader.report.spec_json import dumps
from sched_reader.report.text_calibrate import render_profile


def run(files: list[str] | None, *, bench: list[str], log: str | None, output: str | None, gpu: str | None,
        vllm: str | None, model_config: str | None, fmt: str, echo: Callable[..., None]) -> int:
    """Fit and write the profile; 0 when done (bad input raises ``InputError``: exit 2)."""
    paths, command_line = split_inputs(files)
    spec = None
    note = None
    kw = dict(gpu=gpu, vllm=vllm, model_config=model_config)
    if paths or command_line:
        specs = build_specs(paths, command_line, **kw)
        if len(specs) != 1:
            raise InputError(f"the config has {len(specs)} engines; calibrate fits one deployment",
                             file=specs[0].file)
        spec = specs[0]
    if log:
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
    benches = [read_bench(b) for b in bench]
    prof = fit(spec, benches, note, endpoint=bench_endpoint(benches, spec))
    text = prof.dump_yaml()
    if output:
        Path(output).write_text(text)
    if fmt == "json":
        echo(dumps({"schema_version": 1, "profile": prof.model_dump(by_alias=True)}), nl=False)
    else:
        render_profile(echo, prof, output)
        if not output:
            echo(text, nl=False)
    return 0
