"""``compat --flag F`` and ``compat --diff OLD NEW``: one flag across releases, a release changelog."""

from __future__ import annotations

from sched_reader.cli.runners.compat_common import guarded, out
from sched_reader.errors import EXIT_OK
from sched_reader.report.compat_changes import render_flag, render_release_diff


def run(*, fmt: str, diff: tuple[str, str] | None, flag: str | None, gpu: str | None) -> int:
    def body() -> int:
        if diff:
            out(render_release_diff(diff[0], diff[1], fmt, gpu=gpu), fmt)
        else:
            out(render_flag(flag or "", fmt, gpu=gpu), fmt)
        return EXIT_OK

    return guarded(body)
