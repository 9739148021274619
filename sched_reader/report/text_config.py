"""Text formatter for ``sched-reader config``: each engine, its flags with origins, what is unresolved."""

from __future__ import annotations

from typing import Any
import json
import os


from sched_reader.models.engine_spec import EngineSpec
from sched_reader.origin import Origin


def render_findings(console: Any, spec: EngineSpec) -> None:
    """Findings as `SEVERITY RULE file:line message (fix)` lines."""
    for f in spec.findings:
        loc = f"{f.file}:{f.line}" if f.file and f.line else (f.file or "")
        fix = f"  fix: {f.fix}" if f.fix else ""
        console.print(f"  {f.severity.upper():7} {f.rule} {loc} {f.message}{fix}", markup=False)


def render_engine_header(console: Any, spec: EngineSpec, verdict_line: str | None = None) -> None:
    """The engine's title line, then (``diagnose``) its one-line verdict, then model, release, hardware."""
    loc = f"{spec.file}:{spec.line}" if spec.line else spec.file
    role = f" [{spec.role}]" if spec.role else ""
    console.print(f"engine {spec.name}{role}  ({loc})", style="bold", markup=False)
    if verdict_line:
        console.print(f"  verdict      {verdict_line}", style="bold", markup=False)
    model = spec.model_name or "(none)"
    arch = f" -> {spec.arch.id}" if spec.arch and spec.arch.id.lower() != model.lower() else ""
    quant = f", checkpoint {spec.checkpoint_quantization}" if spec.checkpoint_quantization else ""
    console.print(f"  model        {model}{arch}{quant}", markup=False)
    ver = spec.vllm_version
    if spec.vllm_version_requested and spec.vllm_version_requested != ver:
        ver += f" (from {spec.vllm_version_requested!r})"
    vo = short_where(spec.vllm_version_origin, spec.file) if spec.vllm_version_origin else "not stated: sched-reader's default release"
    console.print(f"  vLLM         {ver}  [{vo}]", markup=False)
    hw = spec.hardware
    gpu_src = "assumed (nothing names a GPU)" if hw.gpu_inferred else short_where(hw.gpu_origin, spec.file)
    cnt_src = "= TP x PP x DP" if hw.count_inferred else short_where(hw.count_origin, spec.file)
    if hw.count == 0:
        console.print(f"  hardware     CPU only: no GPU requested  [{cnt_src}]", markup=False)
        return
    if not hw.modelled:
        console.print(f"  hardware     {hw.count} x {hw.accelerator} (not in the GPU catalog: no figures)  "
                      f"[accelerator: {gpu_src}; count: {cnt_src}]", markup=False)
        return
    console.print(f"  hardware     {hw.count} x {hw.gpu.name}  [gpu: {gpu_src}; count: {cnt_src}]", markup=False)


def short_where(origin: Origin | None, engine_file: str) -> str:
    """``line N`` when the value comes from the engine's own file, else ``file:line`` or its source."""
    if origin is None:
        return ""
    if origin.file == engine_file and origin.line:
        return f"line {origin.line}"
    if origin.file is None:
        return origin.where()
    path = display_path(origin.file)
    return f"{path}:{origin.line}" if origin.line else path


def display_path(path: str) -> str:
    """``path`` relative to the working directory when it lies below it (shorter, stable output)."""
    if not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def render_config(console: Any, specs: list[EngineSpec]) -> None:
    """All engines, one block each."""
    for i, spec in enumerate(specs):
        if i:
            console.print()
        render_engine_header(console, spec)
        if spec.args:
            rows = [("flag", "value", "origin")]
            for dest, fv in sorted(spec.args.items()):
                origin = f"{short_where(fv.origin, spec.file)} ({fv.origin.source})"
                if fv.overridden:
                    origin += "; overrides " + ", ".join(short_where(o, spec.file) for o in fv.overridden)
                rows.append((fv.flag, _show(fv.value), origin))
            for line in aligned(rows):
                console.print("  " + line, markup=False)
        if spec.unresolved:
            console.print("  unresolved:", markup=False)
            for u in spec.unresolved:
                console.print(f"    {u.text}: {u.reason} [{short_where(u.origin, spec.file)}]", markup=False)
        for note in spec.notes:
            console.print(f"  note: {note}", markup=False)
        render_findings(console, spec)


def aligned(rows: list[tuple[str, ...]]) -> list[str]:
    """Rows as left-aligned columns separated by two spaces (no wrapping, no trailing spaces)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)
