"""Does a vLLM release ship a tuned Triton fused-MoE tile table for this shape and GPU?

vLLM's Triton fused-MoE path (bf16/fp16, FP8 W8A8 per-tensor and block, int8/int4 WNA16 Triton) looks up
``vllm/model_executor/layers/fused_moe/configs/E={E},N={N},device_name={dev}[,dtype=..][,block_shape=[bn,bk]].json``
(fused_moe.py ``get_config_file_name`` / ``get_moe_configs`` / ``try_get_optimal_moe_config``, 0.6.0-0.19.1
wheels). Without the file it logs "Using default MoE config. Performance might be sub-optimal!" and uses
``get_default_config``: the two-branch heuristic (``M <= E`` -> 16x32x64 tiles, else 64x64x32, GROUP 8, no
num_warps/num_stages) up to 0.16.0, the batch-aware one of vLLM PR #34846 from 0.17.0.

``data/fused_moe_tuned_configs.json`` is built by ``tools/build_fused_moe_configs.py`` from the release wheels;
this module only reads it. Shapes: ``E`` = experts on this rank (global experts / EP size), ``N`` = w2's last
dimension = moe intermediate size / TP (x2 for int4_w4a16, whose w2 is packed two values a byte).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "fused_moe_tuned_configs.json"

# Release whose get_default_config is PR #34846's batch-aware heuristic (read in the 0.16.0 and 0.17.0 wheels).
NEW_DEFAULT_FROM = (0, 17, 0, 0)
# get_config_file_name puts ",block_shape=[bn,bk]" in the name from 0.7.1; 0.7.1 alone formats it with a
# space ("[128, 128]", no .replace(" ", "")) and ships its two block-FP8 files named that way (0.7.1 wheel).
BLOCK_SHAPE_IN_NAME_FROM = (0, 7, 1, 0)
BLOCK_SHAPE_SPACED = ((0, 7, 1, 0),)


def release_key(v: str) -> tuple[int, int, int, int]:
    """``"0.10.1.1"`` -> (0, 10, 1, 1); ``"0.6.1.post2"`` -> (0, 6, 1, 0) (post releases share their base)."""
    parts = [int(p) for p in str(v).lstrip("v").split(".post")[0].split(".") if p.isdigit()][:4]
    return tuple(parts + [0] * (4 - len(parts)))  # type: ignore[return-value]


@lru_cache(maxsize=1)
def table() -> dict:
    with open(DATA, encoding="utf-8") as f:
        return json.load(f)


def config_file_name(E: int, N: int, device_name: str, dtype: str | None = None,
                     block_shape: tuple[int, int] | list[int] | None = None, release: str | None = None) -> str:
    """The file name vLLM looks for (``release`` None: the >= 0.7.2 form)."""
    name = f"E={E},N={N},device_name={device_name}"
    if dtype:
        name += f",dtype={dtype}"
    k = release_key(release) if release else None
    if block_shape and all(block_shape) and (k is None or k >= BLOCK_SHAPE_IN_NAME_FROM):
        sep = ", " if k in BLOCK_SHAPE_SPACED else ","
        name += f",block_shape=[{block_shape[0]}{sep}{block_shape[1]}]"
    return name + ".json"


def _shipped_in(file_name: str, release: str) -> bool:
    k = release_key(release)
    return any(release_key(a) <= k <= release_key(b) for a, b in table()["files"].get(file_name, []))


def ships(release: str, file_name: str) -> bool | None:
    """True/False when the release was read (or both sampled neighbours agree); None when unknown."""
    rels = table()["releases"]
    k = release_key(release)
    keys = [release_key(r) for r in rels]
    if k in keys:
        return _shipped_in(file_name, rels[keys.index(k)])
    before = [r for r, rk in zip(rels, keys) if rk < k]
    after = [r for r, rk in zip(rels, keys) if rk > k]
    if not before or not after:
        return None
    a, b = _shipped_in(file_name, before[-1]), _shipped_in(file_name, after[0])
    return a if a == b else None


def vllm_device_name(gpu_name: str, release: str | None = None) -> str | None:
    """Catalog GPU name -> the device_name token in vLLM's config file names (None if not mapped).

    From 0.11.1 any device whose name has an ``H200`` token (H200 NVL, ...) looks up ``NVIDIA_H200`` files.
    """
    entry = table()["catalog_device_names"].get(gpu_name)
    if entry is None:
        return None
    token = entry["device_name"]
    if release is not None and "H200" in token.split("_"):
        facts = table()["source_facts"]
        folds = [r for r, f in facts.items() if f.get("h200_family_folds_to_NVIDIA_H200")]
        if folds and release_key(release) >= min(release_key(r) for r in folds):
            token = "NVIDIA_H200"
    return token


def default_config_kind(release: str) -> str:
    """``"two_branch_M_le_E"`` (<= 0.16.x) or ``"batch_aware_pr34846"`` (>= 0.17.0)."""
    return "batch_aware_pr34846" if release_key(release) >= NEW_DEFAULT_FROM else "two_branch_M_le_E"
