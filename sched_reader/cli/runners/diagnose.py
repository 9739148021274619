"""``sched-reader diagnose``: build the engines, diagnose each under the workload, print, exit by --fail-on."""

from __future__ import annotations

from typing import Any, Callable

from sched_reader.analyzers import whatif
from sched_reader.analyzers.diagnosis import diagnose
from sched_reader.cli.plumbing import parse_rate as parse_common_rate, split_inputs
from sched_reader.cli.fail_on import FailOn, exit_for
from sched_reader.limits import MIN_REQUEST_RATE, finite_float
from sched_reader.models.workload import offline_usage_context
from sched_reader.report.console import make_console
from sched_reader.report.diagnosis_json import diagnosis_json
from sched_reader.report.plots import check_plot_target, plot_diagnoses
from sched_reader.report.spec_json import dumps, envelope
from sched_reader.report.text_diagnose import render_diagnoses


def parse_rate(text: str | None) -> float | None:
    """``--request-rate``: requests/s (at least ``limits.MIN_REQUEST_RATE``), or inf; None when not given.

    The option arrives already parsed (``cli.plumbing.bench_overrides``) or as text (library callers)."""
    if text is None or isinstance(text, float):
        return text if text is None else finite_float(text, key="--request-rate", lo=MIN_REQUEST_RATE,
                                                      unit="req/s", allow_inf=True)
    return parse_common_rate(text)


def run(files: list[str] | None, *, gpu: str | None, vllm: str | None, model_config: str | None, fmt: str,
        explain: bool, overrides: dict[str, Any], sets: list[str] | None, effects: bool, fail_on: FailOn,
        echo: Callable[[str], None], model: str | None = None, plot: Any = None) -> int:
    """``overrides``: the bench flags (``request_rate`` still as text); ``sets``: --set FLAG=VALUE (what-if);
    ``effects``: evaluate each recommendation's predicted effect; ``plot``: an image file to draw (checked
    before any work)."""
    if plot is not None:
        check_plot_target(plot)
    overrides = {**overrides, "request_rate": parse_rate(overrides.get("request_rate"))}
    paths, command_line = split_inputs(files)
    flag_sets = whatif.parse_sets(sets)
    kw = dict(gpu=gpu, vllm=vllm, model_config=model_config, model=model)
    ctx = offline_usage_context(overrides)
    raws, specs = whatif.build(paths, command_line, flag_sets, usage_context=ctx, **kw)
    results = [diagnose(s, overrides) for s in specs]
    if effects:
        whatif.attach_effects(raws, specs, results, overrides, **kw)
    if flag_sets:
        base = whatif.build(paths, command_line, None, usage_context=ctx, **kw)[1]
        for d, w in zip(results, whatif.compare(raws, base, specs, results, overrides, flag_sets)):
            d.what_if = w
    for spec, d in zip(specs, results):
        spec.findings = d.findings
    if fmt == "json":
        echo(dumps(envelope([diagnosis_json(d, explain=True) for d in results])))
    else:
        render_diagnoses(make_console(), results, explain=explain)
    if plot is not None:
        plot_diagnoses([diagnosis_json(d, explain=False) for d in results], plot)
    return exit_for(specs, fail_on)
