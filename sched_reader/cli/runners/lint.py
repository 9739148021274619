"""``sched-reader lint``: split the inputs, run the lint pipeline, render with the chosen formatter(s),
write the output (and the GitHub step summary), return the exit code."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from sched_reader.analyzers.lint import LintOptions, parse_selectors, run_lint
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


def run(files: list[str] | None, *, gpu: str | None, vllm: str | None, model_config: str | None, fmt: str,
        output: str | None, sarif_file: str | None, fail_on: str, capacity: bool, select: list[str] | None,
        ignore: list[str] | None, echo) -> int:
    """The whole command; ``echo(text)`` writes to stdout. Returns the exit code."""
    opts = LintOptions(gpu=gpu, vllm=vllm, model_config=model_config, capacity=capacity,
                       select=parse_selectors(select) or ["ALL"], ignore=parse_selectors(ignore))
    paths, command_line = _split(files)
    report = run_lint(paths, command_line, opts, fail_on)
    chosen = resolve_format(fmt)
    text = lint_formatter(chosen).render(report)
    if sarif_file:
        _write(sarif_file, lint_formatter("sarif").render(report))
    if output:
        _write(output, text)
    else:
        echo(text)
    if chosen == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        try:
            with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as fh:
                fh.write(step_summary(report))
        except OSError:
            pass  # the summary is a convenience; the annotations are already out
    return report.exit_code()
