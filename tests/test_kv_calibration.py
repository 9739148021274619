"""Every row of tests/data/kv_logs.yaml (real vLLM start-up logs, source URL per row): predicted KV
tokens (V1) or GPU blocks (V0) within 2% of the log, weights within 1%.

The EffectiveConfig for each row holds the values the log states, plus the vLLM defaults the row
implies when the log does not print them (documented in ``row_config``; the defaults are vLLM's own
tiers from shared facts: V1 on a >= 70 GiB non-A100 GPU: 8192 batched tokens / 1024 seqs; other
GPUs: 2048 / 256; V0 0.6.x: 256 seqs, max(max_model_len, 2048) tokens, no chunked prefill).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sched_reader.models.capacity import estimate_capacity
from sched_reader.models.engine_spec import EffectiveConfig
from sched_reader.models.gpu_catalog import resolve_gpu
from sched_reader.models.model_catalog import resolve_model

ROWS = yaml.safe_load((Path(__file__).parent / "data" / "kv_logs.yaml").read_text())

# Rows the model cannot express yet: id -> reason (xfail).
XFAIL: dict[str, str] = {}


def row_config(row: dict, total_gib: float) -> EffectiveConfig:
    v1 = row["engine_core"] == "v1"
    big = total_gib >= 70 and "a100" not in row["gpu"].lower()
    if v1:
        seqs = row["max_num_seqs"] or (1024 if big else 256)
        mbt = row["max_num_batched_tokens"] or (8192 if big else 2048)
        chunked = True
    else:
        seqs = row["max_num_seqs"] or 256
        mbt = row["max_num_batched_tokens"] or max(row["max_model_len"], 2048)
        chunked = bool(row["enable_chunked_prefill"])
    return EffectiveConfig(
        vllm_version=row["vllm_version"] or "0.6.4", engine=row["engine_core"],
        tensor_parallel_size=row["tensor_parallel_size"], pipeline_parallel_size=row["pipeline_parallel_size"],
        max_model_len=row["max_model_len"], gpu_memory_utilization=row["gpu_memory_utilization"],
        dtype=row["dtype"] or "auto", quantization=row["quantization"], kv_cache_dtype=row["kv_cache_dtype"] or "auto",
        block_size=row["block_size"] or 16, max_num_seqs=seqs, max_num_batched_tokens=mbt,
        enable_chunked_prefill=chunked, enable_prefix_caching=bool(row["enable_prefix_caching"]),
        enforce_eager=bool(row["enforce_eager"]))


def predict(row: dict):
    gpu = resolve_gpu(row["gpu"]).gpu
    res = resolve_model(row["model"])
    cfg = row_config(row, gpu.cuda_total_bytes / 2**30)
    return estimate_capacity(res.arch, gpu, cfg, res.checkpoint_quantization).to_json()


def _param(row):
    marks = [pytest.mark.xfail(reason=XFAIL[row["id"]], strict=True)] if row["id"] in XFAIL else []
    return pytest.param(row, id=row["id"][:60], marks=marks)


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_kv_tokens_or_blocks_within_2_percent(row):
    j = predict(row)
    logged = row["logged"]
    if row["engine_core"] == "v1":
        pred, real = j["kv_cache"]["tokens"], logged["kv_cache_tokens"]
    else:
        pred, real = j["kv_cache"]["num_blocks"], logged["gpu_blocks"]
    assert abs(pred / real - 1) <= 0.02, (pred, real)
    assert j["kv_cache"]["fits"] is True


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_weights_within_1_percent(row):
    j = predict(row)
    real = row["logged"]["weights_gib"]
    assert abs(j["memory"]["weights_gib"] / real - 1) <= 0.01, (j["memory"]["weights_gib"], real)


@pytest.mark.parametrize("row", [_param(r) for r in ROWS if r["logged"]["max_concurrency"]])
def test_max_concurrency_within_2_percent(row):
    j = predict(row)
    real = row["logged"]["max_concurrency"]
    assert abs(j["kv_cache"]["max_concurrency"] / real - 1) <= 0.02, (j["kv_cache"]["max_concurrency"], real)


def test_rows_carry_source_urls():
    assert len(ROWS) >= 19
    assert all(str(r["source_url"]).startswith("https://") for r in ROWS)
