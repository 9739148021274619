"""Findings: what a check says about an engine spec (rule id, severity, location, fix)."""

from typing import Iterable

from pydantic import ConfigDict

from sched_reader.data_model import DataModel
from sched_reader.severity import SEVERITY_RANK, Severity, at_or_above

__all__ = ["Finding", "SEVERITY_RANK", "Severity", "finding_order", "is_failing", "sort_unique"]


class Finding(DataModel):
    """One diagnostic. ``rule`` is a stable id such as ``SR101`` (see README "Rules")."""

    model_config = ConfigDict(frozen=True)

    rule: str
    severity: Severity
    message: str
    file: str | None = None
    line: int | None = None
    key: str | None = None
    fix: str | None = None

    def sort_key(self) -> tuple:
        return finding_order(self)


def finding_order(f: Finding) -> tuple:
    """The one deterministic order of findings: file, line, rule, key, message (no line first)."""
    return (f.file or "", f.line or 0, f.rule, f.key or "", f.message, f.severity, f.fix or "")


def sort_unique(findings: Iterable[Finding]) -> list[Finding]:
    """Sorted in ``finding_order``, exact duplicates removed."""
    return sorted(set(findings), key=finding_order)


def is_failing(f: Finding, fail_on: str) -> bool:
    """Whether ``f`` is at or above the ``--fail-on`` threshold (error | warning | info | never)."""
    return at_or_above(f.severity, fail_on)
