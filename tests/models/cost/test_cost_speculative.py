"""Speculative decoding: the expected-tokens formula by hand, and where speculation stops paying."""

from __future__ import annotations

from functools import partial

from helpers import effective_config

import pytest

from sched_reader.models.architecture import ModelArch
from sched_reader.models.cost import IterationCostModel
from sched_reader.models.cost.speculative import (
    DEFAULT_ACCEPTANCE, SpeculativeModel, expected_tokens_per_step,
)
from sched_reader.models.gpu import GPU

H100 = GPU(id="h100-test", vendor="NVIDIA", name="H100 SXM5 80GB", arch="Hopper", memory_bytes=85520809984,
           cuda_total_bytes=84_929_216_512, hbm_bandwidth_tb_s=3.35,
           tflops={"bf16": 989.5, "fp16": 989.5, "fp8": 1979.0}, interconnect="nvlink",
           link_unidir_gb_s=450.0, source_url="test")
LLAMA8 = ModelArch(id="meta-llama/Llama-3.1-8B", model_type="llama", config=dict(
    hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
    num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=False))


cfg = partial(effective_config, vllm_version="0.11.0")


@pytest.mark.parametrize("a,k,expected", [
    (0.8, 3, (1 - 0.4096) / 0.2),        # 1 + .8 + .64 + .512 = 2.952
    (0.5, 1, 1.5),                       # 1 + .5
    (0.6, 3, 1 + 0.6 + 0.36 + 0.216),    # 2.176
    (0.0, 5, 1.0),                       # nothing accepted: only the bonus token
    (1.0, 4, 5.0),                       # everything accepted: k + 1
])
def test_expected_tokens_per_step(a, k, expected):
    assert expected_tokens_per_step(a, k) == pytest.approx(expected)


def test_no_draft_tokens_means_one_token():
    assert expected_tokens_per_step(0.9, 0) == 1.0


def test_mtp_default_acceptance_is_the_deepseek_v3_figure():
    value, source = DEFAULT_ACCEPTANCE["mtp"]
    assert 0.85 <= value <= 0.90 and "2412.19437" in source
    for method in ("ngram", "eagle", "eagle3", "medusa", "mtp", "draft_model"):
        assert method in DEFAULT_ACCEPTANCE


def test_verify_with_one_token_equals_plain_decode():
    m = IterationCostModel(LLAMA8, H100, cfg())
    assert m.verify_step_time(32, 32 * 1000, 1) == pytest.approx(m.step_time(32, 32 * 1000, 0, 0.0))
    # verifying 4 tokens per sequence costs more than decoding 1, less than 4 separate decode steps
    v4 = m.verify_step_time(32, 32 * 1000, 4)
    assert m.step_time(32, 32 * 1000, 0, 0.0) < v4 < 4 * m.step_time(32, 32 * 1000, 0, 0.0)


def test_eagle_pays_at_batch1_and_stops_paying_when_compute_bound():
    # GPU physics only: the host's per-sequence step time (45 us, paid once per step whatever k) is
    # amortised over the extra tokens and would move the break-even past any batch
    from sched_reader.models.cost.efficiency import DEFAULT_EFFICIENCY

    m = IterationCostModel(LLAMA8, H100, cfg(), efficiency=DEFAULT_EFFICIENCY.with_overrides(step_cpu_per_seq_s=0.0))
    spec = SpeculativeModel(m, {"method": "eagle", "num_speculative_tokens": 3}, acceptance=0.6)
    # batch 1 is weight-bandwidth bound: verify 4 tokens ~ cost of 1 decode step; the draft is one
    # layer (1/32 of the stack) + lm_head, 3 times. Tokens/step = 2.176 -> speedup well above 1.4
    assert spec.step(1, 1000).speedup > 1.4
    # short contexts, GEMM compute-bound limit: a step costs (k+1) = 4 tokens of compute for 2.176
    # emitted tokens -> speculation must stop paying below max_num_seqs
    b = spec.breakeven_batch(100, 1024)
    assert b is not None and 1 < b < 1024
    assert spec.step(b, 100).speedup <= 1.0
    assert spec.step(b - 1, 100).speedup > 1.0
    # long contexts: decode is bound by KV reads, which verification shares among k+1 tokens, so the
    # gain persists at large batch (attention-bound decode)
    assert spec.step(1024, 4000).speedup > 1.0


def test_ngram_draft_has_no_gpu_cost_and_unknown_draft_model_is_flagged():
    m = IterationCostModel(LLAMA8, H100, cfg())
    ng = SpeculativeModel(m, {"method": "ngram", "num_speculative_tokens": 4})
    assert ng.draft_time(8, 8000) == pytest.approx(8 * 5e-6)
    assert ng.acceptance == DEFAULT_ACCEPTANCE["ngram"][0]
    dm = SpeculativeModel(m, {"method": "draft_model", "num_speculative_tokens": 2, "model": "x"})
    assert dm.notes and "unknown" in dm.notes[0]
    small = ModelArch(id="draft", model_type="llama", config=dict(
        hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
        num_key_value_heads=8, vocab_size=128256))
    dm2 = SpeculativeModel(m, {"method": "draft_model", "num_speculative_tokens": 2}, draft_arch=small)
    # a 1B-class draft reads ~2.5 GB per step vs ~15 GB for the target: cheaper than the target step
    assert dm2.draft_time(1, 1000) < 2 * m.step_time(1, 1000, 0, 0.0) * 0.5
