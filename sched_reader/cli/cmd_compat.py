"""`sched-reader compat`: vLLM feature matrix, release diffs, flag history, and config checks.

Kept light at import time (typer only): the command body imports the runner of the mode asked for, so
``sched-reader compat --vllm X`` answers fast.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import typer

from sched_reader.cli.common import split_inputs
from sched_reader.cli.runners.compat_common import check_usage, err

HELP = """Check a deploy config against a vLLM release, or show what a release supports.

\b
  sched-reader compat --vllm 0.18.0                 feature compatibility matrix of 0.18.0
  sched-reader compat --vllm 0.18.0 deploy.yaml     check configs (flags, matrix, start-up rules)
  sched-reader compat --vllm 0.18.0 -- vllm serve M --max-num-seqs 512
  sched-reader compat --diff 0.17.1 0.18.0          what changed between two releases
  sched-reader compat --flag --max-num-seqs         one flag across every release
  sched-reader compat --list                        known releases

\b
Rules: SR101 unknown flag, SR102 bad choice, SR103 wrong type/value, SR104 deprecated,
SR105 incompatible features (vLLM's matrix), SR106 vLLM start-up error, SR107 default changed,
SR108 abbreviated/ambiguous flag, SR109 unknown speculative method, SR110 approximate version.
Exit codes: 0 no error finding, 1 at least one error finding, 2 usage error or unreadable input.
"""


def register(app: typer.Typer) -> None:
    """Add the ``compat`` command to ``app``."""
    app.command(
        "compat",
        help=HELP,
        short_help="vLLM feature matrix, release diffs, flag history; check configs against a release.",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )(compat)


def compat(
    files: Optional[List[str]] = typer.Argument(
        None, metavar="FILE", help="Deploy files to check; put a `vllm serve ...` command line after `--`.", show_default=False
    ),
    vllm: Optional[str] = typer.Option(
        None, "--vllm", metavar="VERSION", help="vLLM release (0.18.0, v0.18.0, latest, an image tag). Default for checks: the "
        "release in each config's image tag, else the newest known.", show_default=False
    ),
    fmt: str = typer.Option("text", "--format", "-f", metavar="text|json|markdown", help="Output format."),
    diff: Optional[Tuple[str, str]] = typer.Option(
        None, "--diff", metavar="OLD NEW", help="Changelog between two releases: flags, defaults, choices, matrix.",
        show_default=False,
    ),
    flag: Optional[str] = typer.Option(None, "--flag", metavar="FLAG", help="History of one flag across releases.", show_default=False),
    list_releases: bool = typer.Option(False, "--list", help="Known releases, engine generation, source commit."),
    gpu: Optional[str] = typer.Option(
        None, "--gpu", metavar="NAME", help="GPU to assume: the matrix hardware column for config checks, and the serve defaults --diff and --flag resolve (default H100 SXM5 80GB).", show_default=False
    ),
) -> None:
    fmt = (fmt or "text").lower()
    files, command_line = split_inputs(files or [])
    problem = check_usage(fmt, modes=sum(bool(x) for x in (diff, flag, list_releases)),
                          has_inputs=bool(files or command_line))
    if problem:
        raise typer.Exit(err(problem))
    if diff or flag:
        from sched_reader.cli.runners import compat_history as history

        raise typer.Exit(history.run(fmt=fmt, diff=diff, flag=flag, gpu=gpu))
    if files or command_line:
        from sched_reader.cli.runners import compat_configs as configs_runner

        raise typer.Exit(configs_runner.run(files, command_line, vllm=vllm, fmt=fmt, gpu=gpu))
    from sched_reader.cli.runners import compat_release as release

    raise typer.Exit(release.run(vllm=vllm, fmt=fmt, list_releases=list_releases))
