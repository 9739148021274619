"""``sched-reader lint``: the CI gate -- options and exit code; the work is ``cli/runners/lint.py``
(pipeline: ``analyzers/lint.py``; formats: ``report/formatters.py``)."""

from __future__ import annotations

from enum import Enum
from typing import List, Optional

import typer

from sched_reader.cli.common import GpuOption, ModelConfigOption, VllmOption, run_guarded
from sched_reader.cli.fail_on import FailOn


class LintFormat(str, Enum):
    """Output formats of ``lint`` (``auto``: github under GitHub Actions, else text)."""

    auto = "auto"
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"
    junit = "junit"


def lint(
    files: Optional[List[str]] = typer.Argument(
        None, help="Deploy files or directories (walked for *.yaml, *.yml, *.sh); `-` for standard input; "
                   "or `-- vllm serve ...`.", metavar="PATH",
    ),
    gpu: Optional[str] = GpuOption,
    vllm: Optional[str] = VllmOption,
    model_config: Optional[str] = ModelConfigOption,
    fmt: LintFormat = typer.Option(
        LintFormat.auto, "--format", "-f", case_sensitive=False,
        help="Output format; auto = github under GitHub Actions (GITHUB_ACTIONS and GITHUB_WORKFLOW set), else text.",
    ),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", help="Write the output to this file instead of stdout."),
    sarif_file: Optional[str] = typer.Option(
        None, "--sarif-file", metavar="FILE", help="Also write SARIF 2.1.0 to this file (for github/codeql-action/upload-sarif)."
    ),
    fail_on: Optional[FailOn] = typer.Option(
        None, "--fail-on", case_sensitive=False,
        help="Exit 1 when a finding of this severity or worse remains (default: the config's fail-on, else error).",
    ),
    capacity: bool = typer.Option(
        True, "--capacity/--no-capacity", help="Also run the capacity checks (SR2xx) for engines whose model resolves."
    ),
    select: Optional[List[str]] = typer.Option(
        None, "--select", metavar="RULES", help="Only these rules: ids, id prefixes (SR1), names, ALL; comma-separated or repeated."
    ),
    extend_select: Optional[List[str]] = typer.Option(
        None, "--extend-select", metavar="RULES", help="Add these rules to the selection (the config's or --select's)."
    ),
    ignore: Optional[List[str]] = typer.Option(
        None, "--ignore", metavar="RULES", help="Leave out these rules (same forms as --select)."
    ),
    config_file: Optional[str] = typer.Option(
        None, "--config-file", metavar="FILE",
        help="Use this configuration (.sched-reader.yaml or pyproject.toml) instead of discovering one.",
    ),
    isolated: bool = typer.Option(False, "--isolated", help="Ignore every configuration file."),
    exclude: Optional[List[str]] = typer.Option(
        None, "--exclude", metavar="GLOB", help="Skip paths matching this glob in directory walks (repeatable)."
    ),
    force_exclude: bool = typer.Option(
        False, "--force-exclude", help="Apply excludes to files named explicitly too (for pre-commit)."
    ),
    workload: Optional[str] = typer.Option(
        None, "--workload", metavar="FILE",
        help="Workload for the capacity findings (YAML workload section or JSONL trace); without one, a file's "
             "or the config's workload is used, else only structural capacity checks run.",
    ),
    baseline: Optional[str] = typer.Option(
        None, "--baseline", metavar="FILE",
        help="Report only findings not in this baseline file (default: the config's `baseline:`).",
    ),
    write_baseline: Optional[str] = typer.Option(
        None, "--write-baseline", metavar="FILE", help="Write every current finding to this baseline file."
    ),
    jobs: int = typer.Option(0, "--jobs", "-j", min=0, metavar="N",
                             help="Worker processes (0 = one per CPU, at most 8; 1 = no workers)."),
    stdin_filename: Optional[str] = typer.Option(
        None, "--stdin-filename", metavar="NAME", help="Name of the file read from `-` (in the output, globs)."
    ),
    skip_unrecognized: bool = typer.Option(
        False, "--skip-unrecognized",
        help="Named files with no vLLM engine are skipped (as in a directory walk), not an error; for pre-commit, "
             "which passes every matching file.",
    ),
) -> None:
    """Lint deploy configs for CI: flag/version checks (SR1xx) and capacity checks (SR2xx).

    Configuration: the nearest .sched-reader.yaml (or pyproject.toml [tool.sched-reader]); see README.
    Inline `# sched-reader: ignore[SR101]` (on the line, or a comment line above) and
    `# sched-reader: ignore-file` directives suppress findings; one that suppresses nothing is SR002.

    Exit codes: 0 no finding at or above --fail-on (default error), 1 otherwise, 2 could not complete
    (a wrong option or configuration, or an input that could not be read: the others are still reported).
    """

    def body() -> int:
        from sched_reader.cli.runners import lint as runner

        return runner.run(
            files, gpu=gpu, vllm=vllm, model_config=model_config, fmt=fmt.value, output=output,
            sarif_file=sarif_file, fail_on=fail_on.value if fail_on else None, capacity=capacity, select=select,
            extend_select=extend_select, ignore=ignore, config_file=config_file, isolated=isolated, exclude=exclude,
            force_exclude=force_exclude, workload=workload, baseline=baseline, write_baseline=write_baseline,
            jobs=jobs, stdin_filename=stdin_filename, skip_unrecognized=skip_unrecognized,
            echo=lambda text, err=False: typer.echo(text, nl=False, err=err))

    raise typer.Exit(run_guarded(body))


def register(app: typer.Typer) -> None:
    """Add ``lint`` to the app."""
    app.command("lint")(lint)
