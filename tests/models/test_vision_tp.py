"""Vision towers under tensor parallelism: split over the ranks where vLLM builds them from its parallel linear
layers (Llama-4 mllama4.py, Qwen-VL, SigLIP, CLIP ...), one full copy per rank for MoonViT (plain nn.Linear)."""

from __future__ import annotations

from functools import partial

import pytest
from helpers import effective_config

from sched_reader.models.model_catalog import resolve_model
from sched_reader.models.weights import vision_tp_sharded, weight_breakdown

GIB = 2**30
cfg = partial(effective_config)


def test_llama4_scout_tp4_weights_match_the_log():
    a = resolve_model("meta-llama/Llama-4-Scout-17B-16E-Instruct").arch
    wb = weight_breakdown(a, cfg(tensor_parallel_size=4))
    vis = wb.components["vision"]
    # HF safetensors total 108,641,793,536 counts "main + vision_tower + mm_projector": the vision part is the
    # total minus the text model, 871,932,416 elements, a quarter of it per rank.
    assert vis.params_total == 108_641_793_536 - (wb.params_total - vis.params_total)
    assert vis.params_per_gpu == -(-vis.params_total // 4)
    # llm-d-planner v0.19.0 H100 TP 4 log: "Model loading took 53.12 GiB memory"
    assert wb.bytes_per_gpu / GIB == pytest.approx(53.12, abs=0.01)


def test_moonvit_is_replicated():
    a = resolve_model("moonshotai/Kimi-VL-A3B-Instruct").arch
    assert not vision_tp_sharded(a)
    one = weight_breakdown(a, cfg()).components["vision"]
    two = weight_breakdown(a, cfg(tensor_parallel_size=2)).components["vision"]
    assert two.params_per_gpu == one.params_per_gpu > 0


def test_siglip_is_sharded():
    a = resolve_model("google/gemma-3-12b-it").arch
    assert vision_tp_sharded(a)
    one = weight_breakdown(a, cfg()).components["vision"]
    two = weight_breakdown(a, cfg(tensor_parallel_size=2)).components["vision"]
    assert two.params_per_gpu == -(-one.params_per_gpu // 2)
