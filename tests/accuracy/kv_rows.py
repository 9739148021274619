"""Real vLLM start-up logs (tests/data/kv_logs.yaml) replayed through the whole pipeline.

Each row becomes the `vllm serve` command line its log states (only the flags the source shows, so
vLLM's defaults for that release and GPU come from sched-reader's own release data), then
``build_specs -> estimate_capacity``. Shared by tests/accuracy/test_kv_accuracy.py and benchmarks/kv_accuracy.py.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from sched_reader.models.capacity import estimate_capacity
from sched_reader.analyzers.pipeline import build_specs

ROWS_PATH = Path(__file__).parents[1] / "data" / "kv_logs.yaml"

# The one row whose log does not print a version: its log format (V0 "Memory profiling results:
# ... peak_torch_memory") and date (2024-12) place it in 0.6.4 (row `inferred` field).
UNSTATED_VERSION = "0.6.4"


def load_rows(path: str | Path | None = None) -> list[dict]:
    return yaml.safe_load(Path(path or ROWS_PATH).read_text())


def row_argv(row: dict) -> list[str]:
    """The command line the row's source states (defaults are left to sched-reader)."""
    argv = ["vllm", "serve", row["model"]] + (["--max-model-len", str(row["max_model_len"])] if row["max_model_len"] else []) + [
            "--gpu-memory-utilization", str(row["gpu_memory_utilization"])]
    if row["tensor_parallel_size"] and row["tensor_parallel_size"] > 1:
        argv += ["--tensor-parallel-size", str(row["tensor_parallel_size"])]
    if row["pipeline_parallel_size"] and row["pipeline_parallel_size"] > 1:
        argv += ["--pipeline-parallel-size", str(row["pipeline_parallel_size"])]
    if row["dtype"] in ("float32", "float16"):
        argv += ["--dtype", row["dtype"]]
    if row["kv_cache_dtype"] not in (None, "auto"):
        argv += ["--kv-cache-dtype", row["kv_cache_dtype"]]
    if row["block_size"] and row["block_size"] != 16:
        argv += ["--block-size", str(row["block_size"])]
    if row["enable_prefix_caching"] is False:
        argv += ["--no-enable-prefix-caching"]
    if row["max_num_batched_tokens"]:
        argv += ["--max-num-batched-tokens", str(row["max_num_batched_tokens"])]
    if row["max_num_seqs"]:
        argv += ["--max-num-seqs", str(row["max_num_seqs"])]
    # environment the source sets on the command line (e.g. VLLM_USE_V1=1 before 0.8)
    return [f"{k}={v}" for k, v in (row.get("env") or {}).items()] + argv


def row_spec(row: dict):
    [spec] = build_specs([], row_argv(row), gpu=row["gpu"], vllm=row["vllm_version"] or UNSTATED_VERSION)
    # The sampler the engine chose, where the row's log prints it ("Using FlashInfer for top-p & top-k
    # sampling." -> true; "FlashInfer is not available ..." -> false; quoted in the row).
    if row.get("flashinfer_sampler") is not None and spec.effective is not None:
        spec.effective = spec.effective.model_copy(update={"flashinfer_sampler": bool(row["flashinfer_sampler"])})
    if row.get("custom_all_reduce") is not None and spec.effective is not None:
        spec.effective = spec.effective.model_copy(update={"custom_all_reduce": bool(row["custom_all_reduce"])})
    return spec


def predict(row: dict) -> dict:
    """``estimate_capacity(...).to_json()`` for the row's deployment."""
    spec = row_spec(row)
    return estimate_capacity(spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization).to_json()
