"""``sched-reader lint``: the CI gate -- options and exit code; the work is ``cli/runners/lint.py``
(pipeline: ``analyzers/lint.py``; formats: ``report/formatters.py``)."""

from __future__ import annotations

from enum import Enum
from typing import List, Optional

import typer

from sched_reader.cli.common import GpuOption, ModelConfigOption, VllmOption, run_guarded
from sched_reader.cli.fail_on import FailOn


class LintFormat(str, Enum):
    """Output formats of ``lint`` (``auto``: github under GitHub Actions, else text); the others are the
    names in ``report.formatters.LINT_FORMATTERS``."""

    auto = "auto"
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"
    junit = "junit"


def lint(
    files: Optional[List[str]] = typer.Argument(
        None, help="Deploy files or directories (walked for *.yaml, *.yml, *.sh); or `-- vllm serve ...`."
    ),
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    fmt: LintFormat = typer.Option(
        LintFormat.auto, "--format", "-f", case_sensitive=False,
        help="Output format; auto = github under GitHub Actions (GITHUB_ACTIONS and GITHUB_WORKFLOW set), else text.",
    ),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the output to this file instead of stdout."),
    sarif_file: Optional[str] = typer.Option(
        None, "--sarif-file", help="Also write SARIF 2.1.0 to this file (for github/codeql-action/upload-sarif)."
    ),
    fail_on: FailOn = typer.Option(
        FailOn.error, "--fail-on", case_sensitive=False, help="Exit 1 when a finding of this severity or worse remains."
    ),
    capacity: bool = typer.Option(
        True, "--capacity/--no-capacity", help="Also run the capacity checks (SR2xx) for engines whose model resolves."
    ),
    select: Optional[List[str]] = typer.Option(
        None, "--select", help="Only these rules: ids, id prefixes (SR1), names, ALL; comma-separated or repeated."
    ),
    ignore: Optional[List[str]] = typer.Option(
        None, "--ignore", help="Leave out these rules (same forms as --select)."
    ),
) -> None:
    """Lint deploy configs for CI: flag/version checks (SR1xx) and capacity checks (SR2xx).

    Inline `# sched-reader: ignore SR101` (on the line, or a comment line above) and
    `# sched-reader: ignore-file` directives suppress findings.

    Exit codes: 0 no finding at or above --fail-on (default error), 1 otherwise, 2 could not complete.
    """

    def body() -> int:
        from sched_reader.cli.runners import lint as runner

        return runner.run(files, gpu=gpu, vllm=vllm, model_config=model_config, fmt=fmt.value, output=output,
                          sarif_file=sarif_file, fail_on=fail_on.value, capacity=capacity, select=select,
                          ignore=ignore, echo=lambda text: typer.echo(text, nl=False))

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``lint`` to the app."""
    app.command("lint")(lint)
