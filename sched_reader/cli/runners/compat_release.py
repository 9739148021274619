"""``compat --list`` and ``compat --vllm X``: known releases and a release's feature matrix."""

from __future__ import annotations

from sched_reader.cli.runners.compat_common import err, guarded, out
from sched_reader.errors import EXIT_OK
from sched_reader.report.compat_views import render_list, render_matrix


def run(*, vllm: str | None, fmt: str, list_releases: bool) -> int:
    def body() -> int:
        if list_releases:
            out(render_list(fmt), fmt)
            return EXIT_OK
        if not vllm:
            return err("give --vllm X (feature matrix), config files to check, --diff, --flag or --list "
                       "(see `sched-reader compat --help`)")
        out(render_matrix(vllm, fmt), fmt)
        return EXIT_OK

    return guarded(body)
