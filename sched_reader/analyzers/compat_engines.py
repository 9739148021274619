"""``sched-reader compat CONFIG``: the release checks of each engine against one vLLM release.

The engine is checked flag by flag as written (``compat_checks.check_raw``), then through the same
pipeline as every other command (``pipeline.build_spec``); when no full spec can be built, the start-up
rules and the feature matrix run on the explicit values. A release named by ``--vllm`` that differs from
the image tag adds SR107 (defaults that changed between the two).
"""

from __future__ import annotations

from typing import Any

from sched_reader.analyzers import compat_checks as checks
from sched_reader.analyzers.pipeline import build_spec
from sched_reader.compat.defaults import release_facts
from sched_reader.compat.releases import newest, resolve_version
from sched_reader.errors import SchedReaderError
from sched_reader.findings import Finding
from sched_reader.models.engine_spec import EngineSpec
from sched_reader.models.spec_builder import read_engines
from sched_reader.origin import Origin
from sched_reader.readers.raw import RawEngine


def resolve(text: str) -> tuple[str, str | None]:
    """(release, warning) for a version as written; raises UnknownVersionError."""
    res = resolve_version(text)
    return res.release, res.warning


def read_raws(files: list[str], command_line: list[str] | None) -> list[RawEngine]:
    """Raw engines from files and/or a command line (the spec builder's reader entry point)."""
    return read_engines(files, command_line)


def check_engine(raw: RawEngine, *, vllm: str | None, gpu: str | None) -> dict[str, Any]:
    """All compat findings for one raw engine (flag level + full spec when it can be built)."""
    findings: list[Finding] = []
    engine_origin = Origin(file=raw.file, line=raw.line, source="inferred")
    hint = raw.vllm_version
    written_for = None
    if hint is not None:
        try:
            written_for, hint_warning = resolve(str(hint.value))
        except SchedReaderError:
            written_for, hint_warning = None, f"cannot read the vLLM version {hint.value!r}"
        if hint_warning and not vllm:
            findings.append(Finding(rule="SR110", severity="warning", message=hint_warning,
                                    file=hint.origin.file, line=hint.origin.line, key=hint.origin.key,
                                    fix="pin an exact released version (vllm/vllm-openai:vX.Y.Z)"))
    if vllm:
        target, warning = resolve(vllm)
        if warning:
            findings.append(Finding(rule="SR110", severity="warning", message=warning, file=raw.file,
                                    line=raw.line, fix="pass an exact release to --vllm"))
    elif written_for is not None:
        target = written_for
    else:
        target = newest()
        findings.append(Finding(rule="SR110", severity="info",
                                message=f"no vLLM version stated; checked against the newest known release {target}",
                                file=raw.file, line=raw.line,
                                fix="pin the image tag (vllm/vllm-openai:vX.Y.Z) or pass --vllm X.Y.Z"))
    raw_findings = checks.check_raw(raw, target)
    findings.extend(raw_findings)
    explicit, origins = checks.explicit_values(raw, target)
    spec, spec_findings = _spec(raw, target, gpu, raw_findings)
    if written_for is not None and vllm and written_for != target:
        where = hint.origin if hint is not None else engine_origin
        kw: dict[str, Any] = {}
        if spec is not None and spec.effective is not None:
            kw = {"gpu_name": spec.hardware.gpu.name, "gpu_total_gib": spec.hardware.gpu.cuda_total_gib,
                  "max_model_len": spec.effective.max_model_len, "gpu_assumed": spec.hardware.gpu_inferred}
        findings.extend(checks.check_default_changes(written_for, target, explicit, where, **kw))
    if spec is None:  # no full spec: start-up rules and matrix on the explicit values
        values = checks.values_from_explicit(target, explicit, engine=release_facts(target).engine.lower())
        findings.extend(checks.check_values(values, target, origins=origins, fallback=engine_origin))
    else:
        taken = {(f.rule, f.file, f.line) for f in raw_findings}
        findings.extend(f for f in spec_findings if (f.rule, f.file, f.line) not in taken)
    return {
        "name": raw.name,
        "file": raw.file,
        "line": raw.line,
        "vllm_version": target,
        "findings": checks.sort_findings(findings),
    }


def _spec(raw: RawEngine, target: str, gpu: str | None, raw_findings: list[Finding]) -> tuple[EngineSpec | None, list[Finding]]:
    """The full engine spec and its findings (the pipeline runs the release checks), or (None, [])."""
    try:
        spec = build_spec(raw, gpu=gpu, vllm=target, strict_model=False)
    except SchedReaderError:
        if any(f.severity == "error" for f in raw_findings):
            return None, []  # the flag-level findings already say what is wrong with this engine
        raise
    return spec, list(spec.findings)


def check_configs(files: list[str], command_line: list[str] | None, *, vllm: str | None,
                  gpu: str | None = None) -> list[dict[str, Any]]:
    if vllm:
        resolve(vllm)  # an unreadable --vllm is a usage error (exit 2) before any file is read
    return [check_engine(r, vllm=vllm, gpu=gpu) for r in read_raws(files, command_line)]
