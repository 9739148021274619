"""Engine checks written as one module per rule (the newer form; the older rules are still produced by
``compat_checks``, ``models.spec_builder`` and ``diagnosis``).

A check module defines ``ID``, ``NAME``, ``SEVERITY``, ``FIX``, ``TAGS``, a docstring (first line: the
rule's one-line summary; the rest: what is checked and why, which becomes ``docs/rules.md``) and
``check(spec) -> list[Finding]``. Adding a rule is one module here, its entry in ``CHECKS`` and its
positive and negative cases in ``tests/analyzers/rule_cases.yaml``; ``rule_catalog`` registers it and
``pipeline.build_spec`` runs it.
"""

from __future__ import annotations

from types import ModuleType

from sched_reader.analyzers.checks import (sr117_max_num_seqs_clamped, sr118_heads_not_divisible_by_tp,
                                           sr119_v0_on_non_nvidia, sr120_chat_template_reparsed)
from sched_reader.findings import Finding
from sched_reader.models.engine_spec import EngineSpec

CHECKS: tuple[ModuleType, ...] = (sr117_max_num_seqs_clamped, sr118_heads_not_divisible_by_tp, sr119_v0_on_non_nvidia,
                                   sr120_chat_template_reparsed)


def run_checks(spec: EngineSpec) -> list[Finding]:
    """The findings of every check module on one built spec."""
    return [f for mod in CHECKS for f in mod.check(spec)]
