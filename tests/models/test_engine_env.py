"""VLLM_USE_V1 on the command line picks the engine where a release has both (0.6.4..0.10.x), and V1 before
0.8.0 profiles the logits of every dummy token instead of a sampler (vLLM issue 13507)."""

from __future__ import annotations

import pytest

from sched_reader.analyzers.pipeline import build_specs
from sched_reader.models.capacity import estimate_capacity

CMD = "vllm serve neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8 --max-model-len 2048".split()


@pytest.mark.parametrize("prefix, release, engine, honoured", [
    (["VLLM_USE_V1=1"], "0.7.0", "v1", True),          # opt-in
    (["env", "VLLM_USE_V1=1"], "0.7.0", "v1", True),
    ([], "0.7.0", "v0", False),                        # the 0.7 default
    (["VLLM_USE_V1=0"], "0.9.2", "v0", True),          # opt-out while V0 exists
    (["VLLM_USE_V1=0"], "0.11.0", "v1", False),        # V0 removed in 0.11.0: the variable does nothing
])
def test_vllm_use_v1_prefix(prefix, release, engine, honoured):
    [spec] = build_specs([], prefix + CMD, gpu="H100", vllm=release)
    assert spec.effective.engine == engine
    assert ("VLLM_USE_V1" in spec.effective.reasons.get("engine", "")) == honoured


def test_v1_before_0_8_profiles_the_logits_of_all_tokens():
    # vLLM PR 12569's 0.7.0 V1 log: Llama-3.1-70B w8a8 on one 80 GB GPU, gmu 0.98, "# GPU blocks: 1381".
    # The profile keeps hidden states (8192 x 8192) and logits (8192 x 128,256) in bf16: 2.08 GiB.
    [spec] = build_specs([], ["VLLM_USE_V1=1"] + CMD + ["--gpu-memory-utilization", "0.98"], gpu="H100", vllm="0.7.0")
    cap = estimate_capacity(spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization)
    term = next(t for t in cap.explain if t.name == "sampler_peak")
    assert term.value == 8192 * 8192 * 2 + 8192 * 128256 * 2
    blocks = cap.to_json()["kv_cache"]["num_blocks"]
    assert abs(blocks / 1381 - 1) < 0.07            # was 907 (-34%) with a sampler that 0.7.0 does not run
