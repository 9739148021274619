"""Per-GPU matmul shapes of one decoder stack, read from a Hugging Face config.

The cost model needs GEMM shapes (in/out features per GPU after tensor/expert parallel sharding),
attention geometry (heads per GPU, q/k and v widths, KV elements per token, sliding window) and which
layers are MoE. Parameter counts follow from the shapes (params = in x out per linear); engineer C2's
``models/weights.py`` owns whole-checkpoint byte accounting, and ``tests/models/cost/test_cost_shapes.py``
cross-checks the two.

All sizes are element counts (not bytes). "per GPU" means one tensor-parallel rank of one pipeline
stage holding all layers (pipeline parallelism is applied in ``iteration.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sched_reader.models.architecture import ModelArch
from sched_reader.models import nas
from sched_reader.models.weights import is_moe_layer, shared_expert_intermediate


@dataclass(frozen=True)
class Linear:
    """One (possibly fused) GEMM per token: ``k`` input features, ``n`` output features on this GPU.

    ``component`` selects the weight precision: attn | mlp | experts | shared | router | lm_head.
    """

    name: str
    component: str
    k: int
    n: int

    @property
    def params(self) -> int:
        return self.k * self.n


@dataclass(frozen=True)
class AttentionSpec:
    """Attention geometry on one GPU.

    FLOPs per (query, key) pair = 2 x heads x (qk_dim + v_dim) (score GEMM + value GEMM).
    MLA decode runs in the absorbed latent space: ``decode_qk_dim`` = kv_lora_rank + rope dim,
    ``decode_v_dim`` = kv_lora_rank; prefill uses the expanded ``qk_dim`` / ``v_dim``.
    ``kv_elems_per_token``: KV-cache elements stored per token for this layer on this GPU.
    ``window``: sliding-window length in tokens, or None for full attention.
    """

    kind: str  # "gqa" | "mla"
    heads: int
    qk_dim: int
    v_dim: int
    decode_qk_dim: int
    decode_v_dim: int
    kv_elems_per_token: int
    window: int | None


@dataclass(frozen=True)
class MoESpec:
    """Routed experts of one MoE layer as seen by one GPU.

    ``local_experts``: experts whose (shard of) weights live on this GPU (E without EP, E/ep with EP).
    ``expert_linears``: the GEMMs of ONE expert on this GPU (sharded by TP without EP, whole with EP).
    ``token_share``: tokens routed to this GPU's experts per local token = dp (with DP > 1 the layer gathers
    every DP rank's tokens, with or without EP) x local_experts / E x top_k, applied in ``iteration.py``.
    """

    num_experts: int
    top_k: int
    local_experts: int
    expert_linears: tuple[Linear, ...]
    ep_size: int

    @property
    def expert_params(self) -> int:
        return sum(lin.params for lin in self.expert_linears)


@dataclass(frozen=True)
class LayerGroup:
    """``count`` identical decoder layers."""

    count: int
    attn_linears: tuple[Linear, ...]
    attention: AttentionSpec
    mlp_linears: tuple[Linear, ...]        # dense MLP, or shared experts + router of an MoE layer
    moe: MoESpec | None
    act_width: int                         # per-token elementwise activation width (gate*up) on this GPU


@dataclass(frozen=True)
class ModelShapes:
    """Everything the cost model needs about one model on one GPU."""

    model_id: str
    hidden: int
    vocab: int
    num_layers: int
    groups: tuple[LayerGroup, ...]
    lm_head: Linear
    tp: int
    ep: int
    gated: bool

    def params_per_gpu(self) -> dict[str, int]:
        """Parameters held by one TP rank (all pipeline stages together), by component."""
        out: dict[str, int] = {"attn": 0, "mlp": 0, "experts": 0, "shared": 0, "router": 0,
                               "embed": 0, "lm_head": 0}
        for g in self.groups:
            for lin in g.attn_linears + g.mlp_linears:
                out[lin.component] += g.count * lin.params
            if g.moe:
                out["experts"] += g.count * g.moe.local_experts * g.moe.expert_params
        out["lm_head"] = self.lm_head.params
        out["embed"] = self.vocab * self.hidden // self.tp
        return out


def _int(cfg: dict, *keys: str, default: int | None = None) -> int | None:
    for k in keys:
        v = cfg.get(k)
        if v not in (None, 0, ""):
            return int(v)
    return default


def _layer_windows(arch: ModelArch) -> list[int | None]:
    """Sliding window per layer (None = full attention), from HF config conventions."""
    c = arch.config
    n = arch.num_layers
    window = _int(c, "sliding_window")
    if not window:
        return [None] * n
    types = c.get("layer_types")
    if isinstance(types, list) and len(types) == n:
        return [window if str(t).startswith("sliding") else None for t in types]
    mt = arch.model_type
    if mt == "gemma2":  # even layer index slides, odd is global (Gemma2 modeling)
        return [window if i % 2 == 0 else None for i in range(n)]
    if mt in ("gemma3", "gemma3_text"):
        p = _int(c, "sliding_window_pattern", default=6)
        return [None if (i + 1) % p == 0 else window for i in range(n)]
    if c.get("use_sliding_window") is False:
        return [None] * n
    if mt in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe"):
        return [None] * n  # Qwen configs carry sliding_window but use it only with use_sliding_window
    return [window] * n


def _moe_layers(arch: ModelArch) -> list[bool]:
    return [is_moe_layer(arch.config, i) for i in range(arch.num_layers)]


def _attention(arch: ModelArch, tp: int, window: int | None) -> tuple[tuple[Linear, ...], AttentionSpec]:
    c = arch.config
    h = arch.hidden_size
    heads = max(1, arch.num_attention_heads // tp)
    if arch.is_mla:
        kv_lora = int(c["kv_lora_rank"])
        rope = int(c.get("qk_rope_head_dim") or 64)
        nope = int(c.get("qk_nope_head_dim") or 128)
        v = int(c.get("v_head_dim") or nope)
        q_lora = _int(c, "q_lora_rank")
        lins: list[Linear] = []
        if q_lora:  # q_a_proj and kv_a_proj are replicated across TP ranks in vLLM
            lins.append(Linear("q_a_proj", "attn", h, q_lora))
            lins.append(Linear("q_b_proj", "attn", q_lora, heads * (nope + rope)))
        else:
            lins.append(Linear("q_proj", "attn", h, heads * (nope + rope)))
        lins.append(Linear("kv_a_proj", "attn", h, kv_lora + rope))
        lins.append(Linear("kv_b_proj", "attn", kv_lora, heads * (nope + v)))
        lins.append(Linear("o_proj", "attn", heads * v, h))
        spec = AttentionSpec("mla", heads, nope + rope, v, kv_lora + rope, kv_lora,
                             kv_lora + rope, window)  # latent cache is replicated on every TP rank
        return tuple(lins), spec
    hd, n_kv = arch.head_dim, arch.num_kv_heads
    n_v = 1
    vhd = hd
    if window is None and c.get("global_head_dim"):   # Gemma 4 full layers: fewer, wider KV heads; K = V
        hd, n_kv = int(c["global_head_dim"]), int(c.get("num_global_key_value_heads") or n_kv)
        n_v = 0 if c.get("attention_k_eq_v") else 1
        vhd = hd
    if arch.model_type.startswith("mimo_v2"):        # MiMo-V2: swa_* geometry on sliding layers, V narrower than K
        if window is not None and c.get("swa_num_key_value_heads"):
            hd, n_kv = int(c.get("swa_head_dim") or hd), int(c["swa_num_key_value_heads"])
            vhd = int(c.get("swa_v_head_dim") or hd)
        else:
            vhd = int(c.get("v_head_dim") or hd)
    kvh = max(1, n_kv // tp)  # vLLM replicates KV heads when tp > num_kv_heads
    lins = [Linear("qkv_proj", "attn", h, heads * hd + kvh * hd + n_v * kvh * vhd),
            Linear("o_proj", "attn", heads * vhd, h)]
    return tuple(lins), AttentionSpec("gqa", heads, hd, vhd, hd, vhd, 2 * kvh * hd, window)


def _mlp(name: str, component: str, h: int, inter: int, gated: bool) -> tuple[Linear, ...]:
    if gated:
        return (Linear(f"{name}.gate_up", component, h, 2 * inter), Linear(f"{name}.down", component, inter, h))
    return (Linear(f"{name}.fc1", component, h, inter), Linear(f"{name}.fc2", component, inter, h))


def _mamba2_linears(arch: ModelArch, tp: int) -> tuple[Linear, ...]:
    """A Mamba-2 mixer's GEMMs on one TP rank: in_proj (z, x, B, C, dt) and out_proj (vLLM mamba_mixer2.py)."""
    c = arch.config
    nh = int(c.get("mamba_num_heads") or 0)
    inter = nh * int(c.get("mamba_head_dim") or 0)
    gn = int(c.get("n_groups") or 1) * int(c.get("ssm_state_size") or 0)
    return (Linear("mamba_in_proj", "attn", arch.hidden_size, (2 * inter + 2 * gn + nh) // tp),
            Linear("mamba_out_proj", "attn", inter // tp, arch.hidden_size))


def model_shapes(arch: ModelArch, tp: int = 1, dp: int = 1, expert_parallel: bool = False) -> ModelShapes:
    """Per-GPU shapes of ``arch`` under tensor parallel ``tp``; routed experts split over tp x dp (whole experts
    under expert parallel, each expert's width otherwise: vLLM FusedMoEParallelConfig, see weights.moe_shards)."""
    c = arch.config
    h = arch.hidden_size
    gated = arch.gated_mlp
    windows = _layer_windows(arch)
    moe_flags = _moe_layers(arch)
    E = _int(c, "num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts", default=0) or 0
    top_k = _int(c, "num_experts_per_tok", "experts_per_token", "moe_topk", "moe_k", default=0) or 0
    inter = (_int(c, "intermediate_size_mlp", "intermediate_size", "ffn_hidden_size", "n_inner", default=4 * h)
             or 4 * h)
    moe_inter = _int(c, "moe_intermediate_size", "intermediate_size", default=inter) or inter
    ep = tp * dp if (expert_parallel and E) else 1

    # Nemotron-NAS (models/nas.py): each block has its own MLP width, some no attention or no MLP
    blocks = nas.blocks(c) if len(nas.blocks(c) or ()) == arch.num_layers else None
    # Nemotron-H (hybrid_override_pattern): one mixer OR one MLP per layer: M Mamba-2, * attention, - MLP, E MoE
    pattern = c.get("hybrid_override_pattern")
    pattern = pattern if isinstance(pattern, str) and len(pattern) == arch.num_layers else None
    groups: dict[tuple, int] = {}
    for i in range(arch.num_layers):
        if pattern:
            ch = pattern[i]
            key = (windows[i], ch == "E", ch == "*", inter if ch == "-" else 0, ch)
        else:
            key = (windows[i], moe_flags[i], nas.has_attention(blocks[i]) if blocks else True,
                   nas.ffn_width(blocks[i], h) if blocks else inter, "")
        groups[key] = groups.get(key, 0) + 1

    out: list[LayerGroup] = []
    for (window, is_moe, has_attn, width, ch), count in groups.items():
        attn_lins, attn = _attention(arch, tp, window)
        if not has_attn:
            attn_lins, attn = (), AttentionSpec("gqa", 0, 0, 0, 0, 0, 0, window)
        if ch == "M":        # Mamba-2 mixer: in_proj and out_proj GEMMs (the recurrent state traffic is not costed)
            attn_lins = _mamba2_linears(arch, tp)
        if ch in ("M", "*"):
            out.append(LayerGroup(count, attn_lins, attn, (), None, attn_lins[-1].k if ch == "M" else 0))
            continue
        if is_moe:
            if ep > 1:
                local, shard = max(1, E // ep), 1
            else:   # TP x DP: vLLM flattens the DP ranks into the experts' TP split (weights.moe_shards)
                local, shard = E, tp * max(1, dp)
            # Nemotron-H experts are squared-ReLU up/down (no gate: vLLM FusedMoE "relu2_no_mul"); latent MoE
            # (moe_latent_size, Nemotron 3 Super) runs them in the latent width behind two dense projections
            e_gated = gated and str(c.get("mlp_hidden_act") or "") != "relu2"
            lat = _int(c, "moe_latent_size", default=0) or 0
            expert = _mlp("expert", "experts", lat or h, moe_inter // shard, e_gated)
            moe = MoESpec(E, top_k, local, expert, ep)
            shared_inter = shared_expert_intermediate(arch)
            if arch.model_type == "nemotron_h":
                shared_inter = int(c.get("n_shared_experts") or 0) * int(c.get("moe_shared_expert_intermediate_size")
                                                                        or 0)
            mlp_lins: tuple[Linear, ...] = (Linear("router", "router", h, E),)
            if lat:
                mlp_lins = mlp_lins + (Linear("latent_in", "shared", h, lat // tp), Linear("latent_out", "shared",
                                                                                         lat // tp, h))
            if shared_inter:
                mlp_lins = mlp_lins + _mlp("shared_expert", "shared", h, shared_inter // tp, e_gated)
            act = (top_k * moe_inter) // shard + shared_inter // tp
            if c.get("enable_moe_block"):        # Gemma 4: a dense MLP beside the experts in every layer
                mlp_lins = mlp_lins + _mlp("mlp", "mlp", h, inter // tp, gated)
                act += inter // tp
        else:
            moe = None
            mlp_lins = _mlp("mlp", "mlp", h, width // tp, gated and ch != "-") if width else ()
            act = width // tp
        out.append(LayerGroup(count, attn_lins, attn, mlp_lins, moe, act))

    lm_head = Linear("lm_head", "lm_head", h, arch.vocab_size // tp)
    return ModelShapes(arch.id, h, arch.vocab_size, arch.num_layers, tuple(out), lm_head, tp, ep, gated)
