"""Lesson exercise 4: contiguous per-request KV reservation vs paged blocks."""

from __future__ import annotations

import numpy as np

from sched_reader.models.block_accounting import block_accounting, sample_lengths


def test_deterministic_for_a_seed():
    a = block_accounting(seed=7)
    b = block_accounting(seed=7)
    assert a == b
    assert block_accounting(seed=8).mean_len != a.mean_len


def test_contiguous_waste_is_about_82_percent():
    # lesson: reserving 8192 slots for requests averaging ~1500 tokens wastes ~1 - 1500/8192 = 81.7%
    r = block_accounting(n_requests=1000, output_mean=1500, output_sd=600, seed=0)
    assert abs(r.mean_len - 1500) < 60                 # 1000 samples, sd 600: se ~19
    assert abs(r.contiguous.waste_fraction - (1 - r.mean_len / 8192)) < 1e-12
    assert 0.80 < r.contiguous.waste_fraction < 0.83


def test_paged_waste_is_under_one_block_per_request():
    r = block_accounting(n_requests=1000, output_mean=1500, output_sd=600, block_size=16, seed=0)
    # at most 15 unused slots per request, ~7.5 on average -> ~0.5% of ~1500
    slack = r.paged.reserved_tokens - r.paged.used_tokens
    assert 0 < slack <= 15 * 1000
    assert r.paged.waste_fraction < 0.01


def test_hand_example_two_requests():
    # lengths can be pinned by sd = 0: every request 1500 tokens; 1500 = 93 x 16 + 12 -> 94 blocks
    r = block_accounting(n_requests=2, output_mean=1500, output_sd=0, block_size=16, max_model_len=8192,
                         kv_bytes_per_token=327_680, kv_budget_bytes=8192 * 10 * 327_680)
    assert r.paged.reserved_tokens == 2 * 94 * 16 == 3008
    assert r.contiguous.reserved_tokens == 2 * 8192
    assert r.contiguous.max_concurrency == 10          # 81,920 slots / 8192
    assert r.paged.max_concurrency == 81_920 // 1504  # 54 requests of 94 blocks


def test_lengths_clipped_to_model_len():
    lens = sample_lengths(10_000, 6000, 3000, 8192, seed=1)
    assert lens.min() >= 1 and lens.max() <= 8192
    assert np.issubdtype(lens.dtype, np.integer)
