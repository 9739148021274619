"""Which kernel path vLLM runs on AMD Instinct GPUs, and its measured speed against the vendor-tuned kernel.

On ROCm, vLLM runs different kernels for the same layer depending on the release and on environment variables:
with ``VLLM_ROCM_USE_AITER=1`` (off by default upstream) block-scaled FP8 linear layers and fused MoE run
AMD's AITER CK/assembly kernels, otherwise vLLM's own Triton kernels. The family fractions of
``models/data/fallback_efficiency.yaml`` (hipBLASLt max-achievable GEMM, BabelStream) describe vendor-tuned
kernels; :func:`path_slowdown` says how many times slower the kernel vLLM actually runs is, from
``models/data/rocm_kernel_paths.yaml`` (each path with its published measurement, and the vLLM source facts
of when it is selected). GPUs of other families (every NVIDIA GPU) have no entry: factor 1, nothing changes.
Where AITER's own tuning tables time a kernel on the family's GPU, the cost model uses the measurement instead of the
fractions: fused MoE (:func:`moe_curve`, moe_measured) and dense GEMMs by tokens per step (:func:`gemm_curve`,
gemm_measured: CDNA3 block and per-tensor FP8, CDNA4 bf16, block FP8 and MXFP4), each divided by the path's slowdown when vLLM runs
the Triton kernel instead.

Units: the factor is dimensionless (kernel time on the path taken / time of the vendor-tuned kernel).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from sched_reader.compat import rocm_builds
from sched_reader.models import data_files
from sched_reader.versions import parse_version

DATA_FILE = "rocm_kernel_paths"     # models/data/rocm_kernel_paths.yaml
TRUE_WORDS = ("true", "1")   # vllm/envs.py: os.getenv(...).lower() in ("true", "1")


def _doc() -> dict:
    """rocm_kernel_paths.yaml (empty when the file is missing)."""
    try:
        return data_files.load(DATA_FILE) or {}
    except FileNotFoundError:
        return {}


def _paths(arch: str) -> list[dict]:
    fam = (_doc().get("families") or {}).get(str(arch or "").lower()) or {}
    return list(fam.get("paths") or [])


def _on(env: dict, name: str, default: bool) -> bool:
    """The boolean vLLM reads from environment variable ``name``, ``default`` when unset: vllm/envs.py parses
    these switches as ``os.getenv(name, default).lower() in ("true", "1")``, so any other value is off."""
    if name not in env:
        return default
    return str(env[name]).strip().lower() in TRUE_WORDS


def aiter_enabled(env: dict | None, switch: str | None = None) -> bool:
    """AITER on for a kernel: ``VLLM_ROCM_USE_AITER`` set true (default off in every release that has it) and
    the kernel's own switch (``VLLM_ROCM_USE_AITER_MOE``, ``_LINEAR``...; default on) not set false."""
    env = env or {}
    return _on(env, "VLLM_ROCM_USE_AITER", False) and (not switch or _on(env, switch, True))


def _runs_aiter(path: dict, release: tuple, env: dict) -> bool:
    """Whether the engine runs ``path``'s AITER kernel: the release has it (``aiter_from``) and the env turns it on."""
    return release >= parse_version(str(path.get("aiter_from") or "99.0.0")) and aiter_enabled(env, path.get("aiter_switch"))


def path_slowdown(gpu, cfg, term: str, fmt_key: str) -> tuple[float, str] | None:
    """(factor, provenance) for cost term ``term`` ("gemm" or "moe") with weights in kernel-table format
    ``fmt_key`` (``fp8_block``...) on ``gpu`` under ``cfg`` (its ``vllm_version`` and ``rocm_env``); None when
    the GPU's family has no entry for it or the engine runs the vendor-tuned (AITER) kernel."""
    if not fmt_key:
        return None
    release = parse_version(str(getattr(cfg, "vllm_version", "") or ""))
    env = getattr(cfg, "rocm_env", None) or {}
    for p in _paths(getattr(gpu, "arch", "")):
        if p.get("term") != term or not ({fmt_key, "any"} & set(p.get("formats") or [])) or "slowdown" not in p:
            continue
        if _runs_aiter(p, release, env):
            return None
        why = ("VLLM_ROCM_USE_AITER off" if release >= parse_version(str(p.get("aiter_from")))
               else f"no AITER kernel before vLLM {p.get('aiter_from')}")
        return float(p["slowdown"]), (f"{p['name']} x{float(p['slowdown']):g} ({why}; {p['kernel']}; {p['measured']}; "
                                      f"{p['source']})")
    return None


def mla_decode_occupancy(gpu, cfg, heads_per_gpu: int) -> tuple[float, str] | None:
    """(workgroups per decoding sequence / CUs, provenance) when vLLM decodes MLA attention with its Triton kernel
    on ``gpu`` (no AITER MLA in the release, or AITER off): the kernel runs batch x ceil(heads / BLOCK_H) x
    NUM_KV_SPLITS workgroups, and with fewer workgroups than compute units only that share of the GPU streams
    the latent KV cache, so its KV-read time is the roofline / min(1, batch x this value). None otherwise."""
    release = parse_version(str(getattr(cfg, "vllm_version", "") or ""))
    env = getattr(cfg, "rocm_env", None) or {}
    cus = int(getattr(gpu, "sm_count", 0) or 0)
    for p in _paths(getattr(gpu, "arch", "")):
        occ = p.get("occupancy")
        if p.get("term") != "mla_decode" or not occ or cus <= 0:
            continue
        if _runs_aiter(p, release, env):
            return None
        groups = -(-max(1, int(heads_per_gpu)) // int(occ["block_h"]))
        per_seq = groups * int(occ["kv_splits"])
        return per_seq / cus, (f"{p['name']}: {per_seq} workgroups per sequence ({groups} head group(s) of "
                               f"{occ['block_h']} x {occ['kv_splits']} KV splits) on {cus} CUs; KV reads at the "
                               f"roofline / min(1, batch x {per_seq} / {cus}) ({p['kernel']}; {p['measured']}; {p['source']})")
    return None


# vLLM releases (tuples) of the prefill-attention selection facts (models/data/rocm_kernel_paths.yaml,
# prefill_attention): the V1 AiterFlashAttentionBackend first ships in 0.10.0 (absent from 0.9.1's rocm.py).
AITER_FA_FROM = (0, 10, 0)
# From 0.12.0 vllm/platforms/rocm.py honours an explicitly selected MHA backend (VLLM_ATTENTION_BACKEND) before its
# automatic choice (0.11.0 honours only ROCM_ATTN, whose prompt kernel is Triton like the default's). ROCm's Triton
# backends run Triton prompt kernels; ROCM_AITER_UNIFIED_ATTN is AITER's own Triton kernel, which AMD and Embedded LLM
# measured within 0.95-1.05x of ROCM_AITER_FA's output throughput on MI300X/MI325X/MI355X (Qwen3-235B-FP8, ISL 10K,
# OSL 1K, 64 concurrent; vLLM blog 2025-12-16 "Beyond Porting", github.com/vllm-project/vllm-project.github.io
# _posts/2025-12-16-rocm-attention-backend.md), so it takes AITER FA's fraction.
EXPLICIT_BACKEND_FROM = (0, 12, 0)
EXPLICIT_BACKENDS = {"TRITON_ATTN": "triton_fa", "ROCM_ATTN": "triton_fa", "ROCM_AITER_FA": "aiter_fa",
                     "ROCM_AITER_UNIFIED_ATTN": "aiter_fa"}
# V0 MLA prompt attention may call vLLM's Triton FlashAttention on ROCm from 0.8.0 (mla/common.py
# _flash_attn_varlen_diff_headdims: is_hip and VLLM_USE_TRITON_FLASH_ATTN); 0.7.3's mla/utils.py has only flash_attn
MLA_TRITON_FA_FROM = (0, 8, 0)


def _prefill_doc() -> dict:
    return _doc().get("prefill_attention") or {}


def _mla_prefill_kernel(cfg, env: dict, release: tuple) -> tuple[str, str]:
    """MLA prompt attention on ROCm (vllm/attention/backends/mla/{utils,common}.py, v1/attention/backends/mla/common.py
    in the wheels): V0 0.7.x calls the ROCm flash-attn package (CK); V0 from 0.8.0 vLLM's Triton FlashAttention when
    VLLM_USE_TRITON_FLASH_ATTN is on and the chunk has no cached context (return_softmax_lse false), else CK; V1
    the flash-attn package (CK). The value head is zero-padded to the query/key head dim on every path."""
    if str(getattr(cfg, "engine", "v1")) == "v0":
        if release < MLA_TRITON_FA_FROM:
            return "ck_fa", "V0 MLA before vLLM 0.8.0: flash_attn_varlen_func of the ROCm flash-attn package (CK)"
        if _on(env, "VLLM_USE_TRITON_FLASH_ATTN", True) and not getattr(cfg, "enable_chunked_prefill", False):
            return "triton_fa", "V0 MLA, VLLM_USE_TRITON_FLASH_ATTN on (default): Triton FlashAttention"
        return "ck_fa", "V0 MLA with VLLM_USE_TRITON_FLASH_ATTN=0 or chunked prefill: CK flash_attn_varlen_func"
    return "ck_fa", "V1 MLA: flash_attn_varlen_func of the ROCm flash-attn package (CK)"


def prefill_attention_kernel(cfg, mla: bool = False) -> tuple[str, str]:
    """(kernel key, why) of the attention kernel vLLM runs for prompt tokens on an AMD Instinct GPU under ``cfg``
    (its ``engine``, ``vllm_version``, ``enable_chunked_prefill`` and ``rocm_env``): ``aiter_fa``, ``ck_fa`` or
    ``triton_fa`` (the selection facts are in rocm_kernel_paths.yaml, prefill_attention); ``mla``: for an MLA
    layer's prompt attention (see _mla_prefill_kernel)."""
    env = getattr(cfg, "rocm_env", None) or {}
    release = parse_version(str(getattr(cfg, "vllm_version", "") or ""))
    if mla:
        return _mla_prefill_kernel(cfg, env, release)
    if str(getattr(cfg, "engine", "v1")) == "v0":
        if getattr(cfg, "enable_chunked_prefill", False):
            return "triton_fa", "V0 with chunked prefill: every prompt has a block table -> context_attention_fwd (Triton)"
        if _on(env, "VLLM_USE_TRITON_FLASH_ATTN", True):
            return "triton_fa", "V0 ROCmFlashAttention, VLLM_USE_TRITON_FLASH_ATTN on (default): Triton FlashAttention"
        return "ck_fa", "V0 ROCmFlashAttention, VLLM_USE_TRITON_FLASH_ATTN=0: CK flash_attn_varlen_func"
    chosen = str(env.get("VLLM_ATTENTION_BACKEND") or "").strip().upper()
    if release >= EXPLICIT_BACKEND_FROM and chosen in EXPLICIT_BACKENDS:
        return EXPLICIT_BACKENDS[chosen], f"V1, VLLM_ATTENTION_BACKEND={chosen}"
    build = str(getattr(cfg, "rocm_build", "") or "")
    has_fa = release >= AITER_FA_FROM or rocm_builds.has(build, "aiter_fa_v1")
    if has_fa and aiter_enabled(env, "VLLM_ROCM_USE_AITER_MHA"):
        fork = f" ({rocm_builds.why(build, 'aiter_fa_v1')})" if release < AITER_FA_FROM else ""
        return "aiter_fa", f"V1, VLLM_ROCM_USE_AITER on and VLLM_ROCM_USE_AITER_MHA on: AiterFlashAttentionBackend{fork}"
    why = ("VLLM_ROCM_USE_AITER off" if has_fa else "no AITER attention backend before vLLM 0.10.0")
    return "triton_fa", f"V1 Triton attention ({why}: context_attention_fwd in 0.7-0.8, unified_attention from 0.9)"


def prefill_attention_path(gpu, cfg, mla: bool = False) -> tuple[float, str] | None:
    """(fraction of the GPU's 16-bit dense peak, provenance) that prompt-token attention reaches on ``gpu`` under
    ``cfg``, for the AMD families rocm_kernel_paths.yaml measured (prefill_attention.families_measured); None for
    every other GPU (NVIDIA: the measured kernel tables or the fallback constant apply, unchanged). ``mla``: for
    MLA layers (the fraction of the kernel that runs them; their value-head padding is the caller's)."""
    doc = _prefill_doc()
    if str(getattr(gpu, "arch", "") or "").lower() not in (doc.get("families_measured") or []):
        return None
    key, why = prefill_attention_kernel(cfg, mla)
    k = (doc.get("kernels") or {}).get(key)
    if not k:
        return None
    return float(k["fraction"]), (f"{key} {float(k['fraction']):.3f} of peak ({why}; {k['kernel']}: {k['tflops']} "
                                  f"TFLOPS measured on {doc['measured_gpu']}, {doc['measured_shape']}; "
                                  f"{k['derivation']}; {doc['source']})")


def prefill_attention_full_tiles(gpu, cfg) -> str | None:
    """Provenance when vLLM's V1 Triton unified attention on ``gpu`` computes every prompt query against all keys of
    its sequence (no causal tile skip: rocm_kernel_paths.yaml prefill_attention.unified_attention_full_tiles), so
    a chunk of c tokens after p cached ones costs c x (p + c) pairs, not c x (p + c / 2); None otherwise."""
    doc = _prefill_doc()
    full = doc.get("unified_attention_full_tiles") or {}
    if not full or str(getattr(gpu, "arch", "") or "").lower() not in (doc.get("families_measured") or []):
        return None
    if str(getattr(cfg, "engine", "v1")) == "v0" or prefill_attention_kernel(cfg)[0] != "triton_fa":
        return None
    release = parse_version(str(getattr(cfg, "vllm_version", "") or ""))
    if not (parse_version(str(full["from"])) <= release < parse_version(str(full["until"]))):
        return None
    if rocm_builds.has(str(getattr(cfg, "rocm_build", "") or ""), "unified_causal_skip"):
        return None   # an AMD image built from fork code that already has the causal tile skip
    if _on(getattr(cfg, "rocm_env", None) or {}, "VLLM_V1_USE_PREFILL_DECODE_ATTENTION", False):
        return None
    return (f"unified_attention without causal tile skip (vLLM {full['from']} to before {full['until']}): a prompt "
            f"chunk of c tokens after p cached ones computes c x (p + c) pairs ({full['source']})")


def _measured_moe_efficiency(shape: list, tokens: list, us: list, peak_flops: float, peak_bw: float, wb: float,
                             ab: float) -> list[float]:
    """Efficiency of each measured fused-MoE call (``us`` microseconds at ``tokens``) of MoE ``shape`` = [hidden,
    inter, experts, top_k], counted as models/cost/iteration.py counts a MoE call: FLOPs 2 T k 3 h i; bytes = the
    expected distinct experts E (1 - (1 - k/E)^T) x 3 h i x ``wb`` + ``ab`` x T k (2 h + 3 i) activations;
    efficiency = max(FLOPs / ``peak_flops``, bytes / ``peak_bw``) / time."""
    h, i, e, k = (float(x) for x in shape)
    eparams, io = 3.0 * h * i, 2.0 * h + 3.0 * i
    out = []
    for t, u in zip(tokens, us):
        routed = float(t) * k
        distinct = e * (1.0 - (1.0 - k / e) ** float(t))
        fl = 2.0 * routed * eparams
        by = distinct * eparams * wb + ab * routed * io
        out.append(max(fl / peak_flops, by / peak_bw) / (float(u) * 1e-6))
    return out


def moe_curve(gpu, cfg, fmt_key: str, hidden: int, inter: int, experts: int, top_k: int, peak_flops: float,
              wb: float, ab: float) -> tuple | None:
    """Measured fused-MoE efficiency by tokens per step on an AMD GPU of a family AITER's tuning tables cover
    (rocm_kernel_paths.yaml, moe_measured: CDNA3 MI300X/MI325X, CDNA4 MI355X/MI350X), in
    the form of models/cost/kernels.moe_efficiency_curve: (log2 tokens, efficiency, provenance, the same two as
    lists), for a MoE of ``hidden`` x per-GPU ``inter``, ``experts`` routed experts (all ranks), ``top_k``, weights
    in kernel-table format ``fmt_key`` (``wb`` bytes per weight, ``ab`` per activation; ``peak_flops`` of the
    experts' compute dtype). The nearest measured shape of the format within ``max_shape_ratio`` in hidden and
    intermediate size is moved by tokens per expert; on vLLM's Triton path (no AITER in the release or AITER off)
    the efficiency is divided by the format's Triton slowdown (paths, term moe). None: no measurement applies."""
    doc = _doc().get("moe_measured") or {}
    fam = (doc.get("families") or {}).get(str(getattr(gpu, "arch", "") or "").lower())
    if not fam:
        return None
    rows = (fam.get("tables") or {}).get(fmt_key) or []
    lim = math.log(float(doc.get("max_shape_ratio") or 1.0)) + 1e-9
    near = [(abs(math.log(max(1.0, hidden) / r["shape"][0])) + abs(math.log(max(1.0, inter) / r["shape"][1])), r)
            for r in rows
            if abs(math.log(max(1.0, hidden) / r["shape"][0])) <= lim and abs(math.log(max(1.0, inter) / r["shape"][1])) <= lim]
    if not near or experts <= 0 or top_k <= 0:
        return None
    row = min(near, key=lambda x: x[0])[1]
    peak_bw = float(gpu.hbm_bandwidth_tb_s) * 1e12
    eff = _measured_moe_efficiency(row["shape"], row["tokens"], row["us"], peak_flops, peak_bw, wb, ab)
    # same tokens per expert (T k / E): T here = T measured x (k_m / E_m) x (E / k)
    shift = math.log2((row["shape"][3] / row["shape"][2]) * (float(experts) / float(top_k)))
    xs = [math.log2(float(t)) + shift for t in row["tokens"]]
    slow, path = 1.0, "AITER fused MoE (VLLM_ROCM_USE_AITER on)"
    hit = path_slowdown(gpu, cfg, "moe", fmt_key)
    if hit:
        slow = hit[0]
        path = f"vLLM Triton fused_moe: the AITER measurement / {slow:g} ({hit[1]})"
    elif not _aiter_moe_runs(cfg, fmt_key, gpu):
        slow = float(doc.get("triton_ratio_unmeasured") or 1.0)
        path = (f"vLLM Triton fused_moe (AITER off or absent), taken at AITER's measured speed x {slow:g}: no public "
                "measurement of the Triton kernel against AITER's for this format on this GPU")
    eff = [v / slow for v in eff]
    h, i, e, k = row["shape"]
    prov = (f"{gpu.name} {fmt_key} fused MoE measured by AITER on cu_num {fam.get('cu_num')}, shape h={h} i={i} E={e} k={k} "
            f"({row['model']}), moved by tokens per expert; {path}; {row['kernel']}; {row['source']}")
    return np.asarray(xs), np.asarray(eff), prov, xs, eff


# Token grid (GEMM M) on which gemm_curve puts every measured shape before interpolating between shapes: 1 .. 32,768
GEMM_TOKEN_GRID = tuple(float(2 ** i) for i in range(16))


def _measured_gemm_efficiency(n: int, k: int, tokens: list, us: list, peak_flops: float, peak_bw: float, wb: float,
                              ab: float) -> list[float]:
    """Efficiency of each measured GEMM call (``us`` microseconds at M = ``tokens``) of an ``n`` x ``k`` weight, counted
    as models/cost/iteration.py counts a measured GEMM: FLOPs 2 M n k; bytes n k ``wb`` + ``ab`` M (n + k);
    efficiency = max(FLOPs / ``peak_flops``, bytes / ``peak_bw``) / time."""
    out = []
    for m, u in zip(tokens, us):
        fl = 2.0 * float(m) * n * k
        by = float(n) * k * wb + ab * float(m) * (n + k)
        out.append(max(fl / peak_flops, by / peak_bw) / (float(u) * 1e-6))
    return out


def _gemm_table(arch: str, fmt_key: str) -> tuple[dict, dict]:
    """(family entry, ``fmt_key`` table) of rocm_kernel_paths.yaml gemm_measured for family ``arch``; {} for a missing
    one."""
    fam = ((_doc().get("gemm_measured") or {}).get("families") or {}).get(arch) or {}
    return fam, (fam.get("tables") or {}).get(fmt_key) or {}


@lru_cache(maxsize=64)
def _gemm_rows(arch: str, fmt_key: str, peak_flops: float, peak_bw: float, wb: float, ab: float) -> tuple | None:
    """(log2 weight sizes, efficiency rows on GEMM_TOKEN_GRID, cu_num, kernel, source) of family ``arch``'s measured
    ``fmt_key`` GEMM table (gemm_measured), for :func:`gemm_curve`; None without one. Shapes of the same n x k (the two
    orientations) are averaged."""
    fam, table = _gemm_table(arch, fmt_key)
    if not table:
        return None
    grid = np.log2(np.asarray(GEMM_TOKEN_GRID))
    by_size: dict[float, list[np.ndarray]] = {}
    for sh in table["shapes"]:
        eff = _measured_gemm_efficiency(int(sh["n"]), int(sh["k"]), sh["tokens"], sh["us"], peak_flops, peak_bw, wb, ab)
        xs = np.log2(np.asarray(sh["tokens"], dtype=float))
        by_size.setdefault(math.log2(float(sh["n"]) * float(sh["k"])), []).append(np.interp(grid, xs, eff))
    sizes = sorted(by_size)
    rows = tuple(tuple(float(v) for v in np.mean(by_size[s], axis=0)) for s in sizes)
    return tuple(sizes), rows, fam.get("cu_num"), table["kernel"], table["source"]


def _skinny_tokens(arch: str, fmt_key: str, cfg) -> tuple[int, dict] | None:
    """(largest M, skinny entry) up to which vLLM runs its ROCm skinny GEMM (wvSplitK / wvSplitKQ) instead of the
    kernel family ``arch``'s ``fmt_key`` table times (gemm_measured ... skinny: the release's bound, the kernel's
    environment switch, default on); None when the table has no skinny entry, the release none yet, or the switch
    is off."""
    sk = _gemm_table(arch, fmt_key)[1].get("skinny")
    if not sk:
        return None
    env = getattr(cfg, "rocm_env", None) or {}
    if not _on(env, str(sk["switch"]), True):
        return None
    release = parse_version(str(getattr(cfg, "vllm_version", "") or ""))
    upto = 0
    for step in sk["max_tokens"]:
        if release >= parse_version(str(step["from"])):
            upto = int(step["tokens"])
    return (upto, sk) if upto > 0 else None


def gemm_curve(gpu, cfg, fmt_key: str, n: int, k: int, peak_flops: float, wb: float, ab: float,
               stream_fraction: float | None = None) -> tuple | None:
    """Measured dense-GEMM efficiency by tokens per step on an AMD GPU whose family AITER's GEMM tuning tables cover for
    weight format ``fmt_key`` (rocm_kernel_paths.yaml, gemm_measured: CDNA3 block / per-tensor FP8; CDNA4 bf16, block FP8, MXFP4), in the form of
    models/cost/kernels.gemm_efficiency_curve: (log2 tokens, efficiency, provenance, the same two as lists), for an
    ``n`` x ``k`` GEMM on one GPU (``peak_flops`` of its compute dtype, ``wb`` bytes per weight, ``ab`` per activation).
    Each measured shape's efficiency is put on GEMM_TOKEN_GRID (interpolated in log2 tokens, held outside its measured
    range), shapes of the same n x k averaged, then interpolated in log2(n x k) and held outside the measured sizes. On
    vLLM's Triton path (no AITER kernel in the release or AITER off: paths, term gemm) the efficiency is divided by the
    path's slowdown. Where the table names vLLM's skinny kernel (``skinny``: per-tensor FP8 at 1 token from vLLM 0.9.2,
    1-4 tokens from 0.16.0, VLLM_ROCM_USE_SKINNY_GEMM on by default), the grid points up to its bound take
    ``stream_fraction`` instead (the model's memory_bandwidth fraction: the skinny kernel streams the weights, and at
    those M a GEMM is memory-bound, so its efficiency is that fraction). None: no table for this family and format."""
    if n <= 0 or k <= 0 or not fmt_key:
        return None
    arch = str(getattr(gpu, "arch", "") or "").lower()
    hit = _gemm_rows(arch, fmt_key, float(peak_flops), float(gpu.hbm_bandwidth_tb_s) * 1e12, float(wb), float(ab))
    if hit is None:
        return None
    sizes, rows, cu_num, kernel, source = hit
    grid = np.log2(np.asarray(GEMM_TOKEN_GRID))
    x = math.log2(float(n) * float(k))
    eff = np.array([np.interp(x, sizes, [r[j] for r in rows]) for j in range(len(grid))])
    path = "the vendor-tuned kernel (AITER on, or the GEMM library AITER's tuner matched)"
    hit = path_slowdown(gpu, cfg, "gemm", fmt_key)
    if hit:
        eff = eff / hit[0]
        path = f"vLLM's Triton kernel: the measurement / {hit[0]:g} ({hit[1]})"
    skinny = _skinny_tokens(arch, fmt_key, cfg) if stream_fraction else None
    if skinny:
        upto, sk = skinny
        eff = np.where(np.asarray(GEMM_TOKEN_GRID) <= upto, float(stream_fraction), eff)
        path += (f"; up to {upto} token(s) vLLM's {sk['kernel']} streams the weights at memory_bandwidth "
                 f"{float(stream_fraction):.3g} of peak ({sk['source']})")
    prov = (f"{gpu.name} {fmt_key} GEMM measured by AITER's tuner on cu_num {cu_num}, interpolated from "
            f"{len(sizes)} weight sizes to {n} x {k}; {path}; {kernel}; {source}")
    return grid, eff, prov, [float(v) for v in grid], [float(v) for v in eff]


def _aiter_moe_runs(cfg, fmt_key: str, gpu) -> bool:
    """Whether vLLM runs AITER's fused MoE for experts in ``fmt_key``: the release has it (the moe path's aiter_from,
    0.8.3) and VLLM_ROCM_USE_AITER / _MOE are on."""
    release = parse_version(str(getattr(cfg, "vllm_version", "") or ""))
    env = getattr(cfg, "rocm_env", None) or {}
    for p in _paths(getattr(gpu, "arch", "")):
        if p.get("term") == "moe":
            return _runs_aiter(p, release, env)
    return aiter_enabled(env, "VLLM_ROCM_USE_AITER_MOE")
