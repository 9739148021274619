"""``sched-reader lesson``: check the lesson's claims, print them as text or JSON."""

from __future__ import annotations

from typing import Callable

from sched_reader.analyzers.lesson_check import check_lesson
from sched_reader.report.console import make_console
from sched_reader.report.spec_json import dumps
from sched_reader.report.text_lesson import render_lesson


def run(*, gpu: str | None, vllm: str | None, only: list[str] | None, fmt: str, explain: bool,
        echo: Callable[[str], None]) -> int:
    report = check_lesson(gpu=gpu, vllm=vllm, only=only)
    if fmt == "json":
        echo(dumps(report.to_json()))
    else:
        render_lesson(make_console(), report, explain=explain)
    return 0
