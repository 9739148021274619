"""``compat CONFIG``: each engine's release checks; exit 1 when any finding is an error."""

from __future__ import annotations

from sched_reader.analyzers.compat_engines import check_configs
from sched_reader.cli.runners.compat_common import guarded, out
from sched_reader.errors import EXIT_FINDINGS, EXIT_OK
from sched_reader.report.compat_findings import render_engines


def run(files: list[str], command_line: list[str] | None, *, vllm: str | None, fmt: str, gpu: str | None) -> int:
    def body() -> int:
        engines = check_configs(files, command_line, vllm=vllm, gpu=gpu)
        out(render_engines(engines, fmt), fmt)
        failed = any(f.severity == "error" for e in engines for f in e["findings"])
        return EXIT_FINDINGS if failed else EXIT_OK

    return guarded(body)
