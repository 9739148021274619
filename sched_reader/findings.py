"""Findings: what a check says about an engine spec (rule id, severity, location, fix)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from sched_reader.severity import SEVERITY_RANK, Severity

__all__ = ["Finding", "SEVERITY_RANK", "Severity"]


class Finding(BaseModel):
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
        return (self.file or "", self.line or 0, self.rule, self.message)
