"""Laptop (mobile) GeForce GPUs and a few more workstation/desktop cards resolve by the names nvidia-smi prints."""

from __future__ import annotations

import pytest

from sched_reader.models.gpu_catalog import resolve_gpu


@pytest.mark.parametrize("name, gpu_id", [
    ("NVIDIA GeForce RTX 4070 Laptop GPU", "nvidia-rtx-4070-laptop-8gb"),
    ("NVIDIA GeForce RTX 4090 Laptop GPU", "nvidia-rtx-4090-laptop-16gb"),
    ("NVIDIA GeForce RTX 3080 Ti Laptop GPU", "nvidia-rtx-3080-ti-laptop-16gb"),
    ("NVIDIA GeForce RTX 4070", "nvidia-rtx-4070-12gb"),        # the desktop card is not taken for a laptop
    ("NVIDIA GeForce RTX 3070", "nvidia-rtx-3070-8gb"),
    ("NVIDIA RTX A4500", "nvidia-rtx-a4500-20gb"),
    ("NVIDIA A2", "nvidia-a2-16gb"),
    ("Quadro RTX 6000", "nvidia-quadro-rtx-6000-24gb"),
    ("NVIDIA GeForce RTX 2080", "nvidia-rtx-2080-8gb"),
])
def test_laptop_names(name, gpu_id):
    r = resolve_gpu(name)
    assert r.gpu.id == gpu_id and not r.guessed


def test_rtx_4070_laptop_total_from_a_vllm_log():
    # vLLM 0.8.x log on an RTX 4070 Laptop: "total_gpu_memory (7.65GiB) x gpu_memory_utilization (0.90) = 6.89GiB"
    g = resolve_gpu("RTX 4070 Laptop").gpu
    assert g.cuda_total_gib == pytest.approx(7.65) and not g.cuda_total_inferred
    assert round(g.cuda_total_gib * 0.90, 2) == 6.89
