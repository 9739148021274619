"""Per-family fallback fractions (models/data/fallback_efficiency.yaml, efficiency.efficiency_for).

Independent inputs, written out here by hand:
  AMD "Measuring Max-Achievable FLOPs - Part 2" (rocm.blogs.amd.com, 28 Feb 2025), hipBLASLt-bench:
    MI300X BF16 708, FP16 654, FP8 1273 TFLOPS; MI325X BF16 843, FP16 794, FP8 1519 TFLOPS.
  Max-achievable matmul, one brute-force search for every GPU (stas00/ml-engineering MAMF table): H100 SXM
    BF16 794.5 of 989, FP8 1402.6 of 1979 TFLOPS; MI300X 668.4, MI325X 784.9, MI355X 1565 TFLOPS BF16;
    Gaudi 2 418.7 of 432 BF16, 826.5 of 865 FP8; Gaudi 3 1243 / 1289.5 of a listed 1677 (BF16 / FP8).
  Vendor dense peaks: MI300X / MI325X BF16 1307.4, FP8 2614.9 TFLOPS; MI355X BF16 2516.6; HBM 5.3 TB/s (MI300X).
  AMD's MI300X system-validation BabelStream expected output: Triad 3,948,061.647 MB/s.
  The H100-anchored defaults of efficiency.py: gemm 0.60, attention 0.50, memory 0.80, KV reads 0.50.
The H100 SXM and L40S reference fractions are recomputed from NVIDIA's measured kernel tables
(kernel_efficiency.json, derived from aiconfigurator-core), not copied from the YAML.
"""

from __future__ import annotations

from functools import partial

import pytest
from helpers import effective_config

from sched_reader.models import data_files
from sched_reader.models.architecture import ModelArch
from sched_reader.models.cost import IterationCostModel
from sched_reader.models.cost.efficiency import (DEFAULT_EFFICIENCY, FAMILY_TERMS, SOURCES, efficiency_for,
                                                 sources_for)
from sched_reader.models.cost.kernels import (decode_attention_fit, efficiency_at, gemm_efficiency_curve,
                                              interp_scalar, prefill_attention_curve)
from sched_reader.models.gpu_catalog import get_gpu, resolve_gpu

cfg = partial(effective_config, vllm_version="0.11.0", max_num_seqs=256)

LLAMA8 = ModelArch(id="meta-llama/Llama-3.1-8B", model_type="llama", config=dict(
    hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
    num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=False, torch_dtype="bfloat16"))


def gpu(name: str):
    return resolve_gpu(name).gpu


# ------------------------------------------------------------------------------------------ family lookup
@pytest.mark.parametrize("name, family", [("MI300X", "cdna3"), ("MI325X", "cdna3"), ("MI355X", "cdna4"),
                                          ("L40S", "ada"), ("RTX 4090", "ada"), ("L4", "ada")])
def test_gpus_resolve_to_their_family_values(name, family):
    e = efficiency_for(gpu(name))
    assert e.family == family
    assert e is not DEFAULT_EFFICIENCY


@pytest.mark.parametrize("name", ["H100", "H200", "B200", "A100", "A10", "MI250X"])
def test_families_without_evidence_keep_the_defaults_object(name):
    # Hopper / Blackwell / Ampere (measured tables or no family entry) and CDNA2 (no measurement)
    assert efficiency_for(gpu(name)) is DEFAULT_EFFICIENCY
    assert sources_for(gpu(name)) == SOURCES


def test_geforce_ada_keeps_default_compute_but_takes_the_family_memory_terms():
    # the L40S fractions are power-limited: its measured prefill attention at a 2,048-token prompt reaches
    # 0.36 of its 362 TFLOPS peak, while an RTX 4090 runs FlashAttention-2 forward (causal, head dim 128,
    # 2k tokens) at 151.19 TFLOPS of its 165.2 catalog peak (TileLang's table, tl_doc/flash_perf.md)
    xs, ys, _ = prefill_attention_curve("L40S 48GB", 2.0)
    assert interp_scalar(11.0, xs, ys) < 0.40 < 151.19 / 165.2
    g4080, l40s = gpu("RTX 4080"), efficiency_for(gpu("L40S"))
    e = efficiency_for(g4080)   # a GeForce Ada card without a measurement of its own
    assert e.family == "ada"
    assert (e.gemm_fraction("bf16"), e.gemm_fraction("fp8"), e.attention_compute) == (0.60, 0.60, 0.50)
    assert (e.memory_bandwidth, e.kv_read_bandwidth) == (l40s.memory_bandwidth, l40s.kv_read_bandwidth)
    src = sources_for(g4080)
    assert "keep_defaults" in src["gemm_compute"] and "tl_doc/flash_perf.md" in src["attention_compute"]
    assert "ada family" in src["memory_bandwidth"]


def test_rtx4090_gemms_from_its_own_measurement_replace_keep_defaults():
    """The RTX 4090's own torch.mm measurement (zzc0721/torch-performance-test-data, four 24 GB cards: bf16
    170.06, 173.31, 162.39, 163.09 TFLOPS; fp16 165.08, 171.06, 162.35, 167.80; the table's H100 SXM bf16 789.24,
    fp16 761.84 of 989.5) replaces the GeForce keep_defaults for its GEMMs only, by the file's one rule:
    bf16 0.60 x (167.2125 / 165.2) / (789.24 / 989.5) = 0.7614, fp16 0.60 x (166.5725 / 165.2) / (761.84 / 989.5)
    = 0.7858. The L40S's power-limited fp8 fraction does not come back with it; attention keeps the default."""
    g4090 = gpu("RTX 4090")
    e = efficiency_for(g4090)
    assert e.gemm_fraction("bf16") == pytest.approx(0.7614, abs=6e-4)
    assert e.gemm_fraction("fp16") == pytest.approx(0.7858, abs=6e-4)
    assert dict(e.gemm_compute_by_dtype).get("fp8") is None     # not L40S's 0.522
    assert e.attention_compute == 0.50
    src = sources_for(g4090)
    assert "keep_defaults" not in src["gemm_compute"] and "RTX 4090" in src["gemm_compute"]
    assert "keep_defaults" in src["attention_compute"]


def test_mi325x_sku_overrides_only_its_gemm_terms():
    mi300, mi325 = efficiency_for(gpu("MI300X")), efficiency_for(gpu("MI325X"))
    assert mi325.gemm_fraction("bf16") > mi300.gemm_fraction("bf16")
    assert (mi325.memory_bandwidth, mi325.kv_read_bandwidth) == (mi300.memory_bandwidth, mi300.kv_read_bandwidth)


# ------------------------------------------------------------------------------------------ hand calculations
# the H100 SXM max-achievable matmul from the same brute-force search (stas00/ml-engineering MAMF table):
H100_MAMF_BF16 = 794.5 / 989     # 0.803
H100_MAMF_FP8 = 1402.6 / 1979    # 0.709


def test_h100_max_achievable_agrees_with_nvidias_measured_vllm_gemm():
    # cross-check of the reference: NVIDIA's aiconfigurator timing of vLLM's bf16 GEMM on H100 at AMD's MAF
    # shape (M = 4096, N x K = 4864 x 32896) reaches 0.779 of peak, within 4% of the MAMF search's 0.803
    bf16 = efficiency_at(gemm_efficiency_curve("H100 SXM5 80GB", "bf16", 4864, 32896), 4096)
    assert bf16 == pytest.approx(0.779, abs=5e-4)
    assert bf16 == pytest.approx(H100_MAMF_BF16, rel=0.04)


def test_cdna3_values_are_amds_measurements_scaled_to_the_h100_defaults():
    mi300, mi325 = efficiency_for(gpu("MI300X")), efficiency_for(gpu("MI325X"))
    # GEMM: 0.60 x (AMD max-achievable / vendor peak) / (H100's max-achievable fraction)
    assert mi300.gemm_fraction("bf16") == pytest.approx(0.60 * 708 / 1307.4 / H100_MAMF_BF16, abs=6e-4)
    assert mi300.gemm_fraction("fp16") == pytest.approx(0.60 * 654 / 1307.4 / H100_MAMF_BF16, abs=6e-4)
    assert mi300.gemm_fraction("fp8") == pytest.approx(0.60 * 1273 / 2614.9 / H100_MAMF_FP8, abs=6e-4)
    assert mi325.gemm_fraction("bf16") == pytest.approx(0.60 * 843 / 1307.4 / H100_MAMF_BF16, abs=6e-4)
    assert mi325.gemm_fraction("fp8") == pytest.approx(0.60 * 1519 / 2614.9 / H100_MAMF_FP8, abs=6e-4)
    # the same search's own MI300X figure (668.4 TFLOPS, ROCm 6.3) lands within 6% of AMD's
    assert 0.60 * 668.4 / 1307.4 / H100_MAMF_BF16 == pytest.approx(mi300.gemm_fraction("bf16"), rel=0.06)
    # a dtype without a measurement (int8) uses the family's bf16 value
    assert mi300.gemm_fraction("int8") == mi300.gemm_fraction("bf16")
    # HBM streaming: BabelStream Triad 3,948,061.647 MB/s of 5.3 TB/s
    triad = 3_948_061.647e6 / 5.3e12
    assert mi300.memory_bandwidth == pytest.approx(triad, abs=6e-4)
    # paged KV reads: the default's 0.50 scaled by the streaming ceiling (0.745 / 0.80)
    assert mi300.kv_read_bandwidth == pytest.approx(0.50 * triad / 0.80, abs=6e-4)
    # no MI300X attention measurement: the default stays
    assert mi300.attention_compute == DEFAULT_EFFICIENCY.attention_compute


def test_gaudi_gemms_are_the_same_searchs_max_achievable():
    g2, g3 = efficiency_for(gpu("Gaudi 2")), efficiency_for(gpu("Gaudi 3"))
    assert g2.gemm_fraction("bf16") == pytest.approx(0.60 * 418.7 / 432 / H100_MAMF_BF16, abs=6e-4)
    assert g2.gemm_fraction("fp8") == pytest.approx(0.60 * 826.5 / 865 / H100_MAMF_FP8, abs=6e-4)
    # Gaudi 3: the measured fraction of the measured SKU's listed 1677 TFLOPS, applied to the catalog's peak
    assert g3.gemm_fraction("bf16") == pytest.approx(0.60 * (1243 / 1677) / H100_MAMF_BF16, abs=1e-3)
    assert g3.gemm_fraction("fp8") == pytest.approx(0.60 * (1289.5 / 1677) / H100_MAMF_FP8, abs=1e-3)
    assert (g3.memory_bandwidth, g3.kv_read_bandwidth) == (0.80, 0.50)


def test_cdna4_gemm_is_mi355x_max_achievable_and_the_rest_defaults():
    e = efficiency_for(gpu("MI355X"))
    # 1565 TFLOPS measured against the catalog's 2516.6 dense BF16 peak
    assert e.gemm_fraction("bf16") == pytest.approx(0.60 * 1565 / 2516.6 / H100_MAMF_BF16, abs=6e-4)
    assert (e.memory_bandwidth, e.kv_read_bandwidth, e.attention_compute) == (0.80, 0.50, 0.50)


def test_ada_values_are_the_l40s_over_h100_measured_tables():
    ada = efficiency_for(gpu("L4"))

    def gemm(g, key, n, k, m):
        return efficiency_at(gemm_efficiency_curve(g, key, n, k), m)

    bf16 = gemm("L40S 48GB", "bf16", 4864, 32896, 4096) / gemm("H100 SXM5 80GB", "bf16", 4864, 32896, 4096)
    fp8 = gemm("L40S 48GB", "fp8", 3648, 32896, 4096) / gemm("H100 SXM5 80GB", "fp8", 3648, 32896, 4096)
    stream = gemm("L40S 48GB", "bf16", 8192, 28672, 1) / gemm("H100 SXM5 80GB", "bf16", 8192, 28672, 1)
    kv = decode_attention_fit("L40S 48GB", 2.0)[2] / decode_attention_fit("H100 SXM5 80GB", 2.0)[2]
    xs_l, ys_l, _ = prefill_attention_curve("L40S 48GB", 2.0)
    xs_h, ys_h, _ = prefill_attention_curve("H100 SXM5 80GB", 2.0)
    attn = interp_scalar(14.0, xs_l, ys_l) / interp_scalar(14.0, xs_h, ys_h)      # 16,384-token prompt
    # the YAML rounds each measured fraction to 3 digits before dividing: within 0.3% of the exact ratio
    assert ada.gemm_fraction("bf16") == pytest.approx(0.60 * bf16, rel=3e-3)
    assert ada.gemm_fraction("fp8") == pytest.approx(0.60 * fp8, rel=3e-3)
    assert ada.memory_bandwidth == pytest.approx(0.80 * stream, rel=3e-3)
    assert ada.kv_read_bandwidth == pytest.approx(0.50 * kv, rel=3e-3)
    assert ada.attention_compute == pytest.approx(0.50 * attn, rel=3e-3)


# ------------------------------------------------------------------------------------------ data hygiene
def test_every_family_value_is_a_fraction_with_its_measurement_and_source():
    fams = data_files.load("fallback_efficiency")["families"]
    assert fams
    for fam in fams.values():
        for keep in fam.get("keep_defaults") or []:
            assert set(keep["terms"]) <= set(FAMILY_TERMS) and keep["name_contains"] and keep["reason"]
            assert "http" in keep["source"]
        blocks = [fam.get("terms") or {}] + list((fam.get("skus") or {}).values())
        for terms in blocks:
            assert set(terms) <= set(FAMILY_TERMS)
            for term, entry in terms.items():
                for e in (entry.values() if term == "gemm_compute" else [entry]):
                    assert 0.0 < float(e["value"]) <= 1.0
                    assert "http" in e["source"] and e["measured"] and e["derivation"]


# ------------------------------------------------------------------------------------------ cost model use
def test_mi300x_prefill_gemm_runs_at_the_family_fraction_and_says_so():
    mi300 = get_gpu("amd-mi300x-192gb")
    m = IterationCostModel(LLAMA8, mi300, cfg())
    b = m.breakdown(0, 0, 8192, 8192 * 8192 / 2.0, 1)
    mlp = b.terms["mlp"]
    # 8192 tokens x 32 layers x 3 x 4096 x 14336 params x 2 FLOPs at 1307.4 TFLOPS x 0.405
    flops = 8192 * 32 * 3 * 4096 * 14336 * 2
    assert mlp.flops == pytest.approx(flops)
    assert mlp.peak_flops == pytest.approx(1307.4e12 * 0.405, rel=1e-6)
    assert mlp.bound == "compute"
    assert mlp.time_s == pytest.approx(flops / (1307.4e12 * 0.405), rel=1e-6)
    assert "cdna3 family" in mlp.source and "bf16 0.41" in mlp.source
    assert "kv_read_bandwidth 0.47" in m.breakdown(64, 64 * 2000, 0, 0.0).terms["attention_decode"].source
    # attention_compute has no CDNA3 family entry: prompt attention runs at the measured fraction of the kernel
    # vLLM picks (models/data/rocm_kernel_paths.yaml prefill_attention; V1 without AITER: Triton, 0.262)
    pre = b.terms["attention_prefill"].source
    assert "triton_fa 0.262" in pre and "family" not in pre


def test_h100_term_sources_do_not_mention_a_family():
    m = IterationCostModel(LLAMA8, get_gpu("nvidia-h100-sxm5-80gb"), cfg())
    b = m.breakdown(64, 64 * 2000, 0, 0.0)
    assert all("family" not in t.source for t in b.terms.values())


def test_json_efficiency_sources_cite_the_family_measurement():
    src = sources_for(get_gpu("amd-mi300x-192gb"))
    assert "rocm.blogs.amd.com" in src["gemm_compute"] and "708" in src["gemm_compute"]
    assert "BabelStream" in src["memory_bandwidth"]
    assert src["attention_compute"] == SOURCES["attention_compute"]
    assert src["step_cpu_s"] == SOURCES["step_cpu_s"]


@pytest.mark.parametrize("gpu_id, bf16_tflops, fp16_tflops, peak, family", [
    # zzc0721/torch-performance-test-data database.md: torch.mm on square random matrices, best size; RTX 5090
    # 236.03 / 224.41 TFLOPS (bf16 / fp16); two RTX 3090: bf16 76.34 and 76.68, fp16 75.64 and 75.88; catalog
    # peaks are NVIDIA's GeForce FP32-accumulate figures (209.5, 71.0)
    ("nvidia-rtx-5090-32gb", 236.03, 224.41, 209.5, "blackwell"),
    ("nvidia-rtx-3090-24gb", (76.34 + 76.68) / 2, (75.64 + 75.88) / 2, 71.0, "ampere"),
])
def test_geforce_gemm_is_its_measured_torch_mm_over_the_same_tables_h100(gpu_id, bf16_tflops, fp16_tflops,
                                                                         peak, family):
    h100_bf16, h100_fp16 = 789.24 / 989.5, 761.84 / 989.5   # the same table's "NVIDIA H100 80GB HBM3"
    g = get_gpu(gpu_id)
    e = efficiency_for(g)
    assert e.family == family
    assert g.tflops["bf16"] == g.tflops["fp16"] == peak
    assert e.gemm_fraction("bf16") == pytest.approx(0.60 * (bf16_tflops / peak) / h100_bf16, abs=1e-3)
    assert e.gemm_fraction("fp16") == pytest.approx(0.60 * (fp16_tflops / peak) / h100_fp16, abs=1e-3)
    # the modelled GEMM rate stays below what torch.mm measured on the card (a serving GEMM does not beat it)
    assert 0.5 * bf16_tflops < e.gemm_fraction("bf16") * peak < bf16_tflops
    # attention and memory terms keep the defaults
    assert (e.attention_compute, e.memory_bandwidth) == (DEFAULT_EFFICIENCY.attention_compute,
                                                         DEFAULT_EFFICIENCY.memory_bandwidth)


def test_rtx_5090_value_agrees_with_a_second_measurement():
    # main-horse.github.io/posts/5090-mm-perf: bf16 torch.matmul (16384 x 8192 x 1280) 224.3 TFLOPS on another
    # RTX 5090, against the H100 max-achievable reference (stas00 MAMF: 794.5 of 989): 0.60 x 1.071 / 0.803
    other = 0.60 * (224.3 / 209.5) / (794.5 / 989)
    assert efficiency_for(get_gpu("nvidia-rtx-5090-32gb")).gemm_fraction("bf16") == pytest.approx(other, rel=0.07)


@pytest.mark.parametrize("name", ["B200", "RTX PRO 6000", "A100", "A10", "RTX A6000"])
def test_other_blackwell_and_ampere_gpus_keep_the_defaults_object(name):
    assert efficiency_for(gpu(name)) is DEFAULT_EFFICIENCY
