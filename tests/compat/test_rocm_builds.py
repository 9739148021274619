"""AMD's dated rocm/vllm images run ROCm/vllm fork code newer than the release their tag names (compat/rocm_builds.py).

Facts pinned here were read in the fork's git history (github.com/ROCm/vllm): branch 0610_rc2 last commit 2025-06-05
(git describe v0.9.0.1+rocm-108-g71faa1880), its EngineArgs._is_v1_supported_oracle still "Non-[CUDA, TPU] ... off by
default" (V0 on ROCm); 0624_rc1 onward use is_cuda_alike() / default_v1 (vLLM PR #19440, merged 2025-06-10);
0715_rc1 last commit 2025-07-01; the unified attention causal tile skip (PR #20308, merged 2025-07-07) first in
0729_rc1 (last commit 2025-07-25); the V1 AiterFlashAttentionBackend in the fork from 2025-05-29 (ROCm/vllm #561),
upstream only from 0.10.0."""

from __future__ import annotations

import pytest

from sched_reader.analyzers.pipeline import build_specs
from sched_reader.compat import rocm_builds
from sched_reader.models.cost.rocm_paths import prefill_attention_full_tiles, prefill_attention_kernel
from sched_reader.readers.images import vllm_version_from_image


def spec_for(image: str, env: str = ""):
    import tempfile
    from pathlib import Path

    d = Path(tempfile.mkdtemp())
    p = d / "run.sh"
    p.write_text(f"docker run --device /dev/kfd --device /dev/dri {env} \\\n  {image} \\\n"
                 "  vllm serve Qwen/Qwen3-8B --max-num-seqs 128\n")
    [spec] = build_specs([p], gpu="MI300X")
    return spec


def test_dated_image_tag_keeps_its_build_date():
    assert vllm_version_from_image("rocm/vllm:rocm6.4.1_vllm_0.9.1_20250715") == "0.9.1+rocm.20250715"
    assert vllm_version_from_image("rocm/vllm-dev:rocm6.4.1_vllm_0.9.0.1_20250610") == "0.9.0.1+rocm.20250610"
    # upstream images and undated AMD tags are unchanged
    assert vllm_version_from_image("vllm/vllm-openai:v0.9.1") == "0.9.1"
    assert vllm_version_from_image("rocm/vllm:v0.10.1") == "0.10.1"


@pytest.mark.parametrize("label, expected", [
    ("0.9.1+rocm.20250715", "2025-07-01"),    # branch 0715_rc1's last commit
    ("0.9.0.1+rocm.20250610", "2025-06-05"),  # branch 0610_rc2
    ("0.10.0+rocm.20250812", "2025-08-08"),   # branch 0812_rc2
    ("0.9.1+rocm.20250702", "2025-06-18"),    # no branch read for it: 2025-07-02 minus 14 days
    ("0.9.1", ""), ("0.7.3+self.post1", ""),  # not an AMD dated build
])
def test_code_date_of_a_build(label, expected):
    assert rocm_builds.code_date(label) == expected


@pytest.mark.parametrize("image, engine", [
    ("rocm/vllm:rocm6.4.1_vllm_0.9.1_20250715", "v1"),     # fork code of 2025-07-01 has PR #19440
    ("rocm/vllm:rocm6.4.1_vllm_0.9.1_20250702", "v1"),     # at least 2025-06-18 > 2025-06-10
    ("rocm/vllm:rocm6.4.1_vllm_0.9.0.1_20250610", "v0"),   # 0610_rc2, 2025-06-05: still V0 on ROCm
    ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "v0"),     # at most 2025-05-07 is credited
    ("rocm/vllm:v0.9.1", "v0"),                             # the plain release: upstream 0.9.1's oracle
])
def test_engine_of_amd_images(image, engine):
    spec = spec_for(image)
    assert spec.effective.engine == engine
    if engine == "v1":
        why = spec.effective.reasons["engine"]
        assert "#19440" in why and "ROCm/vllm fork build of" in why


def test_explicit_v0_still_wins_over_the_fork_default():
    assert spec_for("rocm/vllm:rocm6.4.1_vllm_0.9.1_20250715", "-e VLLM_USE_V1=0").effective.engine == "v0"


def test_fork_build_has_aiter_flash_attention_before_upstream_0_10():
    on = "-e VLLM_ROCM_USE_AITER=1"
    cfg = spec_for("rocm/vllm:rocm6.4.1_vllm_0.9.1_20250715", on).effective
    kernel, why = prefill_attention_kernel(cfg)
    assert kernel == "aiter_fa" and "#561" in why
    # the same release from upstream has no V1 AITER attention backend (0.10.0 first); with VLLM_USE_V1=1 it runs
    # the Triton unified attention
    up = spec_for("rocm/vllm:v0.9.1", on + " -e VLLM_USE_V1=1").effective
    assert prefill_attention_kernel(up)[0] == "triton_fa"


def test_unified_attention_full_tiles_follow_the_fork_code_date():
    from sched_reader.models.gpu_catalog import resolve_gpu

    gpu = resolve_gpu("MI300X").gpu
    before = spec_for("rocm/vllm:rocm6.4.1_vllm_0.9.1_20250715").effective   # code 2025-07-01 < 2025-07-07
    after = spec_for("rocm/vllm:rocm6.4.1_vllm_0.9.2_20250729").effective    # code 2025-07-25
    assert before.engine == after.engine == "v1"
    assert prefill_attention_full_tiles(gpu, before) is not None
    assert prefill_attention_full_tiles(gpu, after) is None


def test_dated_nightly_tag_is_the_newest_release_built_by_then():
    # compat releases index: 0.10.0's wheel was built 2025-07-24, 0.10.1's 2025-08-18; a nightly of 2025-08-01 is
    # at least 0.10.0 (before: any moving tag was taken as the newest release known, 0.3x)
    assert rocm_builds.dated_release("nightly_main_20250801") == "0.10.0"
    assert rocm_builds.dated_release("nightly_main_20250818") == "0.10.1"
    assert rocm_builds.dated_release("vllm-ds3-staging-0217") is None
    spec = spec_for("rocm/vllm-dev:nightly_main_20250801")
    assert spec.vllm_version == "0.10.0"
    [f] = [f for f in spec.findings if f.rule == "SR110"]
    assert "dated 20250801" in f.message and "newest release built by then" in f.message
    # the reader itself knows no release: it passes undated and dated moving tags on as written
    assert vllm_version_from_image("rocm/vllm-dev:nightly_main_20250801") == "nightly_main_20250801"
    assert vllm_version_from_image("rocm/vllm:latest") == "latest"
