"""GPU catalog: load ``models/data/gpus.yaml`` and resolve a GPU name written in a deploy file.

Accepted name forms (matching ignores case, spaces, dashes, underscores and punctuation):
catalog ids (``nvidia-h100-sxm5-80gb``), short names (``H100``, ``h100-sxm``, ``A100-40GB``),
nvidia-smi / torch device names (``NVIDIA H100 80GB HBM3``, ``NVIDIA A100-SXM4-80GB``),
spec-sheet names (``NVIDIA H200 SXM 141GB``), Kubernetes GPU-feature-discovery product labels
(``NVIDIA-H100-80GB-HBM3``, ``Tesla-V100-SXM2-16GB``) and KubeAI resource profiles
(``nvidia-gpu-h100:8``; the ``:count`` suffix is ignored).

A short name that fits several SKUs (``H100``, ``A100``) resolves to the most common SKU with
``guessed=True`` and a note naming the alternatives. Memory is in bytes (``GPU.memory_bytes`` =
nvidia-smi MiB x 2^20; ``GPU.cuda_total_bytes`` = the total vLLM logs).

The YAML is read on first use and cached, so importing this module costs nothing.
"""

import difflib
import re
from functools import lru_cache
from typing import Any

from pydantic import ConfigDict

from sched_reader.data_model import DataModel
from sched_reader.errors import UnknownGPUError
from sched_reader.models.gpu import GPU
from sched_reader.models.data_files import load
from sched_reader.models import gpu_spec

DEFAULT_GPU_ID = "nvidia-h100-sxm5-80gb"

_MIB = 2**20
_GIB = 2**30

# Vendor / product-line words that carry no SKU information (stripped from the front of a name).
_PREFIXES = ("nvidia", "tesla", "geforce", "amd", "instinct", "intel", "gpu")
_PARENTHESES = re.compile(r"\([^)]*\)")
_COUNT_SUFFIX = re.compile(r":\s*\d+\s*$")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
# Memory-technology suffixes that some spellings add and others omit.
_MEMORY_SUFFIXES = ("hbm3e", "hbm3", "hbm2e", "hbm2", "gddr6x", "gddr6", "gddr7")


class GPUResolution(DataModel):
    """The result of resolving a GPU name.

    ``guessed`` is True when the name fits several SKUs and the most common one was chosen;
    ``note`` then says which one and what the alternatives are.
    """

    model_config = ConfigDict(frozen=True)

    gpu: GPU
    guessed: bool = False
    note: str | None = None


def normalize_gpu_name(name: str) -> str:
    """Reduce a GPU spelling to a lookup key: lower case, no punctuation, no vendor words.

    ``"NVIDIA-H100-80GB-HBM3"`` -> ``"h10080gbhbm3"``; ``"nvidia-gpu-h100:8"`` -> ``"h100"``;
    ``"NVIDIA H100 SXM 80GB (DGX H100)"`` -> ``"h100sxm80gb"``.
    """
    s = name.strip().lower()
    if "(" in s:
        s = _PARENTHESES.sub(" ", s)        # "(DGX H100)"
    if ":" in s:
        s = _COUNT_SUFFIX.sub("", s)        # KubeAI "nvidia-gpu-h100:8"
    s = _NOT_ALNUM.sub("", s)
    # strip vendor words while one leads (no word is the start of another, so the order does not matter)
    while s.startswith(_PREFIXES):
        p = next(p for p in _PREFIXES if s.startswith(p))
        if len(s) == len(p):
            break
        s = s[len(p):]
    return s


def _strip_memory_suffix(key: str) -> str:
    for suf in _MEMORY_SUFFIXES:
        if key.endswith(suf) and len(key) > len(suf):
            return key[: -len(suf)]
    return key


def _build_gpu(row: dict[str, Any]) -> GPU:
    if row.get("smi_total_mib"):
        memory_bytes = int(row["smi_total_mib"]) * _MIB
    else:
        memory_bytes = int(round(float(row["memory_gib"]) * _GIB))
    if row["cuda_total_gib"] == "device":   # nothing known: the whole device
        cuda_total_bytes = memory_bytes
    else:
        # Logs print the total rounded to 0.01 GiB; it can never exceed the device memory.
        cuda_total_bytes = min(int(round(float(row["cuda_total_gib"]) * _GIB)), memory_bytes)
    return GPU(
        id=row["id"],
        vendor=row["vendor"],
        name=row["name"],
        arch=row["arch"],
        aliases=list(row.get("aliases") or []),
        memory_bytes=memory_bytes,
        cuda_total_bytes=cuda_total_bytes,
        cuda_total_inferred=bool(row.get("cuda_total_inferred", True)),
        hbm_bandwidth_tb_s=float(row["hbm_bandwidth_tb_s"]),
        tflops=dict(row["tflops"]),
        interconnect=row["interconnect"],
        link_unidir_gb_s=row.get("link_unidir_gb_s"),
        pcie_unidir_gb_s=row.get("pcie_unidir_gb_s"),
        sm_count=row.get("sm_count"),
        compute_capability=row.get("compute_capability"),
        source_url=row["source_url"],
        form_factor=row.get("form_factor"),
        memory_type=row.get("memory_type"),
        tdp_w=row.get("tdp_w"),
        smi_names=list(row.get("smi_names") or []),
        cuda_total_source=row.get("cuda_total_source"),
        tflops_estimated=bool(row.get("tflops_estimated", False)),
        notes=row.get("notes"),
    )


class _LazyGPUs(dict):
    """gpu id -> ``GPU``, each built from its catalog row on first access (a command uses one or two of the
    ~90 entries; building them all cost ~10 ms of every start-up)."""

    def __init__(self, rows: dict[str, dict[str, Any]]) -> None:
        super().__init__()
        self.rows = rows

    def __missing__(self, gpu_id: str) -> GPU:
        gpu = self[gpu_id] = _build_gpu(self.rows[gpu_id])
        return gpu

    def __contains__(self, gpu_id: object) -> bool:
        return gpu_id in self.rows

    def get(self, gpu_id: str, default: Any = None) -> Any:  # type: ignore[override]
        return self[gpu_id] if gpu_id in self.rows else default


class _Catalog:
    """Parsed catalog plus the lookup indexes (names are indexed from the rows; ``GPU`` objects are built
    when asked for)."""

    def __init__(self, data: dict[str, Any]) -> None:
        rows = {r["id"]: r for r in data["gpus"]}
        self.by_id: _LazyGPUs = _LazyGPUs(rows)
        self.keys: dict[str, str] = {}          # normalized name -> gpu id
        self.display: dict[str, str] = {}       # normalized name -> a readable spelling
        for gid, r in rows.items():
            for spelling in [gid, r["name"], *(r.get("aliases") or []), *(r.get("smi_names") or [])]:
                self._add(normalize_gpu_name(str(spelling)), gid, str(spelling))
        # Ambiguous short names: key -> (default id, note)
        self.ambiguous: dict[str, tuple[str, str]] = {}
        for entry in data.get("ambiguous", []):
            default = entry["default"]
            if default not in self.by_id:
                raise ValueError(f"gpus.yaml: ambiguous default {default!r} is not a catalog id")
            for spelling in entry["names"]:
                key = normalize_gpu_name(str(spelling))
                if key in self.keys:
                    raise ValueError(f"gpus.yaml: ambiguous name {spelling!r} is also an exact name")
                self.ambiguous[key] = (default, entry["note"])
                self.display.setdefault(key, str(spelling))

    @property
    def gpus(self) -> list[GPU]:
        """Every GPU, in catalog order (builds them all)."""
        return [self.by_id[gid] for gid in self.by_id.rows]

    def _add(self, key: str, gpu_id: str, spelling: str) -> None:
        if not key:
            return
        other = self.keys.get(key)
        if other is not None and other != gpu_id:
            raise ValueError(f"gpus.yaml: name {spelling!r} matches both {other} and {gpu_id}")
        self.keys[key] = gpu_id
        self.display.setdefault(key, spelling)


@lru_cache(maxsize=1)
def _catalog() -> _Catalog:
    return _Catalog(load("gpus"))


def list_gpus() -> list[GPU]:
    """Every GPU in the catalog, in catalog order."""
    return list(_catalog().gpus)


def get_gpu(gpu_id: str) -> GPU:
    """The GPU with catalog id ``gpu_id`` (exact); raises UnknownGPUError otherwise."""
    gpu = _catalog().by_id.get(gpu_id)
    if gpu is None:
        raise UnknownGPUError(f"unknown GPU id {gpu_id!r}", key="gpu", hint=_hint(gpu_id))
    return gpu


def default_gpu() -> GPU:
    """The GPU assumed when a deploy file names none: H100 SXM5 80GB."""
    return _catalog().by_id[DEFAULT_GPU_ID]


def nearest_gpu_names(name: str, n: int = 3) -> list[str]:
    """Up to ``n`` known GPUs closest to ``name``, as ``"<name> (<id>)"``, closest first."""
    cat = _catalog()
    key = normalize_gpu_name(name) if isinstance(name, str) else ""
    scored: list[tuple[float, str]] = []
    for k, gid in list(cat.keys.items()) + [(k, v[0]) for k, v in cat.ambiguous.items()]:
        ratio = difflib.SequenceMatcher(None, key, k).ratio()
        if key and (k.startswith(key) or key.startswith(k)):
            ratio += 0.5  # a prefix match ("h1" -> "h100...") beats an edit-distance neighbour
        scored.append((ratio, gid))
    scored.sort(key=lambda t: (-t[0], t[1]))
    out: list[str] = []
    for _, gid in scored:
        g = cat.by_id[gid]
        label = f"{g.name} ({g.id})"
        if label not in out:
            out.append(label)
        if len(out) == n:
            break
    return out


def _hint(name: str) -> str:
    return "nearest known GPUs: " + ", ".join(nearest_gpu_names(name))


def resolve_gpu(name: str) -> GPUResolution:
    """Resolve a GPU spelling (see module docstring) to a catalog GPU.

    Raises UnknownGPUError (exit code 2) naming the 3 nearest known GPUs when nothing matches.
    """
    if not isinstance(name, str) or not name.strip():
        raise UnknownGPUError(f"GPU name is empty or not a string: {name!r}", key="gpu", hint=_hint(""))
    if gpu_spec.is_gpu_file(name):
        gpu, assumed = gpu_spec.load_gpu_file(name)
        if not assumed:
            return GPUResolution(gpu=gpu)
        return GPUResolution(gpu=gpu, guessed=True,
                             note=f"GPU {gpu.name} from {name.strip()}; assumed: {'; '.join(assumed)}")
    res = _catalog_resolution(name)
    if res is not None:
        return res
    mem = gpu_spec.memory_from_name(name)
    if mem is not None:
        gpu, assumed = gpu_spec.synthesize(name.strip(), mem, source=f"GPU name {name.strip()!r}", nominal=True)
        return GPUResolution(gpu=gpu, guessed=True, note=(
            f"unknown GPU {name.strip()!r}: {mem / _GIB:.0f} GiB from its name; assumed: {'; '.join(assumed)} "
            f"(pass --gpu-spec FILE to be exact)"))
    raise UnknownGPUError(f"unknown GPU {name.strip()!r}", key="gpu",
                          hint=_hint(name) + "; or name its memory, e.g. --gpu 'NAME 48GB', or pass --gpu-spec FILE: "
                          "YAML with memory_gib, hbm_bandwidth_tb_s, tflops, or the CSV that "
                          "nvidia-smi --query-gpu=name,memory.total --format=csv prints")


def _catalog_resolution(name: str) -> GPUResolution | None:
    cat = _catalog()
    key = normalize_gpu_name(name)
    for candidate in (key, _strip_memory_suffix(key)):
        gid = cat.keys.get(candidate)
        if gid is not None:
            return GPUResolution(gpu=cat.by_id[gid])
        amb = cat.ambiguous.get(candidate)
        if amb is not None:
            gid, note = amb
            return GPUResolution(gpu=cat.by_id[gid], guessed=True, note=f"{name.strip()!r}: {note}")
    return None


def try_catalog(name: str) -> GPU | None:
    """The catalog GPU a name resolves to (ambiguous names to their default), else None."""
    res = _catalog_resolution(name)
    return res.gpu if res is not None else None
