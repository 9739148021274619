"""AMD Instinct catalog facts and ROCm image tags given to --vllm.

Independent inputs, written out here by hand:
  AMD Instinct MI355X product page (amd.com/en/products/accelerators/instinct/mi350/mi355x.html): 7 Infinity Fabric
    links, peak Infinity Fabric link bandwidth 153.6 GB/s (bidirectional), i.e. 76.8 GB/s per direction per link; an
    8-GPU OAM platform is a fully connected mesh (one link to each of the 7 peers), as on MI300X (7 x 64 GB/s).
  AMD's rocm/vllm image tags (Docker Hub rocm/vllm): rocm6.4.1_vllm_0.9.1_20250715 (release 0.9.1, built 2025-07-15);
    the older form rocm6.3.1_instinct_vllm0.8.3_20250410 (release 0.8.3, built 2025-04-10).
"""

from __future__ import annotations

import pytest

from sched_reader.analyzers.pipeline import build_specs
from sched_reader.models.cost.collectives import allreduce_time, link_bandwidth_bytes_s
from sched_reader.models.cost.efficiency import efficiency_for
from sched_reader.models.cost.precision import resolve_precision
from sched_reader.models.gpu_catalog import resolve_gpu
from sched_reader.models.weights import weight_breakdown
from sched_reader.readers.images import version_from_option

MI300X = resolve_gpu("MI300X").gpu
MI355X = resolve_gpu("MI355X").gpu
MI350X = resolve_gpu("MI350X").gpu


@pytest.mark.parametrize("gpu", [MI355X, MI350X])
def test_cdna4_xgmi_mesh_is_seven_links_of_76_8_gb_s(gpu):
    e = efficiency_for(gpu)
    assert link_bandwidth_bytes_s(gpu, e, 8) == pytest.approx(7 * 76.8e9 * e.link_bandwidth)   # 537.6 GB/s
    assert link_bandwidth_bytes_s(gpu, e, 2) == pytest.approx(76.8e9 * e.link_bandwidth)       # one peer, one link
    assert link_bandwidth_bytes_s(gpu, e, 4) == pytest.approx(3 * 76.8e9 * e.link_bandwidth)


def test_mi355x_tp8_allreduce_is_faster_than_mi300x():
    # same mesh, links 76.8 / 64 = 1.2x faster: a 16 MiB TP8 all-reduce's traffic term shrinks by 1.2x
    n = 16 * 2**20
    e3, e4 = efficiency_for(MI300X), efficiency_for(MI355X)
    t3 = allreduce_time(n, 8, MI300X, e3) - e3.allreduce_latency_s
    t4 = allreduce_time(n, 8, MI355X, e4) - e4.allreduce_latency_s
    assert t3 / t4 == pytest.approx(76.8 / 64.0, rel=1e-9)


@pytest.mark.parametrize("text, want", [
    ("rocm/vllm:rocm6.4.1_vllm_0.9.1_20250715", "0.9.1+rocm.20250715"),
    ("rocm6.4.1_vllm_0.9.1_20250715", "0.9.1+rocm.20250715"),
    ("rocm/vllm:rocm7.0.0_vllm_0.10.2_20251006", "0.10.2+rocm.20251006"),
    ("rocm/vllm:rocm6.3.1_instinct_vllm0.8.3_20250410", "0.8.3+rocm.20250410"),
    ("vllm/vllm-openai:v0.9.2", "0.9.2"),
    ("0.10.1", "0.10.1"),
    ("latest", "latest"),
])
def test_vllm_option_reads_image_tags(text, want):
    assert version_from_option(text) == want


@pytest.mark.parametrize("tag, release, build", [
    ("rocm/vllm:rocm6.4.1_vllm_0.9.1_20250715", "0.9.1", "2025-07-01"),   # branch 0715_rc1's last commit
    ("rocm/vllm:rocm7.0.0_vllm_0.10.2_20251006", "0.10.2", "2025-09-22"),  # no branch read: tag date - 14 days
])
def test_vllm_option_with_rocm_tag_builds_the_fork_build(tag, release, build):
    [spec] = build_specs([], ["vllm", "serve", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "8"],
                         gpu="MI355X", vllm=tag)
    assert spec.vllm_version == release
    assert spec.effective.rocm_build == build
    # 0.9.1 upstream falls back to V0 on ROCm; AMD's 2025-07 image is fork code with V1 on by default
    assert spec.effective.engine == "v1"


def test_vllm_option_moving_rocm_tag_is_not_an_error():
    [spec] = build_specs([], ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"], gpu="MI300X",
                         vllm="rocm/vllm-dev:nightly_main_20250801")
    assert spec.vllm_version   # a dated build of main: the newest release built by then, with an SR110 note


# AMD Quark MXFP4 checkpoints (w_mxfp4_a_mxfp4, E2M1 weights + one E8M0 scale per 32 = 0.53125 bytes per weight):
# amd/Llama-3.3-70B-Instruct-MXFP4-Preview quantizes every linear layer but lm_head (model card: no --exclude_layers
# beyond the default lm_head); amd/DeepSeek-R1-0528-MXFP4-Preview excludes "*self_attn* *mlp.gate.* *lm_head".
def test_quark_mxfp4_dense_llama_weighs_mxfp4_in_every_linear_layer():
    [spec] = build_specs([], ["vllm", "serve", "amd/Llama-3.3-70B-Instruct-MXFP4-Preview"], gpu="MI355X", vllm="0.10.2")
    p = resolve_precision(spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization)
    assert p.weight_bytes["attn"] == p.weight_bytes["mlp"] == 0.5 + 1 / 32
    assert p.weight_bytes["lm_head"] == p.weight_bytes["embed"] == 2.0
    # w_mxfp4_a_mxfp4: AITER's FP4 GEMM on gfx950 (vLLM quark_w4a4_mxfp4.py), the 10,066.4 TFLOPS MXFP4 peak
    assert p.compute["attn"] == p.compute["mlp"] == "fp4" and p.compute["lm_head"] == "bf16"
    [mi300] = build_specs([], ["vllm", "serve", "amd/Llama-3.3-70B-Instruct-MXFP4-Preview"], gpu="MI300X", vllm="0.10.2")
    q = resolve_precision(mi300.arch, mi300.hardware.gpu, mi300.effective, mi300.checkpoint_quantization)
    assert q.compute["mlp"] == "bf16"   # no FP4 matrix cores on gfx942: vLLM emulates in 16-bit
    # Llama-3.3-70B: 80 layers x (attention 8192 x (8192 + 2 x 1024) + 8192 x 8192, MLP 3 x 8192 x 28672)
    linear = 80 * (8192 * (8192 + 2 * 1024) + 8192 * 8192 + 3 * 8192 * 28672)
    embed = 2 * 128256 * 8192   # embed_tokens + lm_head, bf16
    want_gib = (linear * 0.53125 + embed * 2) / 2**30
    wb = weight_breakdown(spec.arch, spec.effective, spec.checkpoint_quantization)
    # + norms and the rotary cache (a few hundred MB): within 1% of the hand count (was 131 GiB: all bf16)
    assert wb.bytes_per_gpu / 2**30 == pytest.approx(want_gib, rel=0.01)


def test_quark_mxfp4_moe_keeps_attention_and_gpt_oss_keeps_its_dense_layers():
    for model, attn in (("amd/DeepSeek-R1-0528-MXFP4-Preview", 2.0), ("openai/gpt-oss-120b", 2.0)):
        [spec] = build_specs([], ["vllm", "serve", model, "--tensor-parallel-size", "8"], gpu="MI355X", vllm="0.10.2")
        p = resolve_precision(spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization)
        assert p.weight_bytes["experts"] == 0.5 + 1 / 32 and p.weight_bytes["attn"] == attn, model
    [ds] = build_specs([], ["vllm", "serve", "amd/DeepSeek-R1-0528-MXFP4-Preview", "-tp", "8"], gpu="MI355X",
                       vllm="0.10.2")
    p = resolve_precision(ds.arch, ds.hardware.gpu, ds.effective, ds.checkpoint_quantization)
    assert p.weight_bytes["mlp"] == p.weight_bytes["shared"] == 0.5 + 1 / 32   # dense MLPs and shared experts too


# ROCm-docs-style deploys (AMD's dated rocm/vllm images given to --vllm, AMD Quark / FP8-KV checkpoints, TP 1 and 8):
# each reads, resolves the fork build and predicts without an input error or an unknown model / GPU
@pytest.mark.parametrize("gpu, tag, argv", [
    ("MI355X", "rocm/vllm:rocm7.0.0_vllm_0.10.2_20251006", ["meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "8"]),
    ("MI300X", "rocm/vllm:rocm6.4.1_vllm_0.10.1_20250909", ["meta-llama/Llama-3.1-8B-Instruct"]),
    ("MI325X", "rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", ["amd/Llama-3.1-405B-Instruct-FP8-KV", "-tp", "8",
                                                          "--kv-cache-dtype", "fp8"]),
    ("MI355X", "rocm7.0.0_vllm_0.10.2_20251006", ["amd/Llama-3.3-70B-Instruct-MXFP4-Preview"]),
    ("MI300X", "rocm/vllm:rocm6.3.1_instinct_vllm0.8.3_20250410", ["mistralai/Mixtral-8x7B-Instruct-v0.1", "-tp", "8"]),
    ("MI355X", "rocm/vllm:rocm7.0.0_vllm_0.10.2_20251006", ["deepseek-ai/DeepSeek-R1", "-tp", "8"]),
])
def test_rocm_docs_style_configs_diagnose(run_cli, gpu, tag, argv):
    code, out, err = run_cli("diagnose", "--gpu", gpu, "--vllm", tag, "-f", "json", "--", "vllm", "serve", *argv)
    assert code in (0, 1), err
    assert '"output_throughput"' in out and "+rocm." in out and "Traceback" not in err
