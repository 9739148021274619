"""KV cache: bytes per token and block, KV-cache groups, blocks, tokens and max concurrency, rounded
the way vLLM rounds, and vLLM's start-up errors when the cache cannot hold one request.

Facts (from vLLM's source; https://github.com/vllm-project/vllm):
* per-layer page = block_size x 2 (K,V) x kv_heads_per_rank x head_size x kv_bytes
  (``AttentionSpec.page_size_bytes``); MLA caches one latent of (kv_lora_rank + qk_rope_head_dim)
  elements per token, not split across TP (``MLAAttentionSpec``). DeepSeek-V3.2 (DSA) adds an indexer key
  cache per layer (132 bytes per token) and caches fp8 as ``fp8_ds_mla`` (656 bytes per token per layer).
* V0 (0.6.x): ``num_gpu_blocks = available // (block_size x layers x per-layer bytes/token)``;
  max concurrency = blocks x block_size / max_model_len.
* V1 0.7.0..0.9.1: ``num_blocks = available // page_size // num_layers``; tokens = blocks x block_size.
* V1 0.9.2+: hybrid allocator (vllm/v1/core/kv_cache_utils.py): layers of each attention type are
  split into groups of ``group_size = min(layers per type)`` layers; each of the ``group_size`` KV
  tensors is shared by one layer of every group, so ``num_blocks = available // (page x group_size)``
  and the log prints ``num_blocks // len(groups) x block_size`` tokens (0.9.2..0.20.0) or
  ``int(max_concurrency x max_model_len)`` (0.20.1+). Max concurrency = num_blocks / blocks one
  max_model_len request needs over all groups (full: cdiv(len, bs); sliding window:
  cdiv(min(window - 1 + max_num_batched_tokens, len), bs) + 1).
Units: bytes; tokens; GiB = 2**30 bytes.
"""

from pydantic import Field

from sched_reader.data_model import DataModel, new_list
from sched_reader.models.architecture import ModelArch, sparse_mla_cache_dtype
from sched_reader.models.engine_spec import EffectiveConfig
from sched_reader.models.memory_profile import parse_version
from sched_reader.models.weights import GIB, Term, get_pp_indices, kv_heads_per_rank, model_dtype_bytes
from sched_reader.models.quantization import kv_bytes_per_element as catalog_bytes
from sched_reader.models.hybrid import RECURRENT, layer_mixers, resolved_ssm_dtype, state_bytes
from sched_reader.models import drafter, dsv4, layer_geometry


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


class LayerKV(DataModel):
    """One attention layer's KV cache spec on one GPU."""

    index: int
    kind: str                  # "full" | "sliding" | "mla" | "mamba" (recurrent state, see models/hybrid.py)
    window: int | None = None  # tokens, for sliding/chunked layers
    bytes_per_token: int       # K+V (or MLA latent) bytes per token on one TP rank (0 for "mamba")
    state_bytes: int = 0       # "mamba": one request's state on one TP rank


def kv_bytes_per_element(kv_cache_dtype: str, model_dtype_bytes_: int) -> float:
    """Bytes of one cached element from the quantization catalog (``auto`` follows the model dtype)."""
    model_dtype = "float32" if model_dtype_bytes_ == 4 else "bfloat16"
    return catalog_bytes(kv_cache_dtype, model_dtype)


def _layer_kinds(arch: ModelArch) -> list[tuple[str, int | None]]:
    """Per layer (kind, window); hybrid models: "mamba" for recurrent layers, "none" for cache-less ones."""

    base = _attention_kinds(arch)
    if arch.config.get("num_kv_shared_layers"):   # Gemma 4 E2B / E4B, Gemma 3n: the last layers cache nothing
        base = [("none", None) if layer_geometry.is_kv_shared_layer(arch, i) else k for i, k in enumerate(base)]
    mixers = layer_mixers(arch)
    if not mixers:
        return base
    return [("mamba", None) if m in RECURRENT else ("none", None) if m == "none" else base[i]
            for i, m in enumerate(mixers)]


def _attention_kinds(arch: ModelArch) -> list[tuple[str, int | None]]:
    c = arch.config
    n = arch.num_layers
    if arch.is_mla:
        return [("mla", None)] * n
    lt = c.get("layer_types")
    window = c.get("sliding_window")
    if isinstance(lt, list) and len(lt) == n:
        out = []
        for t in lt:
            if "linear" in str(t) or "mamba" in str(t):
                out.append(("full", None))   # replaced by "mamba" in _layer_kinds
            elif "sliding" in str(t) and window:
                out.append(("sliding", int(window)))
            elif "chunked" in str(t) and c.get("attention_chunk_size"):
                out.append(("sliding", int(c["attention_chunk_size"])))
            else:
                out.append(("full", None))
        return out
    mt = arch.model_type
    if mt == "gemma2" and window:
        return [("sliding", int(window)) if i % 2 == 0 else ("full", None) for i in range(n)]
    if mt in ("gemma3", "gemma3_text") and window:
        pat = int(c.get("sliding_window_pattern", 6) or 6)
        return [("sliding", int(window)) if (i + 1) % pat else ("full", None) for i in range(n)]
    if mt.startswith("llama4") and c.get("attention_chunk_size"):
        nope = c.get("no_rope_layers")
        if isinstance(nope, list) and len(nope) == n:
            return [("sliding", int(c["attention_chunk_size"])) if nope[i] else ("full", None) for i in range(n)]
        return [("full", None) if (i + 1) % 4 == 0 else ("sliding", int(c["attention_chunk_size"])) for i in range(n)]
    return [("full", None)] * n


def kv_layers(arch: ModelArch, cfg: EffectiveConfig) -> list[LayerKV]:
    """Every attention layer's KV spec on one TP rank (all PP stages)."""

    dtb = model_dtype_bytes(arch, cfg)
    kv_dtype = cfg.kv_cache_dtype
    if arch.is_sparse_mla:  # DeepSeek-V3.2: vLLM rewrites the cache dtype for its sparse-MLA backends
        kv_dtype = sparse_mla_cache_dtype(kv_dtype, parse_version(cfg.vllm_version), cfg.sparse_mla_backend)[0]
    eb = kv_bytes_per_element(kv_dtype, dtb)
    tp = max(1, cfg.tensor_parallel_size)
    out = []
    if dsv4.is_dsv4(arch):   # DeepSeek-V4: a window cache per layer + compressed rows (models/dsv4.py)
        out = [LayerKV(index=i, kind=k, window=w, bytes_per_token=b) for i, k, w, b in dsv4.layer_caches(arch, eb)]
        return out + _drafter_layers(arch, cfg, out)
    mixers = layer_mixers(arch)
    for i, (kind, win) in enumerate(_layer_kinds(arch)):
        if kind == "none":
            continue
        if kind == "mamba":
            ssm = resolved_ssm_dtype(arch, getattr(cfg, "mamba_ssm_cache_dtype", None), parse_version(cfg.vllm_version))
            sb = state_bytes(arch, mixers[i], tp, dtb, ssm)
            out.append(LayerKV(index=i, kind="mamba", bytes_per_token=0, state_bytes=sb))
            continue
        if kind == "mla":
            per = round((int(arch.config["kv_lora_rank"]) + int(arch.config["qk_rope_head_dim"])) * eb)
            # DSA: each layer's indexer key cache is a second full-attention spec of the same block size; vLLM puts
            # both in one UniformTypeKVCacheSpecs group whose page is the sum (kv_cache_utils.py, 0.11.0+)
            per += arch.indexer_bytes_per_token if arch.has_indexer(i) else 0
        else:
            kvh, hd = layer_geometry.kv_geometry(arch, i)       # Gemma 4 full layers: their own KV geometry
            per = round(2 * kv_heads_per_rank(kvh, tp) * hd * eb)
        out.append(LayerKV(index=i, kind=kind, window=win, bytes_per_token=per))
    return out + _drafter_layers(arch, cfg, out)


def _drafter_layers(arch: ModelArch, cfg: EffectiveConfig, target: list[LayerKV]) -> list[LayerKV]:
    """KV layers a speculative drafter registers (models/drafter.py), appended after the target's."""

    spec = getattr(cfg, "speculative", None)
    if not spec:
        return []
    n = arch.num_layers
    k = drafter.extra_layer_count(arch, spec)
    attn = [layer for layer in target if layer.kind in ("full", "mla")]
    if k and attn:
        proto = attn[-1]
        return [LayerKV(index=n + j, kind=proto.kind, bytes_per_token=proto.bytes_per_token) for j in range(k)]
    d_arch = drafter.draft_arch(spec)
    if d_arch is None:
        return []
    sub = cfg.model_copy(update={"speculative": None})
    return [layer.model_copy(update={"index": n + j}) for j, layer in enumerate(kv_layers(d_arch, sub))]


def kv_bytes_per_token(arch: ModelArch, cfg: EffectiveConfig) -> int:
    """KV bytes one token takes on one TP rank, summed over all layers (full-length caching)."""
    return sum(layer.bytes_per_token for layer in kv_layers(arch, cfg))


class KVCacheResult(DataModel):
    """What vLLM prints about its KV cache, and whether start-up succeeds."""

    block_size: int
    num_blocks: int
    tokens: int
    bytes_per_token: int             # per TP rank, all layers of the engine
    page_size_bytes: int             # one block of one layer
    num_groups: int = 1
    group_size: int = 0              # layers sharing one KV tensor slot (hybrid allocator)
    max_concurrency: float
    fits: bool
    error: str | None = None
    estimated_max_model_len: int | None = None
    explain: list[Term] = Field(default_factory=new_list)


def _uses_hybrid_allocator(cfg: EffectiveConfig) -> bool:
    return cfg.engine == "v1" and parse_version(cfg.vllm_version) >= (0, 9, 2)


def _groups(layers: list[LayerKV], hybrid: bool) -> tuple[int, int, list[tuple[str, int | None, int]]]:
    """(group_size, num_groups, [(kind, window, layers)] per group) for one stage."""
    if not layers:
        return 0, 0, []
    if not hybrid:
        return len(layers), 1, [("full", None, len(layers))]
    by_type: dict[tuple[str, int | None], int] = {}
    for layer in layers:
        key = ("sliding", layer.window) if layer.kind == "sliding" else (layer.kind, None)
        by_type[key] = by_type.get(key, 0) + 1
    if len(by_type) == 1:
        (k, w), n = next(iter(by_type.items()))
        return n, 1, [(k, w, n)]
    gs = min(by_type.values())
    groups = []
    for (k, w), n in by_type.items():
        for _ in range(cdiv(n, gs)):
            groups.append((k, w, gs))
    return gs, len(groups), groups


def _unified_block_sizes(layers: list[LayerKV], bs: int) -> dict[tuple[str, int | None], int]:
    """Block size of each attention type once vLLM unifies page sizes (kv_cache_utils.py
    ``unify_kv_cache_spec_page_size``): a type whose page is smaller than the largest by an integer ratio gets
    ``block_size x ratio`` tokens per block (Gemma 4: full layers of 2 x 512-wide KV heads next to sliding layers
    of 8 x 256)."""
    per_type: dict[tuple[str, int | None], int] = {}
    for layer in layers:
        key = ("sliding", layer.window) if layer.kind == "sliding" else (layer.kind, None)
        per_type[key] = max(per_type.get(key, 0), layer.bytes_per_token)
    top = max(per_type.values(), default=0)
    return {k: bs * (top // v) if v and top % v == 0 else bs for k, v in per_type.items()}


def _blocks_per_request(kind: str, window: int | None, max_len: int, bs: int, mbt: int) -> int:
    if kind == "sliding" and window:
        n = min(window - 1 + mbt, max_len)
        return cdiv(n, bs) + 1
    return cdiv(max_len, bs)


def _needed_bytes(layers: list[LayerKV], max_len: int, bs: int, mbt: int, hybrid: bool) -> int:
    """Bytes one request of ``max_len`` tokens needs on one stage (vLLM max_memory_usage_bytes)."""
    total = 0
    for layer in layers:
        kind = layer.kind if hybrid else "full"
        total += _blocks_per_request(kind, layer.window, max_len, bs, mbt) * bs * layer.bytes_per_token
    return total


def _estimate_max_len(layers: list[LayerKV], avail: int, bs: int, mbt: int, hybrid: bool, upper: int) -> int:
    lo, hi = 0, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _needed_bytes(layers, mid, bs, mbt, hybrid) <= avail:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _fmt_gib(b: int, ver: tuple[int, int, int]) -> str:
    return f"{b / GIB:.2f}"


def _no_memory_msg(ver: tuple[int, int, int]) -> str:
    msg = "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."
    if ver >= (0, 22, 0):
        msg = msg[:-1] + " (this flag also controls CPU memory reservation on the CPU backend, despite its name)."
    if ver >= (0, 13, 0):
        msg += " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    return msg


def kv_capacity(arch: ModelArch, cfg: EffectiveConfig, available_per_stage: list[int]) -> KVCacheResult:
    """Blocks, tokens and max concurrency of the engine from each PP stage's available KV bytes."""
    ver = parse_version(cfg.vllm_version)
    bs = int(cfg.block_size)
    pp = max(1, cfg.pipeline_parallel_size)
    mml, mbt = int(cfg.max_model_len), int(cfg.max_num_batched_tokens)
    layers = kv_layers(arch, cfg)
    if dsv4.is_dsv4(arch):
        return _dsv4_capacity(cfg, layers, available_per_stage, ver)
    if any(layer.kind == "mamba" for layer in layers):
        if cfg.engine == "v1":
            return _hybrid_capacity(cfg, layers, available_per_stage, ver)
        layers = [layer for layer in layers if layer.kind != "mamba"]  # V0: states live outside the KV cache
    hybrid = _uses_hybrid_allocator(cfg)
    bpt = sum(layer.bytes_per_token for layer in layers)
    explain: list[Term] = [Term(name="kv_bytes_per_token", formula="sum over layers of 2 x kv_heads/tp x head_dim x kv_bytes (MLA: latent + rope)",
                                inputs={"layers": len(layers), "kv_cache_dtype": cfg.kv_cache_dtype}, value=bpt, unit="bytes")]
    stage_blocks: list[int] = []
    stage_info = []
    for s in range(pp):
        a, b = get_pp_indices(arch.num_layers, s, pp)
        sl = layers[a:b] if s < pp - 1 else layers[a:]   # a drafter's layers live on the last stage
        gs, ng, groups = _groups(sl, hybrid)
        page = bs * max(layer.bytes_per_token for layer in sl) if sl else 1
        avail = available_per_stage[min(s, len(available_per_stage) - 1)]
        if cfg.engine == "v0" or not hybrid:
            per_block = bs * sum(layer.bytes_per_token for layer in sl)
            nb = max(0, avail // per_block) if avail > 0 else 0
        elif ng == 1 and len({layer.bytes_per_token for layer in sl}) > 1:
            # one attention type, pages of different sizes (DSA layers with and without an indexer key cache):
            # vLLM's UniformTypeKVCacheSpecs page is the sum of the layers' pages (kv_cache_utils.py, 0.11.0+)
            page = bs * sum(layer.bytes_per_token for layer in sl)
            gs = 1
            nb = max(0, avail // page) if avail > 0 else 0
        else:
            nb = max(0, avail // (page * gs)) if avail > 0 else 0
        if cfg.num_gpu_blocks_override:
            nb = int(cfg.num_gpu_blocks_override)
        stage_blocks.append(nb)
        stage_info.append((sl, gs, ng, groups, page, avail))
    s_min = min(range(pp), key=lambda s: stage_blocks[s])
    nb = stage_blocks[s_min]
    sl, gs, ng, groups, page, avail = stage_info[s_min]
    if cfg.engine == "v0" or not hybrid:
        per_req = cdiv(mml, bs)
        conc = nb * bs / mml
        tokens = nb * bs
        ng_eff = 1
    else:
        type_bs = _unified_block_sizes(sl, bs)
        per_req = sum(_blocks_per_request(k, w, mml, type_bs.get((k, w), bs), mbt) for k, w, _ in groups)
        conc = nb / per_req if per_req else 0.0
        ng_eff = ng
        tokens = int(conc * mml) if ver >= (0, 20, 1) else (nb // ng) * bs
    explain.append(Term(name="num_blocks", formula=("available // (block_size x sum(per-layer bytes))" if ng_eff == 1 and not hybrid
                                                     else "available // (page_size x group_size)"),
                        inputs={"available": avail, "page_size": page, "group_size": gs, "groups": ng_eff,
                                "stage": s_min, "block_size": bs}, value=nb, unit="blocks"))
    explain.append(Term(name="kv_tokens", formula=("int(max_concurrency x max_model_len)" if ver >= (0, 20, 1) and hybrid
                                                   else "num_blocks // groups x block_size"),
                        inputs={"num_blocks": nb, "groups": ng_eff, "block_size": bs}, value=tokens, unit="tokens"))
    explain.append(Term(name="max_concurrency", formula="num_blocks / blocks per max_model_len request",
                        inputs={"blocks_per_request": per_req, "max_model_len": mml}, value=round(conc, 4), unit="requests"))

    error = None
    est = None
    min_avail = min(available_per_stage) if available_per_stage else 0
    if cfg.kv_cache_memory_bytes is None and min_avail <= 0:
        error = _no_memory_msg(ver)
    elif cfg.engine == "v0":
        max_seq_len = bs * nb
        if nb <= 0:
            error = _no_memory_msg(ver)
        elif max_seq_len < mml:
            est = max_seq_len
            error = (f"The model's max seq len ({mml}) is larger than the maximum number of tokens that can be "
                     f"stored in KV cache ({max_seq_len}). Try increasing `gpu_memory_utilization` or decreasing "
                     "`max_model_len` when initializing the engine.")
    else:
        needed = _needed_bytes(sl, mml, bs, mbt, hybrid)
        if needed > avail:
            est = _estimate_max_len(sl, avail, bs, mbt, hybrid, mml)
            est_msg = f"Based on the available memory, the estimated maximum model length is {est}. " if est > 0 else ""
            models = "model's" if ver >= (0, 22, 0) else "models's"
            error = (f"To serve at least one request with the {models} max seq len ({mml}), "
                     f"({_fmt_gib(needed, ver)} GiB KV cache is needed, which is larger than the available KV cache "
                     f"memory ({_fmt_gib(avail, ver)} GiB). {est_msg}Try increasing `gpu_memory_utilization` or "
                     "decreasing `max_model_len` when initializing the engine.")
            if ver >= (0, 13, 0):
                error += " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    return KVCacheResult(block_size=bs, num_blocks=nb, tokens=tokens, bytes_per_token=bpt, page_size_bytes=page,
                         num_groups=ng_eff, group_size=gs, max_concurrency=round(conc, 2), fits=error is None,
                         error=error, estimated_max_model_len=est, explain=explain)


def mamba_cache_mode(cfg: EffectiveConfig, ver: tuple[int, int, int]) -> str:
    """vLLM's mamba cache mode: ``align`` (2 state blocks per request) when prefix caching runs on a hybrid
    model (0.15.0+, where ``--mamba-cache-mode`` exists), else ``none`` (1 block; 0.10.x-0.14.x disable
    prefix caching for hybrid models: "Hybrid or mamba-based model detected: disabling prefix caching")."""
    mode = getattr(cfg, "mamba_cache_mode", None)
    if mode in ("none", "align", "all"):
        return str(mode)
    return "align" if ver >= (0, 15, 0) and cfg.enable_prefix_caching else "none"


def _dsv4_capacity(cfg: EffectiveConfig, layers: list[LayerKV], available_per_stage: list[int],
                   ver: tuple[int, int, int]) -> KVCacheResult:
    """DeepSeek-V4 (models/dsv4.py): each request holds every layer's window (``window`` tokens plus one block of
    slack) and, on compressed layers, one row per ``ratio`` tokens. A request of ``max_model_len`` tokens needs
    ``windows + max_model_len x compressed bytes per token``; capacity is counted in those requests, and the
    bytes per token reported are that need spread over ``max_model_len`` (so tokens x bytes per token is the
    budget). vLLM's own V4 page layout (256-token kernel blocks of compressed rows) is not modelled: an
    approximation of its capacity, not its block count."""
    mml, bs = int(cfg.max_model_len), int(cfg.block_size)
    comp = sum(layer.bytes_per_token for layer in layers if layer.kind != "sliding")
    win = sum(layer.bytes_per_token * ((layer.window or 0) + bs) for layer in layers if layer.kind == "sliding")
    need = win + mml * comp
    avail = min(available_per_stage) if available_per_stage else 0
    conc = avail / need if need and avail > 0 else 0.0
    tokens = int(conc * mml)
    bpt = -(-need // mml) if mml else comp
    nb = tokens // bs
    if cfg.num_gpu_blocks_override:
        nb = int(cfg.num_gpu_blocks_override)
    explain = [Term(name="dsv4_request_bytes", formula="sum(window layers x (window + block_size) x row bytes) + "
                    "max_model_len x sum(compressed bytes per token)",
                    inputs={"window_bytes": win, "compressed_bytes_per_token": comp, "max_model_len": mml},
                    value=need, unit="bytes", guessed=True),
               Term(name="max_concurrency", formula="available / request bytes", inputs={"available": avail},
                    value=round(conc, 4), unit="requests")]
    error = est = None
    if cfg.kv_cache_memory_bytes is None and avail <= 0:
        error = _no_memory_msg(ver)
    elif need > avail:
        est = max(0, (avail - win) // comp) if comp else 0
        error = (f"To serve at least one request with the model's max seq len ({mml}), ({_fmt_gib(need, ver)} GiB KV "
                 f"cache is needed, which is larger than the available KV cache memory ({_fmt_gib(avail, ver)} GiB). "
                 "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")
    return KVCacheResult(block_size=bs, num_blocks=nb, tokens=tokens, bytes_per_token=bpt, page_size_bytes=bs * bpt,
                         num_groups=1, group_size=len(layers), max_concurrency=round(conc, 2), fits=error is None,
                         error=error, estimated_max_model_len=est, explain=explain)


def _hybrid_capacity(cfg: EffectiveConfig, layers: list[LayerKV], available_per_stage: list[int],
                     ver: tuple[int, int, int]) -> KVCacheResult:
    """Attention + recurrent-state layers (vllm/model_executor/models/config.py HybridAttentionMambaModelConfig
    and vllm/v1/kv_cache_interface.py MambaSpec): the attention block size grows to
    ``16 x cdiv(state page, 16 x attention bytes per token)`` so one attention page holds at least one state;
    the state page is padded to the attention page; layers form groups of ``min(layers per type)``. With MLA
    attention (Kimi-Linear) the alignment is 64 tokens instead of 16."""
    mml = int(cfg.max_model_len)
    attn = [layer for layer in layers if layer.kind != "mamba"]
    mamba = [layer for layer in layers if layer.kind == "mamba"]
    per_tok = max((layer.bytes_per_token for layer in attn), default=0)
    state = max(layer.state_bytes for layer in mamba)
    bs = int(cfg.block_size)
    # kernel block alignment: 64 tokens when the attention layers are MLA (FlashMLA; CUTLASS_MLA would be 128),
    # else 16 (vllm/model_executor/models/config.py HybridAttentionMambaModelConfig, 0.11.1+)
    align = 64 if any(layer.kind == "mla" for layer in attn) else 16
    attn_bs = align * cdiv(state, align * per_tok) if per_tok else bs
    if bs < attn_bs:
        bs = attn_bs
    page = bs * per_tok if per_tok else state
    counts = [n for n in (len(attn), len(mamba)) if n]
    gs = min(counts)
    n_attn_groups = cdiv(len(attn), gs) if attn else 0
    n_mamba_groups = cdiv(len(mamba), gs)
    ng = n_attn_groups + n_mamba_groups
    avail = min(available_per_stage) if available_per_stage else 0
    nb = max(0, avail // (page * gs)) if avail > 0 else 0
    if cfg.num_gpu_blocks_override:
        nb = int(cfg.num_gpu_blocks_override)
    mode = mamba_cache_mode(cfg, ver)
    state_blocks = {"align": 2, "all": cdiv(mml, bs)}.get(mode, 1)
    per_req = n_attn_groups * cdiv(mml, bs) + n_mamba_groups * state_blocks
    conc = nb / per_req if per_req else 0.0
    tokens = int(conc * mml) if ver >= (0, 20, 1) else (nb // ng) * bs
    needed = len(attn) * cdiv(mml, bs) * page + len(mamba) * state_blocks * page
    explain = [
        Term(name="hybrid_block_size", formula="max(block_size, 16 x cdiv(state_page, 16 x attention_bytes_per_token))",
             inputs={"state_page": state, "attention_bytes_per_token": per_tok, "block_size": int(cfg.block_size)},
             value=bs, unit="tokens"),
        Term(name="num_blocks", formula="available // (page_size x group_size)",
             inputs={"available": avail, "page_size": page, "group_size": gs, "groups": ng}, value=nb, unit="blocks"),
        Term(name="kv_tokens", formula=("int(max_concurrency x max_model_len)" if ver >= (0, 20, 1)
                                        else "num_blocks // groups x block_size"),
             inputs={"num_blocks": nb, "groups": ng, "block_size": bs}, value=tokens, unit="tokens"),
        Term(name="max_concurrency", formula="num_blocks / (attention groups x cdiv(max_model_len, bs) + state groups x "
             "state blocks)", inputs={"blocks_per_request": per_req, "mamba_cache_mode": mode},
             value=round(conc, 4), unit="requests"),
    ]
    error = None
    est = None
    if cfg.kv_cache_memory_bytes is None and avail <= 0:
        error = _no_memory_msg(ver)
    elif needed > avail:
        fixed = len(mamba) * state_blocks * page
        per_block = len(attn) * page
        est = max(0, (avail - fixed) // per_block * bs) if per_block else 0
        error = (f"To serve at least one request with the model's max seq len ({mml}), ({_fmt_gib(needed, ver)} GiB KV "
                 f"cache is needed, which is larger than the available KV cache memory ({_fmt_gib(avail, ver)} GiB). "
                 "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")
    bpt = sum(layer.bytes_per_token for layer in attn)
    return KVCacheResult(block_size=bs, num_blocks=nb, tokens=tokens, bytes_per_token=bpt, page_size_bytes=page,
                         num_groups=ng, group_size=gs, max_concurrency=round(conc, 2), fits=error is None,
                         error=error, estimated_max_model_len=est, explain=explain)
