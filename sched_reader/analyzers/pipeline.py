"""The one analysis path: read -> spec -> release checks -> findings.

``config``, ``diagnose``, ``simulate``, ``lint`` and ``compat CONFIG`` all build their engines here, so a
file gets the same SR1xx findings whichever command reads it; the capacity findings (SR2xx) come from
``analyzers.diagnosis.diagnose`` on the specs built here.

    build_specs(paths, command_line, gpu=, vllm=, model_config=, strict_model=) -> list[EngineSpec]
    build_spec(raw, gpu=, vllm=, model_config=, strict_model=) -> EngineSpec
    release_findings(raw, spec) -> list[Finding]     # the checks build_spec adds to a built spec
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from sched_reader.analyzers.checks import run_checks
from sched_reader.analyzers.compat_checks import check_raw, check_spec
from sched_reader.findings import Finding
from sched_reader.models import spec_builder
from sched_reader.models.engine_spec import EngineSpec
from sched_reader.readers.raw import RawEngine

__all__ = ["build_spec", "build_specs", "release_findings"]

_OWN_FILE_KEYS = ("hardware", "workload", "vllm_version")


def _own_file_key_hints(findings: list[Finding]) -> list[Finding]:
    """An unknown ``hardware:``/``workload:``/``vllm_version:`` key in a vLLM --config file is meant for
    sched-reader's own format: say how to mark the file as one instead of suggesting a vLLM flag."""
    out = []
    for f in findings:
        key = (f.key or "").lstrip("-").replace("-", "_")
        if f.rule == "SR101" and key in _OWN_FILE_KEYS:
            f = f.model_copy(update={"fix": "a sched-reader key: add `sched_reader: 1` at the top of the file "
                                            "(see sched_reader/readers/OWN_FORMAT.md)"})
        out.append(f)
    return out


def release_findings(raw: RawEngine, spec: EngineSpec) -> list[Finding]:
    """The release checks of one engine: flags as written (SR101-SR104, SR108, SR109), then the checks of
    the built spec (SR104-SR106, SR109) that do not repeat a finding already on the spec."""
    flag_level = _own_file_key_hints(check_raw(raw, spec.vllm_version))
    if spec.vllm_version_requested is None or any(
            f.rule == "SR110" and "does not name a vLLM release" in f.message for f in spec.findings):
        # the file names no release: what another release accepts is a warning, not a certain error
        flag_level = spec_builder.soften_for_assumed_release(flag_level, spec.vllm_version, raw)
    values = {(f.line, f.key) for f in flag_level if f.rule in ("SR102", "SR103")}
    spec.findings = [f for f in spec.findings if f.rule != "SR103" or (f.line, f.key) not in values]
    existing = {(f.rule, f.line, f.key) for f in [*flag_level, *spec.findings]}
    engine_level = [f for f in check_spec(spec) if (f.rule, f.line, f.key) not in existing]
    return flag_level + engine_level + run_checks(spec)


def build_spec(
    raw: RawEngine,
    *,
    gpu: str | None = None,
    vllm: str | None = None,
    model_config: str | None = None,
    strict_model: bool = True,
    model: str | None = None,
) -> EngineSpec:
    """One raw engine -> ``EngineSpec`` with its building and release-check findings (sorted)."""
    spec = spec_builder.build_spec(raw, gpu=gpu, vllm=vllm, model_config=model_config, strict_model=strict_model,
                                   model=model)
    checked = release_findings(raw, spec)  # first: it drops spec findings that repeat its own
    spec.findings = sorted([*spec.findings, *checked], key=lambda f: f.sort_key())
    return spec


def build_specs(
    paths: Iterable[str | Path],
    command_line: list[str] | None = None,
    *,
    gpu: str | None = None,
    vllm: str | None = None,
    model_config: str | None = None,
    strict_model: bool = True,
    model: str | None = None,
    usage_context: str | None = None,
) -> list[EngineSpec]:
    """Read files and/or a command line; one checked ``EngineSpec`` per engine found. ``usage_context``
    ("LLM_CLASS" for an offline run) replaces each engine's own."""
    raws = spec_builder.read_engines(paths, command_line, usage_context)
    specs = [build_spec(r, gpu=gpu, vllm=vllm, model_config=model_config, strict_model=strict_model, model=model)
             for r in raws]
    spec_builder.note_shared_gpus(specs)
    return specs


# rules whose error means vLLM stops at start-up (raise/assert in its engine set-up or model construction)
STARTUP_RULES = ("SR106", "SR118")


def startup_refusal(spec: EngineSpec) -> str | None:
    """The first start-up rule error of a built ``spec`` as "message (RULE; fix: ...)", or None."""
    for f in sorted(spec.findings, key=lambda f: f.sort_key()):
        if f.severity == "error" and f.rule.split(".")[0] in STARTUP_RULES:
            msg = f.message.removeprefix("vLLM will not start: ")  # the caller's line says it already
            return f"{msg} ({f.rule}" + (f"; fix: {f.fix})" if f.fix else ")")
    return None
