"""Write sched_reader/compat/data/attention_backends.json: vLLM's default KV block size per release,
GPU family and attention kind (MLA / sparse MLA / other), with the source lines each era was read from.

The facts below were read from each release's PyPI wheel (vllm/platforms/cuda.py and the MLA backends).
To add a release: read its cuda.py get_attn_backend_cls / check_and_update_config and the backends'
supported block sizes, add or extend an era below, and rerun:

    python tools/build_attention_backends.py --commits /path/to/shared/vllm/source_commits.json
"""
import argparse
import json
from pathlib import Path

_ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_ap.add_argument("--commits", required=True, help="source_commits.json (release -> commit, wheel)")
_args = _ap.parse_args()
OUT = Path(__file__).resolve().parents[1] / "sched_reader" / "compat" / "data" / "attention_backends.json"
sc = json.load(open(_args.commits))
def src(v, path="vllm/platforms/cuda.py"):
    c = sc[v]["commit"]
    if c:
        return f"https://github.com/vllm-project/vllm/blob/{c}/{path}"
    return f"https://pypi.org/project/vllm/{v}/ ({sc[v]['wheel']}: {path})"
K = lambda: {"rule": "keep"}
def force(n, keep_in=(), keep_multiple_of=None):
    d = {"rule": "force", "value": n}
    if keep_in: d["keep_if_in"] = list(keep_in)
    if keep_multiple_of: d["keep_if_multiple_of"] = keep_multiple_of
    return d
def B(backend, bs, explicit=None, **when):
    d = {"backend": backend, "block_size": bs, "explicit": explicit or K()}
    if when: d["when"] = when
    return d
T16 = B("TRITON_MLA", 16)
eras = []
def era(id_, first, last, rep, mech, gpus, sparse=None, quotes=(), extra_sources=()):
    e = {"id": id_, "first": first, "last": last, "mechanism": mech, "gpus": gpus,
         "source": src(rep), "source_release": rep, "quotes": list(quotes)}
    if sparse: e["sparse"] = sparse
    if extra_sources: e["extra_sources"] = [src(rep, p) for p in extra_sources]
    eras.append(e)
plain16 = {"hopper": [B("(no MLA backend; MHA path)", 16)], "blackwell": [B("(no MLA backend; MHA path)", 16)], "other": [B("(no MLA backend; MHA path)", 16)]}
era("pre_platform", "0.6.0", "0.6.4", "0.6.0", "EngineArgs --block-size default 16; no MLA attention backend (kv_lora_rank models run as MHA)", plain16,
    quotes=["args/0.6.x.json: --block-size default 16 (vllm/engine/arg_utils.py)"])
era("no_mla", "0.6.5", "0.7.0", "0.6.5", "CudaPlatform.check_and_update_config sets 16 when unset; no MLA attention backend yet", plain16,
    quotes=["if cache_config and cache_config.block_size is None:\n    cache_config.block_size = 16"])
tri = {"hopper": [T16], "blackwell": [T16], "other": [T16]}
era("triton_mla_only", "0.7.1", "0.7.3", "0.7.2", "check_and_update_config sets 16; get_attn_backend_cls always returns Triton MLA for use_mla", tri,
    quotes=["if use_mla:\n    logger.info(\"Using Triton MLA backend.\")"])
FM64 = B("FLASHMLA", 64, force(64))
era("flashmla_hopper", "0.8.0", "0.10.0", "0.8.5", "check_and_update_config forces 64 when FlashMLA is supported (Hopper, cc major 9, _flashmla_C in wheel) and VLLM_ATTENTION_BACKEND unset; other GPUs keep 16 -> Triton MLA",
    {"hopper": [FM64], "blackwell": [T16], "other": [T16]},
    quotes=["use_flashmla = (envs.VLLM_ATTENTION_BACKEND is None or envs.VLLM_ATTENTION_BACKEND == \"FLASHMLA\")",
            "if use_flashmla and is_flashmla_supported()[0] and cache_config.block_size != 64:\n    cache_config.block_size = 64",
            "is_flashmla_supported: if current_platform.get_device_capability()[0] != 9: return False, \"FlashMLA is only supported on Hopper devices.\""],
    extra_sources=["vllm/attention/ops/flashmla.py"])
CUT_EQ = B("CUTLASS_MLA", 128, force(128), cc_exact="10.0")
era("cutlass_b200", "0.10.1", "0.10.2", "0.10.2", "Default case: is_device_capability(100) (exactly 10.0) -> CUTLASS_MLA forced 128; else FlashMLA forced 64 where supported (Hopper); else 16 -> Triton MLA",
    {"hopper": [FM64], "blackwell": [CUT_EQ, T16], "other": [T16]},
    quotes=["if cls.is_device_capability(100):\n    # Blackwell => Force CutlassMLA.\n    use_cutlass_mla = True",
            "if use_cutlass_mla and cache_config.block_size != 128:\n    cache_config.block_size = 128"])
SP64_EQ = [B("FLASHMLA_SPARSE", 64, force(64))]
era("sparse_hack", "0.11.0", "0.11.0", "0.11.0", "As 0.10.x; plus sparse MLA (hf_config has index_topk) forced 64; selector returns FlashMLASparse for use_sparse",
    {"hopper": [FM64], "blackwell": [CUT_EQ, T16], "other": [T16]}, sparse={"hopper": SP64_EQ, "blackwell": SP64_EQ, "other": SP64_EQ},
    quotes=["# TODO(Chen): remove this hacky code\nif use_sparse and cache_config.block_size != 64:\n    cache_config.block_size = 64"])
FA64 = B("FLASH_ATTN_MLA (64 forced by the FlashMLA block-size rule)", 64, force(64, keep_multiple_of=64))
CUT_M = lambda **w: B("CUTLASS_MLA", 128, force(128, keep_multiple_of=128), **w)
era("priority_list_forced", "0.11.1", "0.12.0", "0.12.0", "check_and_update_config still forces the size (FlashMLA rule 64 on Hopper, size % 64; CUTLASS 128 on cc exactly 10.0, size % 128); backend then chosen by _get_backend_priorities: FLASH_ATTN_MLA first on Hopper (accepts 64), CUTLASS_MLA first on 10.x",
    {"hopper": [FA64], "blackwell": [CUT_M(cc_exact="10.0"), T16], "other": [T16]}, sparse={"hopper": SP64_EQ, "blackwell": SP64_EQ, "other": SP64_EQ},
    quotes=["if use_flashmla and is_flashmla_dense_supported()[0] and cache_config.block_size % 64 != 0:\n    cache_config.block_size = 64",
            "if use_cutlass_mla and cache_config.block_size % 128 != 0:\n    cache_config.block_size = 128",
            "_get_backend_priorities(use_mla, cc major != 10): [FLASH_ATTN_MLA, FLASHMLA, FLASHINFER_MLA, TRITON_MLA, FLASHMLA_SPARSE]"])
era("cutlass_family", "0.13.0", "0.14.1", "0.13.0", "Blackwell family (10.x) and not sparse -> CUTLASS_MLA forced 128 (% 128); Hopper FlashMLA rule forces 64 (FLASH_ATTN_MLA selected); sparse 64",
    {"hopper": [FA64], "blackwell": [CUT_M()], "other": [T16]}, sparse={"hopper": SP64_EQ, "blackwell": SP64_EQ, "other": SP64_EQ},
    quotes=["if cls.is_device_capability_family(100) and not use_sparse:\n    # Blackwell => Force CutlassMLA (unless sparse, i.e. DSv3.2).\n    use_cutlass_mla = True"])
FI64 = B("FLASHINFER_MLA", 64, force(64, keep_in=[32], keep_multiple_of=64), qk_nope_head_dim_in=[128])
era("flashinfer_blackwell_forced", "0.15.0", "0.17.1", "0.17.1", "Blackwell family, not sparse, qk_nope_head_dim == 128 -> FLASHINFER_MLA, size forced to 64 unless 32 or a multiple of 64; other Blackwell -> CUTLASS_MLA 128; Hopper FlashMLA rule forces 64 (FLASH_ATTN_MLA selected); sparse -> FlashMLASparse 64",
    {"hopper": [FA64], "blackwell": [FI64, CUT_M()], "other": [T16]}, sparse={"hopper": SP64_EQ, "blackwell": SP64_EQ, "other": SP64_EQ},
    quotes=["if cls.is_device_capability_family(100) and not use_sparse and qk_nope_head_dim == 128:\n    # Blackwell => Force FlashInfer MLA (unless sparse, i.e. DSv3.2)",
            "if use_flashinfer_mla and cache_config.block_size != 32 and cache_config.block_size % 64 != 0:\n    cache_config.block_size = 64",
            "elif is_flashmla_dense_supported()[0]:\n    # Non-Blackwell with FlashMLA support\n    use_flashmla = True"])
PATHS_PREF = ["vllm/platforms/interface.py", "vllm/v1/attention/backend.py", "vllm/v1/attention/backends/mla/flashattn_mla.py", "vllm/v1/attention/backends/mla/flashinfer_mla.py"]
def pref_gpus(qk):
    return {"hopper": [B("FLASHMLA", 64, kv_cache_dtype_fp8=True), B("FLASH_ATTN_MLA", 16)],
            "blackwell": [B("FLASHINFER_MLA", 32, qk_nope_head_dim_in=qk), B("CUTLASS_MLA", 128)],
            "other": [T16]}
SP_H = [B("FLASHMLA_SPARSE", 64)]
era("preferred_0_18", "0.18.0", "0.18.1", "0.18.0", "No forcing in check_and_update_config; Platform.update_block_size_for_backend sets the selected backend's get_preferred_block_size(16): 16 if supported else min supported size; --block-size kept if given",
    pref_gpus([64, 128]),
    sparse={"hopper": SP_H, "blackwell": [B("FLASHINFER_MLA_SPARSE", 32, num_heads_le=16), B("FLASHMLA_SPARSE", 64)], "other": SP_H},
    quotes=["if supports_block_size(default_block_size): return default_block_size\nreturn min(s.base if isinstance(s, MultipleOf) else s for s in supported_sizes)",
            "FlashAttnMLABackend: get_supported_kernel_block_sizes -> [MultipleOf(16)]; supports_compute_capability -> capability.major == 9; supported_kv_cache_dtypes auto/float16/bfloat16",
            "FlashInferMLABackend: get_supported_kernel_block_sizes -> [32, 64]; qk_nope_head_dim not in [64, 128] -> invalid (0.18)",
            "CutlassMLABackend: [128]; FlashMLABackend: [64]; TritonMLABackend: [MultipleOf(16)]"],
    extra_sources=PATHS_PREF)
SP_B19 = [B("FLASHINFER_MLA_SPARSE", 32, kv_cache_dtype_fp8=True), B("FLASHINFER_MLA_SPARSE", 32, num_heads_le=16), B("FLASHMLA_SPARSE", 64)]
era("preferred", "0.19.0", "0.32.0", "0.19.0", "As 0.18: block size = selected backend's preferred size (16 unless the backend cannot do 16); FlashInfer MLA accepts qk_nope_head_dim 64/128/192",
    pref_gpus([64, 128, 192]),
    sparse={"hopper": SP_H, "blackwell": SP_B19, "other": SP_H},
    quotes=["_get_backend_priorities(use_mla, cc major 10): [FLASHINFER_MLA, CUTLASS_MLA, FLASH_ATTN_MLA, FLASHMLA, TRITON_MLA, *sparse]",
            "_get_backend_priorities(use_mla, other): [FLASH_ATTN_MLA, FLASHMLA, FLASHINFER_MLA, TRITON_MLA, FLASHMLA_SPARSE]",
            "if qk_nope_head_dim not in [64, 128, 192]: return \"FlashInfer MLA kernel requires qk_nope_head_dim in [64, 128, 192]...\""],
    extra_sources=PATHS_PREF)
era("preferred_0_33", "0.33.0", "0.33.0", "0.33.0", "As 0.19-0.32; Blackwell sparse bf16 at <= 16 heads now prefers FLASH_ATTN_MLA_SPARSE_FA4 ([MultipleOf(64)] -> 64)",
    pref_gpus([64, 128, 192]),
    sparse={"hopper": SP_H, "blackwell": [B("FLASHINFER_MLA_SPARSE", 32, kv_cache_dtype_fp8=True), B("FLASH_ATTN_MLA_SPARSE_FA4", 64, num_heads_le=16), B("FLASHMLA_SPARSE", 64)], "other": SP_H},
    quotes=["# Prefer FA4, then FlashInfer at low head counts (FlashMLA uses padding)"],
    extra_sources=PATHS_PREF)
out = {
  "_about": "Default KV block size (tokens) vLLM uses on CUDA per release, GPU family and attention kind. Read from the PyPI wheels' Python sources (vllm/platforms/cuda.py get_attn_backend_cls / _get_backend_priorities / check_and_update_config, vllm/platforms/interface.py update_block_size_for_backend, vllm/v1/attention/backends/mla/*.py). 'source' is the release's commit from shared/vllm/source_commits.json (closest upstream commit to the wheel) or the PyPI release when none exists. A plain `vllm serve` is assumed: no VLLM_ATTENTION_BACKEND / --attention-backend, kernels shipped in the CUDA wheel (_flashmla_C, _vllm_fa3_C present in every wheel checked: 0.8.0, 0.10.2, 0.13.0, 0.17.1, 0.18.0, 0.19.0, 0.20.0, 0.24.0, 0.28.0, 0.33.0).",
  "gpu_families": {"hopper": "compute capability major 9", "blackwell": "compute capability major 10 (some eras need exactly 10.0: cc_exact)", "other": "any other CUDA GPU (8.0 Ampere, 8.9 Ada, 12.x ...)"},
  "when_keys": {"cc_exact": "compute capability string must equal this", "qk_nope_head_dim_in": "model hf_text_config.qk_nope_head_dim in list (DeepSeek-V2/V3/R1, Kimi-K2: 128)", "kv_cache_dtype_fp8": "--kv-cache-dtype fp8*", "num_heads_le": "attention heads per rank <= N"},
  "explicit_rules": {"keep": "--block-size honoured", "force": "--block-size replaced by value unless in keep_if_in or a multiple of keep_if_multiple_of"},
  "non_mla": {"block_size": 16, "note": "Non-MLA, non-hybrid models get 16 on CUDA in every release: 0.6.0-0.6.4 EngineArgs default 16; 0.6.5-0.17.1 check_and_update_config sets 16; 0.18.0+ FLASH_ATTN [MultipleOf(16)] / FLASHINFER [16, 32, 64] (Blackwell first choice) / TRITON_ATTN [MultipleOf(16)] all prefer 16. Not modelled: hybrid attention+Mamba models (HybridAttentionMambaModelConfig.verify_and_update_config raises the attention block size until attn page >= mamba page, even over --block-size; 0.11.1+), FA4 head_dim-256 kernel (FA4_HD256_PAGE_SIZE=128, 0.29.0+), SM90 FA4 fp8-KV head 512 (64, 0.33.0).",
              "source": src("0.19.0", "vllm/v1/attention/backends/flashinfer.py")},
  "eras": eras,
}
json.dump(out, open(OUT, 'w'), indent=1, sort_keys=False)
print(len(eras))
