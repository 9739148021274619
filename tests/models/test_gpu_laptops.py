"""Laptop (mobile) GeForce GPUs resolve by the names nvidia-smi prints, apart from the desktop cards."""

from __future__ import annotations

import pytest

from sched_reader.models.gpu_catalog import resolve_gpu


@pytest.mark.parametrize("name, gpu_id", [
    ("NVIDIA GeForce RTX 4070 Laptop GPU", "nvidia-rtx-4070-laptop-8gb"),
    ("NVIDIA GeForce RTX 4090 Laptop GPU", "nvidia-rtx-4090-laptop-16gb"),
    ("NVIDIA GeForce RTX 3080 Ti Laptop GPU", "nvidia-rtx-3080-ti-laptop-16gb"),
    ("NVIDIA GeForce RTX 4070", "nvidia-rtx-4070-12gb"),        # the desktop card is not taken for a laptop
])
def test_laptop_names(name, gpu_id):
    r = resolve_gpu(name)
    assert r.gpu.id == gpu_id and not r.guessed


def test_rtx_4070_laptop_total_from_a_vllm_log():
    # vLLM 0.8.x log on an RTX 4070 Laptop: "total_gpu_memory (7.65GiB) x gpu_memory_utilization (0.90) = 6.89GiB"
    g = resolve_gpu("RTX 4070 Laptop").gpu
    assert g.cuda_total_gib == pytest.approx(7.65) and not g.cuda_total_inferred
    assert round(g.cuda_total_gib * 0.90, 2) == 6.89
