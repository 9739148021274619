"""GPUs the catalog lacks: a spec file, an ``nvidia-smi`` CSV, or a name that states its memory.

Three ways to analyze an accelerator that ``gpus.yaml`` does not list (never a dead end):

* ``--gpu FILE.yaml|.json`` (alias ``--gpu-spec``): a GPU spec. Keys (all optional but memory):
  ``name``; ``memory_gib`` or ``memory_mib`` (device total as nvidia-smi prints it) and optionally
  ``cuda_total_gib`` (what ``torch.cuda.mem_get_info()`` reports, i.e. vLLM's ``total_memory``);
  ``hbm_bandwidth_tb_s`` (10^12 B/s); ``tflops`` ``{bf16, fp16, fp8, int8, fp4, tf32, fp32}`` (dense,
  10^12 FLOP/s); ``interconnect`` (nvlink | pcie | xgmi | none) and ``link_unidir_gb_s``;
  ``compute_capability``; ``like`` (a catalog GPU whose values fill what the file omits).
* ``--gpu FILE.csv``: the output of ``nvidia-smi --query-gpu=name,memory.total --format=csv`` (first GPU).
* ``--gpu 'Some GPU 48GB'``: an unknown name with a memory size in it.

Whatever is not given is taken from the catalog GPU of the same architecture class (named in the
note as an assumption). When the total PyTorch reports is not given it is estimated from the device
total with that class GPU's measured ratio (``cuda_total_inferred`` stays True).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

from sched_reader.errors import InputError, UnknownGPUError
from sched_reader.models.gpu import GPU
from sched_reader.models.data_files import parse_yaml
from sched_reader.models import gpu_catalog  # a module import: gpu_catalog.resolve_gpu calls back into this module

_MIB = 2**20
_GIB = 2**30

# Name pattern -> (architecture class, catalog GPU used for what the name does not say).
# First match wins; the template GPUs are catalog ids (gpus.yaml).
_CLASS_TEMPLATES: tuple[tuple[str, str, str], ...] = (
    (r"\bmi3\d\d|\bmi2\d\d|instinct", "cdna", "amd-mi300x-192gb"),
    (r"\brx\s*\d{4}|radeon", "rdna", "amd-rx-9070-xt-16gb"),
    (r"gaudi", "gaudi", "intel-gaudi3-128gb"),
    (r"\bgb\d{2,3}\b|\bb\d00\b", "blackwell", "nvidia-b200"),
    (r"rtx\s*pro|blackwell", "blackwell-pro", "nvidia-rtx-pro-6000-blackwell-96gb"),
    (r"rtx\s*50\d\d", "blackwell-consumer", "nvidia-rtx-5090-32gb"),
    (r"\bh\d{2,3}\b|hopper|gh200", "hopper", "nvidia-h100-pcie-80gb"),
    (r"rtx\s*40\d\d", "ada-consumer", "nvidia-rtx-4090-24gb"),
    (r"\bl\d{1,2}s?\b|ada", "ada", "nvidia-l40s-48gb"),
    (r"rtx\s*30\d\d", "ampere-consumer", "nvidia-rtx-3090-24gb"),
    (r"rtx\s*a\d{4}|\ba\d{1,2}g?\b", "ampere-workstation", "nvidia-rtx-a6000-48gb"),
    (r"\ba\d00\b|\ba800\b", "ampere", "nvidia-a100-pcie-80gb"),
    (r"\bv100|volta", "volta", "nvidia-v100-sxm2-32gb"),
    (r"\bt4\b|turing|rtx\s*20\d\d|quadro", "turing", "nvidia-t4-16gb"),
)
_DEFAULT_TEMPLATE = "nvidia-l40s-48gb"
_MEM_RE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*(gb|gib|g|mib|mb)\b", re.IGNORECASE)


def template_for(name: str) -> tuple[str, str]:
    """(architecture class, catalog id) of the catalog GPU most like ``name``."""
    low = name.lower()
    for pat, cls, gid in _CLASS_TEMPLATES:
        if re.search(pat, low):
            return cls, gid
    return "unknown", _DEFAULT_TEMPLATE


def memory_from_name(name: str) -> int | None:
    """Device memory in bytes stated in a GPU name (``'RTX 5000 Ada 32GB'`` -> 32 GiB), else None."""
    m = _MEM_RE.search(name)
    if not m:
        return None
    val, unit = float(m.group(1)), m.group(2).lower()
    b = val * (_MIB if unit in ("mib", "mb") else _GIB)
    return int(b) if b >= 1 * _GIB else None


def _template(gid: str) -> GPU:
    return gpu_catalog.get_gpu(gid)


def synthesize(name: str, memory_bytes: int, *, fields: dict[str, Any] | None = None,
               like: GPU | None = None, source: str, nominal: bool = False) -> tuple[GPU, list[str]]:
    """A GPU of ``memory_bytes`` named ``name``; other fields from ``fields``, else from ``like`` / the class
    template. Returns the GPU and the list of assumed field names.

    ``nominal``: the memory is a marketing figure from the name ("32GB"); when the class template has
    the same nominal size, its exact device and PyTorch totals are used instead.
    """
    fields = dict(fields or {})
    cls, gid = template_for(name)
    base = like or _template(gid)
    assumed: list[str] = []
    if nominal and abs(base.memory_bytes - memory_bytes) <= 0.06 * memory_bytes:
        memory_bytes = base.memory_bytes
        fields.setdefault("cuda_total_gib", base.cuda_total_bytes / _GIB)
        assumed.append(f"device and usable memory of {base.name} (same nominal size)")
    if "cuda_total_gib" in fields and fields["cuda_total_gib"] is not None:
        cuda_total = min(int(round(float(fields["cuda_total_gib"]) * _GIB)), memory_bytes)
        cuda_inferred = False
    else:
        ratio = base.cuda_total_bytes / base.memory_bytes
        cuda_total = int(memory_bytes * ratio)
        cuda_inferred = True
        assumed.append(f"usable memory {cuda_total / _GIB:.2f} GiB ({ratio:.4f} x device, as {base.name})")
    tflops = dict(base.tflops)
    if isinstance(fields.get("tflops"), dict):
        tflops.update({str(k): (None if v is None else float(v)) for k, v in fields["tflops"].items()})
    else:
        assumed.append(f"tflops of {base.name}")
    if fields.get("hbm_bandwidth_tb_s") is None:
        assumed.append(f"memory bandwidth {base.hbm_bandwidth_tb_s} TB/s of {base.name}")
    if fields.get("interconnect") is None:
        assumed.append(f"interconnect {base.interconnect} of {base.name}")
    gpu = GPU(
        id="custom-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-"),
        vendor=str(fields.get("vendor") or base.vendor),
        name=name,
        arch=str(fields.get("arch") or base.arch),
        memory_bytes=memory_bytes,
        cuda_total_bytes=cuda_total,
        cuda_total_inferred=cuda_inferred,
        hbm_bandwidth_tb_s=float(fields.get("hbm_bandwidth_tb_s") or base.hbm_bandwidth_tb_s),
        tflops=tflops,
        interconnect=str(fields.get("interconnect") or base.interconnect),
        link_unidir_gb_s=fields.get("link_unidir_gb_s", base.link_unidir_gb_s),
        pcie_unidir_gb_s=fields.get("pcie_unidir_gb_s", base.pcie_unidir_gb_s),
        sm_count=fields.get("sm_count", base.sm_count),
        compute_capability=str(fields.get("compute_capability") or base.compute_capability or "") or None,
        source_url=source,
        cuda_total_source=("given" if not cuda_inferred else f"estimated from the device total like {base.name}"),
        notes=f"not in the catalog; class {cls}, unknown fields from {base.name}",
    )
    return gpu, assumed


def _num(v: Any, key: str, file: str) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise InputError(f"{key} must be a number, got {v!r}", file=file, key=key) from None
    if not f > 0:
        raise InputError(f"{key} must be > 0, got {v!r}", file=file, key=key)
    return f


def _from_mapping(data: dict[str, Any], file: str) -> tuple[GPU, list[str]]:
    name = str(data.get("name") or Path(file).stem)
    like = None
    if data.get("like"):
        try:
            like = gpu_catalog.resolve_gpu(str(data["like"])).gpu
        except UnknownGPUError as err:
            raise InputError(f"like: {err.message}", file=file, key="like", hint=err.hint) from None
    if data.get("memory_gib") is not None:
        mem = int(_num(data["memory_gib"], "memory_gib", file) * _GIB)
    elif data.get("memory_mib") is not None:
        mem = int(_num(data["memory_mib"], "memory_mib", file) * _MIB)
    elif like is not None:
        mem = like.memory_bytes
    else:
        raise InputError("GPU spec lacks memory_gib (or memory_mib)", file=file, key="memory_gib",
                         hint="give the device memory, e.g. memory_gib: 48")
    for k in ("hbm_bandwidth_tb_s", "cuda_total_gib", "link_unidir_gb_s"):
        if data.get(k) is not None:
            _num(data[k], k, file)
    if data.get("tflops") is not None and not isinstance(data["tflops"], dict):
        raise InputError("tflops must be a mapping like {bf16: 989, fp8: 1979}", file=file, key="tflops")
    return synthesize(name, mem, fields=data, like=like, source=f"GPU spec file {file}")


def _from_smi_csv(text: str, file: str) -> tuple[GPU, list[str]]:
    """First data row of ``nvidia-smi --query-gpu=name,memory.total --format=csv``."""
    rows = [r for r in csv.reader(io.StringIO(text)) if r and any(c.strip() for c in r)]
    if len(rows) < 2:
        raise InputError("nvidia-smi CSV has no GPU row", file=file, key="gpu",
                         hint="nvidia-smi --query-gpu=name,memory.total --format=csv > gpus.csv")
    header = [h.strip().lower() for h in rows[0]]
    try:
        i_name = next(i for i, h in enumerate(header) if h.startswith("name"))
        i_mem = next(i for i, h in enumerate(header) if h.startswith("memory.total"))
    except StopIteration:
        raise InputError("nvidia-smi CSV needs the name and memory.total columns", file=file, key="gpu",
                         hint="nvidia-smi --query-gpu=name,memory.total --format=csv") from None
    row = rows[1]
    name = row[i_name].strip()
    m = re.match(r"\s*(\d+(?:\.\d+)?)\s*(mib|gib)?", row[i_mem].strip(), re.IGNORECASE)
    if not name or not m:
        raise InputError(f"cannot read the GPU row {', '.join(row)!r}", file=file, key="gpu")
    unit = (m.group(2) or ("mib" if "mib" in header[i_mem] else "gib")).lower()
    mem = int(float(m.group(1)) * (_MIB if unit == "mib" else _GIB))
    known = gpu_catalog.try_catalog(name)
    if known is not None and abs(known.memory_bytes - mem) <= 0.02 * mem:
        return known, []
    return synthesize(name, mem, like=known, source=f"nvidia-smi CSV {file}")


def load_gpu_file(path: str) -> tuple[GPU, list[str]]:
    """A GPU from a spec file (YAML/JSON) or an nvidia-smi CSV; InputError (exit 2) when unreadable."""
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read GPU spec: {exc}", file=str(p), key="gpu") from None
    if p.suffix.lower() == ".csv" or text.lstrip().lower().startswith("name,") or "memory.total" in text[:200]:
        return _from_smi_csv(text, str(p))
    try:
        data = json.loads(text) if p.suffix.lower() == ".json" else None
        if data is None:
            data = parse_yaml(text)
    except Exception as exc:  # noqa: BLE001 - any parse error becomes one line
        raise InputError(f"GPU spec is not valid YAML/JSON: {str(exc).splitlines()[0]}", file=str(p), key="gpu") from None
    if not isinstance(data, dict):
        raise InputError("GPU spec must be a mapping (name, memory_gib, ...)", file=str(p), key="gpu")
    return _from_mapping(data, str(p))


def is_gpu_file(name: str) -> bool:
    """True when ``name`` looks like a path to an existing spec / CSV file."""
    if not isinstance(name, str) or not name.strip():
        return False
    s = name.strip()
    if not (s.endswith((".yaml", ".yml", ".json", ".csv", ".txt")) or "/" in s):
        return False
    try:
        return Path(s).expanduser().is_file()
    except OSError:
        return False
