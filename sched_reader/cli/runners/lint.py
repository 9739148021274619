"""``sched-reader lint``: find the configuration, split the inputs, run the lint pipeline
(``analyzers/lint.py``), apply or write the baseline, render with the chosen formatter(s)
(``report/formatters.py``), write the output (and the GitHub step summary), return the exit code."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable, Mapping

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

from sched_reader.report.layout import wrap_text
from sched_reader.analyzers.baseline import load_baseline, write_baseline as _write_baseline
from sched_reader.analyzers.lint import LintOptions, apply_baseline, load_workload, parse_selectors, run_lint
from sched_reader.analyzers.lint_config import discover, with_cli
from sched_reader.cli.common import COMMAND_LINE, split_inputs
from sched_reader.errors import InputError
from sched_reader.report.formatters import lint_formatter
from sched_reader.report.github import step_summary


def _split(files: list[str] | None) -> tuple[list[str], list[str] | None]:
    """Paths and a command line; an existing path (a directory named ``vllm``) is always a path."""
    if COMMAND_LINE.get() is not None:
        return split_inputs(files)
    words = list(files or [])
    for i, word in enumerate(words):
        if os.path.exists(word):
            continue
        head, tail = split_inputs(words[i:])
        if tail is not None:
            return words[:i] + head, tail
        break
    return words, None


def resolve_format(fmt: str, environ: Mapping[str, str] | None = None) -> str:
    """``auto`` -> ``github`` when GITHUB_ACTIONS and GITHUB_WORKFLOW are set, else ``text``."""
    if fmt != "auto":
        return fmt
    env = os.environ if environ is None else environ
    return "github" if env.get("GITHUB_ACTIONS") and env.get("GITHUB_WORKFLOW") else "text"


def _write(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8", newline="\n")
    except OSError as exc:
        raise InputError(f"cannot write the output: {exc.strerror or exc}", file=path) from None


class _Progress:
    """A progress bar on stderr for long runs on a terminal (never in CI logs or pipes)."""

    MIN_FILES = 50

    def __init__(self) -> None:
        self._bar: Any = None
        self._task: Any = None

    @staticmethod
    def wanted() -> bool:
        return sys.stderr.isatty() and not os.environ.get("CI") and not os.environ.get("GITHUB_ACTIONS")

    def __call__(self, done: int, total: int) -> None:
        if total < self.MIN_FILES:
            return
        if self._bar is None:
            self._bar = Progress("linting", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                 console=Console(stderr=True), transient=True)
            self._bar.start()
            self._task = self._bar.add_task("lint", total=total)
        self._bar.update(self._task, completed=done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def run(files: list[str] | None, *, gpu: str | None, vllm: str | None, model_config: str | None, fmt: str,
        output: str | None, sarif_file: str | None, fail_on: str | None, capacity: bool,
        select: list[str] | None, extend_select: list[str] | None, ignore: list[str] | None,
        config_file: str | None, isolated: bool, exclude: list[str] | None, force_exclude: bool,
        workload: str | None, baseline: str | None, write_baseline: str | None, jobs: int,
        stdin_filename: str | None, skip_unrecognized: bool, echo: Callable[..., Any]) -> int:
    """The whole command; ``echo(text, err=False)`` writes to stdout (stderr). Returns the exit code."""
    paths, command_line = _split(files)
    config = discover(paths, config_file, isolated)
    config = with_cli(config, select=parse_selectors(select, "--select"),
                      extend_select=parse_selectors(extend_select, "--extend-select"),
                      ignore=parse_selectors(ignore, "--ignore"), exclude=exclude,
                      fail_on=fail_on, vllm=vllm, gpu=gpu)
    opts = LintOptions(gpu=config.gpu, vllm=config.vllm, model_config=model_config, capacity=capacity,
                       select=list(config.select or ["ALL"]) + list(config.extend_select),
                       ignore=list(config.ignore), config=config, workload=load_workload(workload))
    known = None
    baseline_file = baseline or config.baseline
    if baseline_file and not write_baseline:
        known = load_baseline(baseline_file)
    bar = _Progress() if _Progress.wanted() else None
    try:
        report = run_lint(paths, command_line, opts, config.fail_on or "error", force_exclude=force_exclude,
                          jobs=jobs, progress=bar, stdin_filename=stdin_filename,
                          skip_unrecognized=skip_unrecognized)
    finally:
        if bar is not None:
            bar.close()
    if write_baseline:
        n = _write_baseline(write_baseline, report.findings())
        echo(f"sched-reader: wrote {n} finding(s) to the baseline {write_baseline}\n", err=True)
        known = load_baseline(write_baseline)  # so the run that adopts the gate passes
    if known is not None:
        report, _ = apply_baseline(report, known)
    chosen = resolve_format(fmt)
    text = lint_formatter(chosen).render(report)
    if sarif_file:
        _write(sarif_file, lint_formatter("sarif").render(report))
    if output:
        _write(output, text)
    else:
        if chosen == "text" or getattr(chosen, "value", None) == "text":  # fit the width, hanging indents
            text = wrap_text(text)
        echo(text)
    for _path, message in report.failures:
        echo(f"sched-reader: error: {message}\n", err=True)
    if chosen == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        try:
            with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as fh:
                fh.write(step_summary(report))
        except OSError:
            pass  # the summary is a convenience; the annotations are already out
    return report.exit_code()
