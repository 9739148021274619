"""The lint output formats, each a module of its own behind one interface, looked up by name.

    LINT_FORMATTERS["sarif"].render(report) -> str      # report: analyzers.lint.LintReport
    lint_formatter(name) -> Formatter                    # KeyError for an unknown name

A ``Formatter`` is a name, a one-line description and ``render(report) -> str``: a pure function of the
report (same run, same bytes). Adding a format is one module with a ``render_*`` function plus one entry
here; ``sched-reader lint --format`` lists the names (``cli/cmd_lint.py`` adds ``auto``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from sched_reader import __version__
from sched_reader.analyzers.lint import LintReport
from sched_reader.report.findings_text import render_json, render_text
from sched_reader.report.github import render_github
from sched_reader.report.junit import render_junit
from sched_reader.report.sarif import render_sarif


@dataclass(frozen=True)
class Formatter:
    """One output format of a lint run."""

    name: str
    description: str
    render: Callable[[LintReport], str]


LINT_FORMATTERS: dict[str, Formatter] = {f.name: f for f in (
    Formatter("text", "one line per finding, its fix below, a summary line", render_text),
    Formatter("json", "versioned JSON document (schema_version 1)", lambda r: render_json(r, __version__)),
    Formatter("sarif", "SARIF 2.1.0 for code scanning", lambda r: render_sarif(r, __version__)),
    Formatter("github", "GitHub Actions workflow annotations", render_github),
    Formatter("junit", "JUnit XML, one test case per engine", render_junit),
)}


def lint_formatter(name: str) -> Formatter:
    """The formatter called ``name``."""
    return LINT_FORMATTERS[name]
