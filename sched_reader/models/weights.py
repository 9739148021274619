"""Weights per GPU: what vLLM reports as "Model loading took X GiB".

Parameters are counted from the Hugging Face config (``ModelArch.config``), grouped into components,
split across tensor-parallel ranks and pipeline-parallel stages the way vLLM shards its layers, and
multiplied by the bytes each weight occupies in GPU memory after loading (model dtype, or the
quantized layout vLLM keeps at run time). Buffers vLLM allocates at load time (rotary cos/sin caches,
MLA absorbed matrices) are added as ``other_buffers``.

Units: parameters are element counts; bytes are bytes per GPU; GiB = 2**30 bytes.
The figure per GPU is the largest pipeline stage (vLLM logs it per worker).

Sources (facts only, read in vLLM's source tree):
- vocab padding to a multiple of 64 per partition: vllm/model_executor/layers/vocab_parallel_embedding.py
  (DEFAULT_VOCAB_PADDING_SIZE = 64) https://github.com/vllm-project/vllm
- KV heads replicated when num_kv_heads < tp: vllm/model_executor/layers/linear.py QKVParallelLinear
- pipeline layer split: vllm/distributed/utils.py get_pp_indices
- rotary caches: vllm/model_executor/layers/rotary_embedding (cos_sin_cache of
  max_positions x rotary_dim, cast to the model dtype)
"""

from typing import Any

from pydantic import ConfigDict, Field

from sched_reader.data_model import DataModel, new_dict, new_list
from sched_reader.models.architecture import ModelArch
from sched_reader.models.config_keys import FALCON_TYPES
from sched_reader.models.engine_spec import EffectiveConfig
from sched_reader.models.gpu import GPU
from sched_reader.versions import parse_version
from sched_reader.models import dsv4, layer_geometry, nas
from sched_reader.models.hybrid import layer_mixers, mixer_params

GIB = 2**30
VOCAB_PADDING = 64  # vLLM DEFAULT_VOCAB_PADDING_SIZE

COMPONENTS = (
    "embedding", "lm_head", "attention", "mlp_dense", "moe_routed_experts", "moe_shared",
    "router", "norms", "vision", "other_buffers", "allocator_rounding",
)

DTYPE_BYTES = {"float32": 4, "float": 4, "bfloat16": 2, "float16": 2, "half": 2, "fp32": 4,
               "bf16": 2, "fp16": 2}


class Term(DataModel):
    """One explained quantity: ``value`` = ``formula`` evaluated on ``inputs``, in ``unit``.

    ``guessed`` is True when an input is an estimate rather than a fact from the config or vLLM's code.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    formula: str
    inputs: dict[str, Any] = Field(default_factory=new_dict)
    value: float
    unit: str
    guessed: bool = False


class WeightComponent(DataModel):
    """One group of weights. ``params_*`` are element counts; ``bytes_per_gpu`` on the largest stage."""

    name: str
    params_total: int = 0          # whole model, unsharded
    params_per_gpu: int = 0        # on the largest pipeline stage, one TP rank
    bytes_per_weight: float = 0.0  # bytes one stored element takes in GPU memory (incl. scales)
    bytes_per_gpu: int = 0
    note: str = ""


class WeightBreakdown(DataModel):
    """Weights of one model on one GPU (largest pipeline stage, one tensor-parallel rank)."""

    model_id: str
    weight_format: str                       # bf16 | fp16 | fp32 | fp8 | w4a16 | mxfp4 | nvfp4 | ...
    components: dict[str, WeightComponent]
    params_total: int                        # whole model (incl. vision tower if loaded)
    params_per_gpu: int
    bytes_per_gpu: int                       # incl. other_buffers
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    pp_stage: int = 0                        # index of the stage reported (the largest)
    stage_bytes: list[int] = Field(default_factory=new_list)  # bytes per GPU for every PP stage
    explain: list[Term] = Field(default_factory=new_list)

    @property
    def gib_per_gpu(self) -> float:
        return self.bytes_per_gpu / GIB

    def component_bytes(self, name: str) -> int:
        c = self.components.get(name)
        return c.bytes_per_gpu if c else 0


# ----------------------------------------------------------------------------------- helpers

def moe_shards(cfg: EffectiveConfig) -> int:
    """GPUs one MoE layer's routed experts are spread over: tensor parallel x data parallel.

    vLLM shards the routed experts across every DP x TP GPU, while attention, dense MLPs, shared experts and
    embeddings stay per TP group (each DP rank holds its own copy). Without expert parallelism each GPU holds
    1/(TP x DP) of every expert's intermediate width; with ``--enable-expert-parallel`` it holds E/(TP x DP)
    whole experts: the same bytes. Source: vLLM 0.8.0 model_executor/layers/fused_moe/layer.py FusedMoE.__init__
    ("Adjust TP size for DP attention": ``self.tp_size = self.tp_size * self.dp_size``, EP: ``self.ep_size =
    self.tp_size * self.dp_size``); 0.9.0 layer.py FusedMoEParallelConfig.make ``flatten_tp_across_dp``; 0.14.1
    fused_moe/config.py ``flatten_tp_across_dp_and_pcp`` (``flatten_tp_size = dp_size * pcp_size * tp_size``;
    with EP ``ep_size = tp_size``, the flattened size). vLLM 0.7.x had no data parallel engine: every release
    with ``--data-parallel-size`` (0.8.0's VLLM_DP_SIZE, the flag from 0.8.3) flattens."""
    return max(1, int(cfg.tensor_parallel_size)) * max(1, int(cfg.data_parallel_size))


def pad_up(x: int, multiple: int) -> int:
    """Round ``x`` up to a multiple of ``multiple``."""
    return -(-x // multiple) * multiple


def get_pp_indices(num_layers: int, pp_rank: int, pp_size: int) -> tuple[int, int]:
    """vLLM's default pipeline split: equal shares, the remainder added to the stages before the last."""
    per = num_layers // pp_size
    parts = [per] * pp_size
    rem = num_layers % pp_size
    for i in range(2, rem + 2):
        parts[-i] += 1
    start = sum(parts[:pp_rank])
    return start, start + parts[pp_rank]


def vocab_rows_per_rank(vocab: int, tp: int) -> int:
    """Rows of a vocab-parallel embedding / lm_head on one TP rank (padded to 64, then split)."""
    padded = pad_up(vocab, VOCAB_PADDING)
    return -(-padded // tp)


def kv_heads_per_rank(num_kv_heads: int, tp: int) -> int:
    """KV heads one TP rank holds: split when kv >= tp, else each rank keeps one (replicated)."""
    return max(1, num_kv_heads // tp)


def model_dtype_bytes(arch: ModelArch, cfg: EffectiveConfig) -> int:
    """Bytes of one unquantized element (the resolved ``--dtype``; ``auto`` follows the config)."""
    d = (cfg.dtype or "auto").replace("torch.", "")
    if d == "auto":
        d = arch.torch_dtype.replace("torch.", "")
        if d == "float32":  # vLLM serves float32 checkpoints in bfloat16/float16 under auto
            d = "bfloat16"
    return DTYPE_BYTES.get(d, 2)


# ----------------------------------------------------------------------------------- quantization

class QuantLayout(DataModel):
    """How vLLM stores quantized linear weights in GPU memory."""

    name: str
    bytes_per_weight: float        # incl. amortised scales / zero points
    quantize_attention: bool = True
    quantize_dense_mlp: bool = True
    quantize_experts: bool = True
    quantize_shared: bool | None = None   # shared experts; None: as quantize_dense_mlp
    by_kind: dict[str, float] = {}  # bytes per weight per component when formats differ (mixed precision)
    # bytes per output channel of every quantized linear: compressed-tensors 8-bit "channel" strategy keeps a float32
    # weight_scale of shape (sum(output_partition_sizes), 1) (vllm compressed_tensors_w8a8_int8.py / _w8a8_fp8.py
    # create_weights, ChannelQuantScaleParameter); 0 when scales are per tensor or already in bytes_per_weight
    channel_scale_bytes: int = 0
    note: str = ""


def _cfg_quant(arch: ModelArch) -> dict[str, Any]:
    return dict(arch.quantization_config or {})


def _compressed_tensors_layout(qc: dict[str, Any]) -> QuantLayout:
    groups = qc.get("config_groups") or {}
    w: dict[str, Any] = {}
    for g in groups.values():
        w = g.get("weights") or {}
        break
    bits = int(w.get("num_bits", 8))
    typ = str(w.get("type", "int"))
    gs = w.get("group_size")
    sym = w.get("symmetric", True)
    ch = 4 if str(w.get("strategy", "")).lower() == "channel" else 0
    if bits == 8 and typ == "float":
        return QuantLayout(name="fp8", bytes_per_weight=1.0, channel_scale_bytes=ch,
                           note="compressed-tensors FP8" + (" (fp32 scale per output channel)" if ch else ""))
    if bits == 8:
        return QuantLayout(name="int8", bytes_per_weight=1.0, channel_scale_bytes=ch,
                           note="compressed-tensors INT8" + (" (fp32 scale per output channel)" if ch else ""))
    if bits == 4 and typ == "float":
        kept = _ignored_kinds(qc.get("ignore"))
        left = f"; {', '.join(sorted(kept))} left in 16 bits (ignore list)" if kept else ""
        if "mxfp4" in str(qc.get("format") or "") or (gs and int(gs) == 32):
            # MXFP4 (E2M1 + one uint8 E8M0 scale per 32; Kimi-K3's "mxfp4-pack-quantized" routed experts)
            return QuantLayout(name="mxfp4", bytes_per_weight=0.5 + 1 / 32, quantize_attention="attention" not in kept,
                               quantize_dense_mlp="mlp_dense" not in kept, quantize_shared="moe_shared" not in kept,
                               note="compressed-tensors MXFP4 (E2M1 + E8M0 per 32)" + left)
        return QuantLayout(name="nvfp4", bytes_per_weight=0.5 + 1 / 16, quantize_attention="attention" not in kept,
                           quantize_dense_mlp="mlp_dense" not in kept, quantize_shared="moe_shared" not in kept,
                           note="compressed-tensors NVFP4" + left)
    g = int(gs) if gs else 128
    zp = 0.0 if sym else 0.5 / g
    kept = _ignored_kinds(qc.get("ignore"))
    return QuantLayout(name=f"w{bits}a16", bytes_per_weight=bits / 8 + 2 / g + zp,
                       quantize_attention="attention" not in kept, quantize_dense_mlp="mlp_dense" not in kept,
                       quantize_shared="moe_shared" not in kept,
                       note=f"compressed-tensors w{bits}a16, group {g}, fp16 scales"
                       + (f"; {', '.join(sorted(kept))} left in 16 bits (ignore list)" if kept else ""))


# One representative checkpoint module name per weight component, tested against a compressed-tensors ``ignore``
# list (exact names, or ``re:`` regular expressions as llm-compressor writes them; e.g. Kimi-K2-Thinking's INT4
# checkpoint ignores ``re:.*self_attn.*``, ``re:.*shared_experts.*`` and ``re:.*mlp\.(gate|up|gate_up|down)_proj.*``).
_KIND_PROBES = {"attention": ("model.layers.1.self_attn.q_proj", "model.layers.1.self_attn.o_proj"),
                "mlp_dense": ("model.layers.0.mlp.gate_proj", "model.layers.0.mlp.down_proj"),
                "moe_shared": ("model.layers.1.mlp.shared_experts.gate_proj", "model.layers.1.mlp.shared_expert.gate_proj")}


def _ignored_kinds(ignore: Any) -> set[str]:
    """Weight components a compressed-tensors ``ignore`` list keeps unquantized: ``re:`` entries are matched with
    ``re.match`` against the module name, plain entries by equality (compressed-tensors ``find_name_or_class_matches``)."""
    import re

    if not isinstance(ignore, list):
        return set()
    out = set()
    for kind, probes in _KIND_PROBES.items():
        for item in ignore:
            text = str(item)
            try:
                hit = any(re.match(text[3:], n) for n in probes) if text.startswith("re:") else text in probes
            except re.error:
                hit = False
            if hit:
                out.add(kind)
                break
    return out


# ModelOpt per-layer algorithms -> bytes per stored weight (incl. scales): FP8 per-tensor; NVFP4 E2M1 + FP8 per 16
_MODELOPT_ALGO_BYTES = {"FP8": 1.0, "NVFP4": 0.5 + 1 / 16, "W4A16_NVFP4": 0.5 + 1 / 16}


def _layer_kind(name: str) -> str | None:
    """Weight component of a checkpoint module name (``model.layers.3.mlp.gate_proj`` -> mlp_dense)."""
    if ".self_attn." in name or ".linear_attn." in name or ".mixer." in name:
        return "attention"
    if ".shared_expert" in name:
        return "moe_shared"
    if ".experts." in name:
        return "moe_routed_experts"
    if ".mlp." in name:
        return "mlp_dense"
    return None


def _modelopt_mixed_layout(qc: dict[str, Any]) -> QuantLayout | None:
    """ModelOpt ``quant_algo: MIXED_PRECISION``: ``quantized_layers`` names each module's algorithm (e.g. Qwen3.6
    NVFP4: attention and Gated DeltaNet projections FP8, MLP NVFP4); the most common one per component. The
    lm_head stays in the model dtype here as in the other layouts."""
    layers = qc.get("quantized_layers")
    if not isinstance(layers, dict) or not layers:
        return None
    counts: dict[str, dict[float, int]] = {}
    for name, spec in layers.items():
        kind = _layer_kind(str(name))
        algo = str((spec or {}).get("quant_algo", "")).upper() if isinstance(spec, dict) else ""
        if kind and algo in _MODELOPT_ALGO_BYTES:
            b = _MODELOPT_ALGO_BYTES[algo]
            counts.setdefault(kind, {})[b] = counts.setdefault(kind, {}).get(b, 0) + 1
    if not counts:
        return None
    by_kind = {k: max(v.items(), key=lambda kv: kv[1])[0] for k, v in counts.items()}
    return QuantLayout(name="modelopt_mixed", bytes_per_weight=max(by_kind.values()), by_kind=by_kind,
                       note="ModelOpt mixed precision: " + ", ".join(
                           f"{k} {'FP8' if b == 1.0 else 'NVFP4'}" for k, b in sorted(by_kind.items())))


def quant_layout(arch: ModelArch, cfg: EffectiveConfig, checkpoint_quantization: str | None) -> QuantLayout | None:
    """The run-time layout of quantized linear layers, or None for an unquantized model.

    The checkpoint's ``quantization_config`` wins over a name hint; ``--quantization fp8`` on an
    unquantized checkpoint quantizes every linear layer to 1 byte (per-tensor scale).
    """
    qc = _cfg_quant(arch)
    method = str(qc.get("quant_method") or checkpoint_quantization or cfg.quantization or "").lower()
    if not method or method in ("none", "bf16", "bfloat16", "fp16", "float16"):
        return None
    if method in ("compressed-tensors", "compressed_tensors") and qc:
        return _compressed_tensors_layout(qc)
    if method == "modelopt" and str(qc.get("quant_algo", "")).upper() == "MIXED_PRECISION":
        mixed = _modelopt_mixed_layout(qc)
        if mixed is not None:
            return mixed
    if method in ("fp8", "fbgemm_fp8", "modelopt", "ptpc_fp8", "fp8_dynamic", "fp8-dynamic",
                  "compressed-tensors", "compressed_tensors"):
        blk = qc.get("weight_block_size")
        extra = 4.0 / (blk[0] * blk[1]) if blk else 0.0
        if str(arch.config.get("expert_dtype") or "").lower() == "fp4" and checkpoint_quantization in (None, "fp8"):
            # DeepSeek-V4 releases: routed experts FP4 (E2M1 + a UE8M0 scale per 32, ``expert_dtype: fp4``),
            # everything else block FP8 (``quantization_config``)
            fp8 = 1.0 + extra
            return QuantLayout(name="fp8", bytes_per_weight=fp8,
                               by_kind={"attention": fp8, "mlp_dense": fp8, "moe_shared": fp8,
                                        "moe_routed_experts": 0.5 + 1 / 32},
                               note="routed experts FP4 (E2M1 + UE8M0 per 32), the rest block FP8")
        return QuantLayout(name="fp8", bytes_per_weight=1.0 + extra,
                           note="FP8 E4M3" + (f", fp32 scale per {blk[0]}x{blk[1]} block" if blk else ""))
    if method in ("mxfp8", "modelopt_mxfp8"):   # OCP MX FP8: E4M3 elements + one E8M0 scale byte per 32
        return QuantLayout(name="mxfp8", bytes_per_weight=1.0 + 1 / 32, note="MXFP8 (E4M3 + E8M0 per 32)")
    if method in ("mxfp4",):
        if not qc.get("quant_method"):
            # a name-only MXFP4 checkpoint (amd/...-MXFP4-Preview): AMD Quark's w_mxfp4_a_mxfp4, whose default exclusion
            # is lm_head alone, so every other linear layer is MXFP4 (Llama-3.1-405B / Llama-3.3-70B-Instruct-MXFP4-Preview
            # model cards: quantize_quark.py --quant_scheme w_mxfp4_a_mxfp4, no --exclude_layers beyond lm_head); AMD's MoE
            # releases also exclude attention and the router (DeepSeek-R1-0528-MXFP4-Preview: --exclude_layers
            # "*self_attn* *mlp.gate.* *lm_head"), quantizing dense MLPs, shared and routed experts
            # (layout "mxfp4_w4a4": MXFP4 activations too, so the GEMMs run on FP4 matrix cores where the GPU has them,
            # models/cost/precision.py; vLLM's QuarkW4A4MXFP4 runs AITER's FP4 GEMM on gfx950)
            moe = bool(_routed_experts(arch.config))
            return QuantLayout(name="mxfp4_w4a4", bytes_per_weight=0.5 + 1 / 32, quantize_attention=not moe,
                               quantize_dense_mlp=True,
                               note="AMD Quark MXFP4 (E2M1 + E8M0 per 32): " + (
                                   "MLPs and experts; attention and router excluded" if moe
                                   else "every linear layer but lm_head"))
        return QuantLayout(name="mxfp4", bytes_per_weight=0.5 + 1 / 32, quantize_attention=False,
                           quantize_dense_mlp=False, note="MXFP4 experts only (E2M1 + E8M0 per 32)")
    if method in ("nvfp4", "modelopt_fp4"):
        return QuantLayout(name="nvfp4", bytes_per_weight=0.5 + 1 / 16, note="NVFP4 (E2M1 + FP8 per 16)")
    if method in ("w8a16", "gptq_int8"):
        g = int(qc.get("group_size", 128) or 128)
        return QuantLayout(name="w8a16", bytes_per_weight=1.0 + 2 / max(g, 1), note=f"{method} 8-bit weights, fp16 scales")
    if method in ("bnb_4bit", "bitsandbytes_4bit"):
        return QuantLayout(name="bnb_4bit", bytes_per_weight=0.5 + 4 / 64, note="bitsandbytes NF4, fp32 absmax per 64 (guessed)")
    if method in ("gptq", "gptq_marlin", "awq", "awq_marlin", "w4a16", "int4", "marlin"):
        bits = int(qc.get("bits", 4))
        g = int(qc.get("group_size", 128) or 128)
        if g <= 0:
            g = 4096
        zp = 0.5 / g if (method.startswith("awq") or not qc.get("sym", True)) else 0.0
        return QuantLayout(name=f"w{bits}a16", bytes_per_weight=bits / 8 + 2 / g + zp,
                           note=f"{method} {bits}-bit, group {g}, fp16 scales")
    if method == "w8a8":
        # a "quantized.w8a8" / "-W8A8" checkpoint named without its config: compressed-tensors INT8, whose published
        # recipes quantize weights per output channel (fp32 weight_scale (N, 1)) and activations per token
        return QuantLayout(name="int8", bytes_per_weight=1.0, channel_scale_bytes=4,
                           note="w8a8 (compressed-tensors INT8, fp32 scale per output channel assumed)")
    if method in ("int8", "smoothquant", "bitsandbytes", "experts_int8"):
        return QuantLayout(name="int8", bytes_per_weight=1.0, note=method)
    return None


# ----------------------------------------------------------------------------------- counting

def _routed_experts(c: dict[str, Any]) -> int:
    """Routed experts an HF config declares (0 for a dense model), under the names is_moe_layer reads."""
    return int(c.get("n_routed_experts") or c.get("num_experts") or c.get("num_local_experts")
               or c.get("moe_num_experts") or 0)


def is_moe_layer(c: dict[str, Any], i: int) -> bool:
    """Whether decoder layer ``i`` (0-based) of an HF config is a mixture-of-experts layer in vLLM."""
    pat = c.get("hybrid_override_pattern")
    if isinstance(pat, str) and i < len(pat):  # Nemotron-H / Nemotron 3: 'E' marks a MoE block
        return pat[i] == "E"
    freq_list = c.get("moe_layer_freq")
    if isinstance(freq_list, list) and i < len(freq_list) and (c.get("n_routed_experts") or c.get("num_local_experts")):
        return bool(freq_list[i])     # per-layer 0/1 list (MiniMax-M3, MiMo-V2-Flash)
    if c.get("n_routed_experts"):  # DeepSeek family
        k = int(c.get("first_k_dense_replace", 0) or 0)
        freq = int(c.get("moe_layer_freq", 1) or 1)
        return i >= k and i % freq == 0
    if c.get("moe_num_experts"):  # ERNIE-4.5 MoE: vLLM ernie45_moe.py Ernie4_5_MoeDecoderLayer
        end = c.get("moe_layer_end_index")
        end = int(c.get("num_hidden_layers", 0)) - 1 if end is None or int(end) < 0 else int(end)
        step = int(c.get("moe_layer_interval", 1) or 1)
        return int(c.get("moe_layer_start_index", 0) or 0) <= i <= end and (i + 1) % step == 0
    n_exp = c.get("num_experts") or c.get("num_local_experts")
    if not n_exp:
        return False
    if "interleave_moe_layer_step" in c:  # Llama-4: MoE every `step`-th layer (vLLM Llama4DecoderLayer)
        step = int(c.get("interleave_moe_layer_step") or 0)
        return step > 0 and (i + 1) % step == 0
    if i in (c.get("mlp_only_layers") or []):
        return False
    mlt = c.get("mlp_layer_types")
    if isinstance(mlt, list) and i < len(mlt):    # Laguna: "dense" / "sparse" per layer
        return str(mlt[i]) != "dense"
    step = int(c.get("decoder_sparse_step", 1) or 1)
    return (i + 1) % step == 0


def _attention_params(c: dict[str, Any], arch: ModelArch, tp: int,
                      layer: int = 0) -> tuple[int, int, int, dict[str, int]]:
    """(params total, params per rank, norm params per rank, detail) of one attention block."""
    h = arch.hidden_size
    if arch.is_mla:
        heads = arch.num_attention_heads
        nope, rope = int(c["qk_nope_head_dim"]), int(c["qk_rope_head_dim"])
        v = int(c["v_head_dim"])
        kvr = int(c["kv_lora_rank"])
        qr = c.get("q_lora_rank")
        hpr = heads // tp
        sharded = 0
        replicated = h * (kvr + rope)                # kv_a_proj_with_mqa
        norms = kvr                                  # kv_a_layernorm
        if qr:
            replicated += h * int(qr)                # q_a_proj
            norms += int(qr)                         # q_a_layernorm
            q_b = int(qr) * heads * (nope + rope)
        else:
            q_b = h * heads * (nope + rope)          # q_proj
        sharded += q_b + kvr * heads * (nope + v) + heads * v * h
        if c.get("mla_use_output_gate"):     # Kimi-K3 gated MLA: hidden -> heads x v_head_dim output gate
            sharded += h * heads * v
        per_rank_sharded = sharded // tp
        total = sharded + replicated
        return total, per_rank_sharded + replicated, norms, {"heads_per_rank": hpr}
    heads = layer_geometry.q_heads(arch, layer)             # Laguna: per-layer query heads
    kv, hd = layer_geometry.kv_geometry(arch, layer)       # Gemma 4 full layers: fewer, wider KV heads
    vhd = layer_geometry.v_head_dim(arch, layer)            # MiMo-V2: V narrower than Q / K
    q_out, kv_out = heads * layer_geometry.q_head_dim(arch, layer), kv * hd
    n_kv = 2 if layer_geometry.has_v_proj(arch, layer) else 1   # K = V (attention_k_eq_v): no v_proj
    bias = bool(c.get("attention_bias") or c.get("qkv_bias") or arch.model_type in ("qwen2", "qwen2_moe")
                or _opt_bias(arch))
    o_bias = (bool(c.get("attention_bias")) and arch.model_type in ("gpt_oss", "phimoe")) or _opt_bias(arch)
    kvr = kv_heads_per_rank(kv, tp)
    kv_cols = kv_out + (n_kv - 1) * kv * vhd                 # K, and V at its own width
    kv_cols_rank = kvr * hd + (n_kv - 1) * kvr * vhd
    o_in = heads * vhd if vhd != hd else q_out
    qkv_total = h * (q_out + kv_cols) + (q_out + kv_cols if bias else 0)
    qkv_rank = h * (q_out // tp + kv_cols_rank) + ((q_out // tp + kv_cols_rank) if bias else 0)
    o_total = o_in * h + (h if o_bias else 0)
    o_rank = (o_in // tp) * h + (h if o_bias else 0)
    gate = layer_geometry.output_gate_width(arch, layer)    # Laguna g_proj (hidden -> heads or heads x dim)
    qkv_total += h * gate
    qkv_rank += h * gate // tp
    sinks_total = heads if arch.model_type == "gpt_oss" else 0
    norms = 0
    if arch.model_type == "gemma4_text":     # q_norm + k_norm over the layer's head width
        norms = 2 * hd
    elif arch.model_type in ("olmo2", "olmo3"):
        # OLMo 2 / 3: q_norm / k_norm RMSNorms span all heads (num_heads x head_dim, num_kv_heads x head_dim),
        # not one head (transformers Olmo2Attention; vLLM olmo2.py normalises the gathered q / k)
        norms = (heads + kv) * hd
    elif arch.model_type in ("qwen3", "qwen3_moe", "gemma3", "gemma3_text", "laguna", "lfm2") or arch.model_type.startswith(
            "qwen3_vl") or (                                # Qwen3-VL text attention keeps Qwen3's q_norm / k_norm
            c.get("use_qk_norm") and not arch.model_type.startswith("llama4")):  # Llama-4's qk norm has no weight
        norms = 2 * hd
    return (qkv_total + o_total + sinks_total, qkv_rank + o_rank + sinks_total // tp, norms,
            {"kv_heads_per_rank": kvr})


def _mlp_dense_params(h: int, inter: int, tp: int, gated: bool = True, bias: bool = False) -> tuple[int, int]:
    n = (3 if gated else 2) * h * inter
    b = inter + h if bias else 0      # fc1 bias (split with its columns) + fc2 bias (replicated)
    return n + b, n // tp + (inter // tp + h if bias else 0)


# Decoders whose norms are LayerNorms with a bias (vLLM opt.py; phimoe.py PhiMoEDecoderLayer nn.LayerNorm)
_LAYERNORM_BIAS = ("opt", "phimoe")


def _opt_bias(arch: ModelArch) -> bool:
    """OPT: every linear layer has a bias (``enable_bias``, OPTConfig default True; vLLM opt.py); Phi-1 / Phi-2 too
    (PhiAttention q / k / v / dense and PhiMLP fc1 / fc2 with bias; vLLM phi.py)."""
    return (arch.model_type == "opt" and bool(arch.config.get("enable_bias", True))) or arch.model_type == "phi"


def position_embedding_params(arch: ModelArch) -> int:
    """Learned absolute position table (OPT: ``max_position_embeddings + 2`` rows of the hidden width,
    OPTLearnedPositionalEmbedding's offset of 2; rotary models have none)."""
    if arch.model_type == "opt":
        return (int(arch.config.get("max_position_embeddings") or 2048) + 2) * arch.hidden_size
    return 0


def _norms_per_layer(arch: ModelArch) -> int:
    """Norm parameters of one decoder layer (weights, plus biases where the norm is a LayerNorm with bias)."""
    h = arch.hidden_size
    c = arch.config
    if arch.model_type in ("gemma2", "gemma3", "gemma3_text", "gemma4_text", "glm4"):
        return 4 * h        # glm4 (GLM-4-0414): input, post_self_attn, post_attention, post_mlp norms
    if arch.model_type in ("cohere", "cohere2"):   # parallel block: one input_layernorm, weight only (vLLM commandr.py)
        return h
    if arch.model_type in _LAYERNORM_BIAS:   # two LayerNorms with bias (OPT: self_attn / final_layer_norm)
        return 4 * h
    if arch.model_type in FALCON_TYPES:   # LayerNorms with bias (vLLM falcon.py FalconDecoderLayer)
        if c.get("new_decoder_architecture"):
            return 2 * int(c.get("num_ln_in_parallel_attn") or 2) * h   # ln_attn + ln_mlp (40B / 180B)
        return 2 * h if c.get("parallel_attn", True) else 4 * h       # Falcon-7B: one input_layernorm
    return 2 * h


def final_norm_params(arch: ModelArch) -> int:
    """Parameters of the norm after the last layer (Falcon's ln_f is a LayerNorm with bias)."""
    return 2 * arch.hidden_size if arch.model_type in FALCON_TYPES or arch.model_type in (*_LAYERNORM_BIAS, "phi", "gptj") \
        else arch.hidden_size


def dense_intermediate(arch: ModelArch, i: int | None = None) -> int:
    """MLP width of the dense (non-MoE) layers (Llama-4 keeps it in ``intermediate_size_mlp``); with a layer
    index, that layer's width (Nemotron-NAS models size every block on its own: models/nas.py)."""
    c = arch.config
    if i is not None:
        w = nas.layer_ffn_width(arch, i)
        if w is not None:
            return w
        if c.get("use_double_wide_mlp") and layer_geometry.is_kv_shared_layer(arch, i):
            return 2 * int(c["intermediate_size"])   # Gemma 4 E2B: KV-shared layers run a 2x-wide MLP
    return int(c.get("intermediate_size_mlp") or c.get("intermediate_size"))


def shared_expert_intermediate(arch: ModelArch) -> int:
    """Total width of the shared expert(s) of a MoE layer (0 when none)."""
    c = arch.config
    if c.get("shared_expert_intermediate_size"):
        return int(c["shared_expert_intermediate_size"])
    if arch.model_type == "granitemoehybrid" and c.get("shared_intermediate_size"):   # Granite 4.0 shared_mlp
        return int(c["shared_intermediate_size"])
    mi = int(c.get("moe_intermediate_size") or c.get("intermediate_size") or 0)
    n_sh = int(c.get("n_shared_experts") or c.get("moe_num_shared_experts") or 0)   # ERNIE: moe_num_shared_experts
    if arch.model_type.startswith("llama4"):  # one shared expert of the routed size per MoE layer
        n_sh = 1
    return n_sh * mi


class _Layer(DataModel):
    attention: tuple[int, int] = (0, 0)
    mlp_dense: tuple[int, int] = (0, 0)
    moe_routed: tuple[int, int] = (0, 0)
    moe_shared: tuple[int, int] = (0, 0)
    router: tuple[int, int] = (0, 0)
    norms: tuple[int, int] = (0, 0)
    expert_bias: tuple[int, int] = (0, 0)   # gpt-oss expert biases, kept in bf16


def _layer_params(arch: ModelArch, i: int, tp: int, moe_tp: int | None = None) -> _Layer:
    """Parameters of decoder layer ``i`` (whole model, one rank). ``moe_tp``: the ranks the routed experts are
    split over (``moe_shards``: TP x DP with data parallelism), ``tp`` when None."""
    mt = moe_tp or tp
    c = arch.config
    h = arch.hidden_size
    mixers = layer_mixers(arch)
    mixer = mixers[i] if mixers else "attention"
    if mixer == "attention" and dsv4.is_dsv4(arch):   # DeepSeek-V4 compressed attention (models/dsv4.py)
        a_tot, a_rank, qk_norms = dsv4.attention_params(arch, i, tp)
    elif mixer == "attention":
        a_tot, a_rank, qk_norms, _ = _attention_params(c, arch, tp, i)
        if arch.has_indexer(i):   # DSA lightning indexer, replicated on every rank (vLLM deepseek_v2.py Indexer)
            ih, idim = int(c.get("index_n_heads") or 64), int(c.get("index_head_dim") or 128)
            ind = int(c.get("q_lora_rank") or h) * ih * idim + h * idim + h * ih   # wq_b, wk, weights_proj
            a_tot, a_rank = a_tot + ind, a_rank + ind
            qk_norms += 2 * idim                                                  # k_norm (weight + bias)
        if arch.model_type.startswith("qwen3_next") or arch.model_type.startswith("qwen3_5"):
            a_tot += h * arch.num_attention_heads * arch.head_dim      # gated attention: q_proj also emits the gate
            a_rank += h * arch.num_attention_heads * arch.head_dim // tp
            qk_norms = 2 * arch.head_dim
    elif mixer == "none":
        a_tot, a_rank, qk_norms = 0, 0, 0
    else:
        a_tot, a_rank = mixer_params(arch, mixer, tp)
        qk_norms = 0
    nas_norms = nas.layer_norms(arch, i)
    norms = (_norms_per_layer(arch) if nas_norms is None else nas_norms) + qk_norms
    norms_rank = norms
    if arch.model_type == "cohere" and c.get("use_qk_norm") and mixer == "attention":
        # Command R+: q_norm / k_norm are LayerNorms over (heads, head_dim), one weight row per head, split over
        # TP ranks with the heads (vLLM commandr.py LayerNorm(param_shape=(num_heads, head_dim)))
        hd, kvr = arch.head_dim, kv_heads_per_rank(arch.num_kv_heads, tp)
        norms = _norms_per_layer(arch) + (arch.num_attention_heads + arch.num_kv_heads) * hd
        norms_rank = _norms_per_layer(arch) + (arch.num_attention_heads // tp + kvr) * hd
    if c.get("hybrid_override_pattern"):             # Nemotron-H: one mixer OR one MLP per layer, one norm
        norms = h
        lay = _Layer(attention=(a_tot, a_rank), norms=(norms, norms))
        ch = c["hybrid_override_pattern"][i]
        if ch == "-":
            lay.mlp_dense = _mlp_dense_params(h, dense_intermediate(arch), tp, gated=False)
        elif ch == "E":                              # NemotronHMoE: squared-ReLU experts (up + down, no gate)
            n_exp = int(c.get("n_routed_experts") or 0)
            mi = int(c.get("moe_intermediate_size") or c.get("intermediate_size"))
            # latent MoE (Nemotron 3 Super/Ultra, moe_latent_size): routed experts work in a latent width L,
            # entered and left through fc1_latent_proj (h -> L) and fc2_latent_proj (L -> h)
            lat = int(c.get("moe_latent_size") or 0)
            per_expert = 2 * (lat or h) * mi
            lay.moe_routed = (n_exp * per_expert, n_exp * per_expert // mt)
            r = h * n_exp + n_exp                    # router weight + e_score_correction_bias
            lay.router = (r, r)
            si = int(c.get("n_shared_experts") or 0) * int(c.get("moe_shared_expert_intermediate_size") or 0)
            dense = 2 * h * si + 2 * h * lat         # shared expert (up + down) + latent projections
            if dense:
                lay.moe_shared = (dense, dense // tp)
        return lay
    lay = _Layer(attention=(a_tot, a_rank), norms=(norms, norms_rank))
    if is_moe_layer(c, i):
        n_exp = _routed_experts(c)
        mi = int(c.get("moe_intermediate_size") or c.get("intermediate_size"))
        lat = int(c.get("routed_expert_hidden_size") or 0)   # Kimi-K3 LatentMoE: experts in a latent width
        per_expert = 3 * (lat or h) * mi
        lay.moe_routed = (n_exp * per_expert, n_exp * per_expert // mt)
        r = h * n_exp
        if arch.model_type == "gpt_oss":
            r += n_exp                                   # router bias
            eb = n_exp * (2 * mi + h)
            lay.expert_bias = (eb, n_exp * (2 * mi // mt + h))
        if c.get("topk_method") == "noaux_tc" or c.get("moe_num_experts") or \
                c.get("moe_router_activation_func") == "sigmoid" or c.get("use_moe_router_bias") or \
                (arch.model_type == "minimax_m3" and c.get("use_routing_bias")) or arch.model_type == "laguna":
            r += n_exp                                   # e_score_correction_bias (ERNIE: moe_statics; Kimi-Linear)
        lay.router = (r, r)
        si = shared_expert_intermediate(arch)
        if si and c.get("shared_expert_intermediate_size"):
            t = 3 * h * si + h                           # + shared_expert_gate (Qwen2-MoE)
            lay.moe_shared = (t, 3 * h * si // tp + h)
        elif si:
            t = 3 * h * si
            lay.moe_shared = (t, t // tp)
        if lat:   # hidden -> latent down and latent -> hidden up projections (+ latent norm), replicated
            t = 2 * h * lat + lat
            lay.moe_shared = (lay.moe_shared[0] + t, lay.moe_shared[1] + t)
        if c.get("enable_moe_block"):     # Gemma 4 MoE: a dense MLP runs beside the routed experts in every layer
            lay.mlp_dense = _mlp_dense_params(h, dense_intermediate(arch, i), tp, gated=arch.gated_mlp)
    else:
        lay.mlp_dense = _mlp_dense_params(h, dense_intermediate(arch, i), tp, gated=arch.gated_mlp,
                                          bias=_opt_bias(arch) or arch.model_type == "gptj")   # GPT-J fc_in / fc_out
    ple = layer_geometry.ple_width(arch)
    if ple:   # Gemma 4 E2B / E4B per-layer input: per_layer_input_gate (h -> ple) + per_layer_projection (ple -> h)
        t = 2 * h * ple
        lay.mlp_dense = (lay.mlp_dense[0] + t, lay.mlp_dense[1] + t)
        lay.norms = (lay.norms[0] + h, lay.norms[1] + h)        # post_per_layer_input_norm
    return lay


def _rope_caches(arch: ModelArch) -> list[tuple[str, int, int]]:
    """(label, rows, rotary_dim) of each distinct rotary cos/sin cache vLLM builds at load time."""
    c = arch.config
    rs = c.get("rope_scaling") or c.get("rope_parameters") or {}
    rtype = str(rs.get("rope_type") or rs.get("type") or "default")
    max_pos = int(c.get("max_position_embeddings", 2048) or 2048)
    if arch.is_mla:
        rot = int(c["qk_rope_head_dim"])
    else:
        prf = float(c.get("partial_rotary_factor", 1.0) or 1.0)
        rot = int(arch.head_dim * prf)
    caches: list[tuple[str, int, int]] = []
    factor = float(rs.get("factor", 1.0) or 1.0)
    if rtype in ("yarn", "deepseek_yarn"):
        orig = int(rs.get("original_max_position_embeddings", max_pos))
        rows = int(orig * factor)
    elif rtype in ("linear", "dynamic"):
        rows = int(max_pos * factor)
    else:
        rows = max_pos
    caches.append((rtype, rows, rot))
    if arch.model_type in ("gemma3", "gemma3_text") and c.get("rope_local_base_freq"):
        caches.append(("local", max_pos, rot))
    return caches


def _mllama_vision_params(vc: dict, text_hidden: int) -> int:
    """Llama 3.2 Vision tower + projector, from the shapes transformers' MllamaVisionModel builds.

    (num_hidden_layers + num_global_layers) encoder layers of q/k/v/o (no bias) + fc1/fc2 (bias) + 2 LayerNorms
    (global layers add 2 scalar gates); conv patch embedding (no bias); class embedding; gated positional
    embedding ((P + 1) x hidden) with its tile table (aspect ratios + 1) x (tiles x (P + 1) x hidden); pre/post
    tile positional embeddings (aspect ratios + 1) x (tiles x hidden) + gate; LayerNorm pre/post; projector
    vision_output_dim -> text hidden with bias (modeling_mllama.py / vLLM mllama.py).
    """
    hv, iv = int(vc["hidden_size"]), int(vc["intermediate_size"])
    local, glob = int(vc["num_hidden_layers"]), int(vc.get("num_global_layers") or 0)
    p, tiles = int(vc["patch_size"]), int(vc.get("max_num_tiles") or 4)
    ratios = len(vc.get("supported_aspect_ratios") or [None] * 8) + 1
    positions = (int(vc["image_size"]) // p) ** 2 + 1
    layer = 4 * hv * hv + 2 * hv * iv + iv + hv + 4 * hv
    encoder = (local + glob) * layer + 2 * glob
    embeddings = int(vc.get("num_channels") or 3) * p * p * hv + hv + positions * hv + 1 \
        + ratios * tiles * positions * hv + 2 * (ratios * tiles * hv + 1) + 4 * hv
    out_dim = int(vc.get("vision_output_dim") or hv * (len(vc.get("intermediate_layers_indices") or []) + 1))
    return encoder + embeddings + out_dim * text_hidden + text_hidden


def _vision_params(arch: ModelArch, text_total: int, quantized: bool = False) -> tuple[int, str]:
    """Vision tower + projector parameters (whole tower; split over TP ranks where ``vision_tp_sharded``).

    When the catalog gives the unquantized checkpoint's exact element count, vision = that count minus
    the text model (a quantized checkpoint's count mixes packed elements, so it is not used); otherwise
    a ViT estimate from ``vision_config`` (guessed).
    """
    vc = arch.vision_config
    if not vc:
        counts = str(arch.official_params_counts or "")
        if "vision" in counts and arch.official_params and arch.official_params > text_total and not quantized:
            return arch.official_params - text_total, f"checkpoint element count ({counts}) minus the text model"
        return 0, ""
    if arch.official_params and arch.official_params > text_total and not quantized:
        return arch.official_params - text_total, "checkpoint element count minus the text model"
    if vc.get("model_type") == "mllama_vision_model":
        try:
            return _mllama_vision_params(vc, arch.hidden_size), "Mllama vision model + projector from vision_config"
        except (TypeError, ValueError, ZeroDivisionError):
            return 0, "vision_config has non-numeric sizes: vision tower left out (guessed)"
    try:   # MoonViT in Kimi-K2.5 spells the tower's sizes vt_hidden_size / vt_intermediate_size / vt_num_hidden_layers
        hv = int(vc.get("hidden_size", vc.get("vt_hidden_size", 1024)))
        iv = int(vc.get("intermediate_size", vc.get("vt_intermediate_size", 4 * hv)))
        nl = int(vc.get("num_hidden_layers", vc.get("depth", vc.get("vt_num_hidden_layers", 24))))
        p = int(vc.get("patch_size", 14))
    except (TypeError, ValueError):
        return 0, "vision_config has non-numeric sizes: vision tower left out (guessed)"
    per_layer = 4 * hv * hv + 4 * hv + 2 * hv * iv + iv + hv + 4 * hv
    proj = hv * arch.hidden_size * 2
    return nl * per_layer + 3 * p * p * hv + proj, "ViT estimate from vision_config (guessed)"


# Vision encoders vLLM builds from its tensor-parallel linear layers (QKVParallelLinear / ColumnParallelLinear /
# RowParallelLinear: Llama-4 mllama4.py, Qwen2/2.5/3-VL, SigLIP (Gemma 3), CLIP (LLaVA), InternViT, Idefics2, the HF
# Pixtral encoder; vllm 0.11.0 wheel) are split over the TP group under the default --mm-encoder-tp-mode weights.
# MoonViT (Kimi-VL) and the Mistral-format Pixtral VisionTransformer use plain nn.Linear: one full copy per rank.
_REPLICATED_VISION = ("moonvit",)


def vision_tp_sharded(arch: ModelArch) -> bool:
    """Whether vLLM splits this model's vision tower over the tensor-parallel ranks."""
    mt = str((arch.vision_config or {}).get("model_type") or "")
    return not (mt in _REPLICATED_VISION or arch.model_type == "pixtral")


def _mxfp4_expert_bytes(h: int, mi: int, n_exp: int, tp: int, gpu: GPU | None,
                        version: tuple[int, int, int] = (0, 19, 0)) -> tuple[int, str, bool]:
    """Bytes of one MoE layer's MXFP4 experts on one rank as vLLM lays them out after loading.

    vllm/model_executor/layers/quantization/mxfp4.py create_weights pads the per-rank intermediate
    size per backend: Marlin (pre-Hopper) 128 and hidden 256; Blackwell FlashInfer 256/256; Hopper
    Triton 64. Values: 1/2 byte per weight; E8M0 scales: 1 byte per 32. On Hopper the Triton path
    swizzles values and scales into new tensors while the original scale parameters stay registered
    (kept twice), and the Hopper MX value layout pads the contraction dim (guessed: to 128) -- seen in
    0.19.0 logs (gpt-oss-20b TP2 7.01 GiB); 0.11.0 logs show no such padding (llm-d-benchmark H100:
    gpt-oss-20b 13.47 GiB, gpt-oss-120b 64.38 GiB), so it applies from 0.19.0 (releases between unmeasured).
    Biases: float32 after the Triton conversion, else bf16.
    """
    inter = mi // tp
    cc = float(gpu.compute_capability) if gpu and gpu.compute_capability else 9.0
    guessed = True
    if cc >= 10.0:
        ip, hp, kpad, dup, bias_b, note = pad_up(inter, 256), pad_up(h, 256), 1, False, 4, "flashinfer sm100"
    elif cc >= 9.0:
        kp = 128 if version >= (0, 19, 0) else 1
        ip, hp, kpad, dup, bias_b, note = pad_up(inter, 64), h, kp, True, 4, "triton sm90"
    else:
        ip, hp, kpad, dup, bias_b, note = pad_up(inter, 128), pad_up(h, 256), 1, False, 2, "marlin"
    w13_vals = 2 * ip * pad_up(hp, kpad) // 2
    w2_vals = hp * pad_up(ip, kpad) // 2
    scales = 2 * ip * (hp // 32) + hp * (ip // 32)
    per_expert = w13_vals + w2_vals + scales * (2 if dup else 1) + (2 * ip + hp) * bias_b
    return n_exp * per_expert, note, guessed


# ---- PyTorch CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp; the same constants since PyTorch 1.x) ----
# vLLM's "Loading model weights took X GB" and every later budget use torch's *allocated* bytes, which count whole
# blocks: a request of S >= 10 MiB (kMinLargeAlloc) gets its own cudaMalloc segment rounded up to 2 MiB
# (kRoundLarge); the block is split only when the remainder exceeds 1 MiB (kSmallSize, should_split), so a
# remainder of <= 1 MiB stays inside the allocated block. Requests of 1-10 MiB take a 20 MiB segment (kLargeBuffer)
# and are split; requests <= 1 MiB come from 2 MiB small-pool segments, rounded to 512 B (kMinBlockSize).
# Without expandable segments (vLLM does not set them) every weight tensor whose size is not close to a 2 MiB
# multiple therefore takes up to 1 MiB more: Qwen2.5-7B's per-layer qkv (31.5 MiB), gate_up (259 MiB), down
# (129.5 MiB) and both 1039.5 MiB embeddings add 57 MiB, the logged 14.2488 GB vs 14.193 GiB of shapes.
ALLOC_MIN_BLOCK = 512
ALLOC_SMALL = 1 << 20
ALLOC_MIN_LARGE = 10 << 20
ALLOC_ROUND_LARGE = 2 << 20


def allocator_rounding(nbytes: int) -> int:
    """Bytes torch's caching allocator counts as allocated beyond ``nbytes`` for one tensor."""
    if nbytes <= 0:
        return 0
    size = pad_up(nbytes, ALLOC_MIN_BLOCK)
    extra = size - nbytes
    if size >= ALLOC_MIN_LARGE:
        rest = pad_up(size, ALLOC_ROUND_LARGE) - size
        if rest <= ALLOC_SMALL:
            extra += rest
    return extra


def _layer_linear_tensors(arch: ModelArch, i: int, tp: int, ep: bool,
                          moe_tp: int | None = None) -> list[tuple[str, int, int]]:
    """(component, elements per rank, output channels per rank) of the large weight tensors vLLM allocates for
    decoder layer ``i``: fused qkv, o_proj, fused gate_up, down (or up/down), the fused-MoE w13 / w2 and the shared
    expert's. Layers or tensors whose storage is not modelled here (MLA, Mamba / linear-attention mixers, expert
    parallel, gpt-oss experts) are left out: no allocator rounding or channel scale is assumed for them."""
    c = arch.config
    h = arch.hidden_size
    mixers = layer_mixers(arch)
    mixer = mixers[i] if mixers else "attention"
    out: list[tuple[str, int, int]] = []
    if mixer == "attention" and not arch.is_mla and not dsv4.is_dsv4(arch):
        kvh, hd = layer_geometry.kv_geometry(arch, i)
        q_rank = layer_geometry.q_heads(arch, i) * layer_geometry.q_head_dim(arch, i) // tp
        gate = 2 if (arch.model_type.startswith("qwen3_next") or arch.model_type.startswith("qwen3_5")) else 1
        n_v = 2 if layer_geometry.has_v_proj(arch, i) else 1
        vhd = layer_geometry.v_head_dim(arch, i)
        kvr = kv_heads_per_rank(kvh, tp)
        n_qkv = gate * q_rank + kvr * hd + (n_v - 1) * kvr * vhd
        o_in = layer_geometry.q_heads(arch, i) * vhd // tp if vhd != hd else q_rank
        out += [("attention", h * n_qkv, n_qkv), ("attention", o_in * h, h)]
    pat = c.get("hybrid_override_pattern")
    if isinstance(pat, str):
        if i < len(pat) and pat[i] == "-":
            inter = dense_intermediate(arch) // tp
            out += [("mlp_dense", inter * h, inter), ("mlp_dense", inter * h, h)]
        return out
    if is_moe_layer(c, i):
        n_exp = _routed_experts(c)
        mi = int(c.get("moe_intermediate_size") or c.get("intermediate_size") or 0) // (moe_tp or tp)
        if not ep and arch.model_type != "gpt_oss":
            out += [("moe_routed_experts", n_exp * 2 * mi * h, n_exp * 2 * mi),
                    ("moe_routed_experts", n_exp * h * mi, n_exp * h)]
        si = shared_expert_intermediate(arch) // tp
        if si:
            out += [("moe_shared", 2 * si * h, 2 * si), ("moe_shared", h * si, h)]
    else:
        inter = dense_intermediate(arch, i) // tp
        up = (2 if arch.gated_mlp else 1) * inter          # fused gate_up, or Falcon's dense_h_to_4h alone
        if inter:
            out += [("mlp_dense", up * h, up), ("mlp_dense", h * inter, h)]
    return out


def weight_breakdown(arch: ModelArch, cfg: EffectiveConfig,
                     checkpoint_quantization: str | None = None, gpu: GPU | None = None) -> WeightBreakdown:
    """Bytes of weights per GPU (largest PP stage, one TP rank), by component, with explain terms.

    ``checkpoint_quantization`` is the format implied by the model name when the config has no
    ``quantization_config`` (e.g. "fp8", "w4a16", "awq"); ``cfg.quantization`` covers a runtime
    ``--quantization``.
    """
    c = arch.config
    tp, pp = max(1, cfg.tensor_parallel_size), max(1, cfg.pipeline_parallel_size)
    dt = model_dtype_bytes(arch, cfg)
    q = quant_layout(arch, cfg, checkpoint_quantization)
    h, vocab, L = arch.hidden_size, arch.vocab_size, arch.num_layers
    tied = bool(c.get("tie_word_embeddings", False))

    def bpw(kind: str) -> float:
        if q is None:
            return float(dt)
        if q.by_kind:
            return q.by_kind.get(kind, float(dt))
        flag = {"attention": q.quantize_attention, "mlp_dense": q.quantize_dense_mlp,
                "moe_routed_experts": q.quantize_experts,
                "moe_shared": q.quantize_dense_mlp if q.quantize_shared is None else q.quantize_shared}.get(kind, False)
        return q.bytes_per_weight if flag else float(dt)

    def wbytes(kind: str) -> float:
        """Bytes per element of the main weight tensor of ``kind`` (scales are separate tensors); 0 = unknown."""
        if q is None:
            return float(dt)
        if q.by_kind:
            b = q.by_kind.get(kind)
            return float(dt) if b is None else (1.0 if b == 1.0 else 0.5 if abs(b - (0.5 + 1 / 16)) < 1e-9 else 0.0)
        flag = {"attention": q.quantize_attention, "mlp_dense": q.quantize_dense_mlp,
                "moe_routed_experts": q.quantize_experts,
                "moe_shared": q.quantize_dense_mlp if q.quantize_shared is None else q.quantize_shared}.get(kind, False)
        if not flag:
            return float(dt)
        return {"fp8": 1.0, "int8": 1.0, "w8a16": 1.0, "w4a16": 0.5, "nvfp4": 0.5}.get(q.name, 0.0)

    rows = vocab_rows_per_rank(vocab, tp)
    emb_rank = rows * h
    mt = moe_shards(cfg)
    layers = [_layer_params(arch, i, tp, mt) for i in range(L)]
    ep = bool(getattr(cfg, "enable_expert_parallel", False))

    stages: list[dict[str, list[int]]] = []   # component -> [params_total, params_rank, bytes_rank]
    for s in range(pp):
        start, end = get_pp_indices(L, s, pp)
        acc: dict[str, list[float]] = {k: [0, 0, 0.0] for k in COMPONENTS}
        for i in range(start, end):
            lay = layers[i]
            for comp, val in (("attention", lay.attention), ("mlp_dense", lay.mlp_dense),
                              ("moe_routed_experts", lay.moe_routed), ("moe_shared", lay.moe_shared),
                              ("router", lay.router), ("norms", lay.norms)):
                acc[comp][0] += val[0]
                acc[comp][1] += val[1]
                acc[comp][2] += val[1] * bpw(comp)
            acc["moe_routed_experts"][0] += lay.expert_bias[0]
            acc["moe_routed_experts"][1] += lay.expert_bias[1]
            acc["moe_routed_experts"][2] += lay.expert_bias[1] * dt
        rounding = 0
        for i in range(start, end):
            for kind, elems, outs in _layer_linear_tensors(arch, i, tp, ep, mt):
                if wbytes(kind):
                    rounding += allocator_rounding(int(elems * wbytes(kind)))
                if q is not None and q.channel_scale_bytes and wbytes(kind) != dt:
                    acc[kind][2] += outs * q.channel_scale_bytes
        if s == 0:
            pos = position_embedding_params(arch)      # replicated on every rank
            ple_tot = ple_rank = 0
            ple = layer_geometry.ple_width(arch)
            if ple:   # Gemma 4 E2B / E4B: embed_tokens_per_layer (vocab x layers x ple) + per_layer_model_projection
                v_ple = int(c.get("vocab_size_per_layer_input") or vocab)
                ple_tot = v_ple * L * ple + h * L * ple + ple
                ple_rank = -(-v_ple // tp) * L * ple + h * L * ple // tp + ple
            acc["embedding"] = [vocab * h + pos + ple_tot, emb_rank + pos + ple_rank,
                                (emb_rank + pos + ple_rank) * dt]
            rounding += allocator_rounding(emb_rank * dt) + (allocator_rounding(pos * dt) if pos else 0)
        if s == pp - 1:
            fn = final_norm_params(arch)
            acc["norms"][0] += fn
            acc["norms"][1] += fn
            acc["norms"][2] += fn * dt
            if not tied or pp > 1:
                hb = vocab if c.get("lm_head_bias") else 0     # PhiMoE: lm_head with a bias
                acc["lm_head"] = [0 if tied else vocab * h + hb, emb_rank + hb, (emb_rank + hb) * dt]
                rounding += allocator_rounding(emb_rank * dt)
        acc["allocator_rounding"] = [0, 0, float(rounding)]
        stages.append(acc)

    mx_note = ""
    if q is not None and q.name == "mxfp4":
        n_exp = _routed_experts(c)
        mi = int(c.get("moe_intermediate_size") or c.get("intermediate_size"))

        h_exp = int(c.get("routed_expert_hidden_size") or h)   # LatentMoE experts work in the latent width
        per_layer, mx_note, _ = _mxfp4_expert_bytes(h_exp, mi, n_exp, mt, gpu, parse_version(cfg.vllm_version))
        for s_i in range(pp):
            a, b = get_pp_indices(L, s_i, pp)
            n_moe = sum(1 for i in range(a, b) if is_moe_layer(c, i))
            stages[s_i]["moe_routed_experts"][2] = n_moe * per_layer

    text_total = sum(st[k][0] for st in stages for k in COMPONENTS)
    vis, vis_note = _vision_params(arch, text_total, quantized=q is not None)
    if vis:
        vis_rank = -(-vis // tp) if vision_tp_sharded(arch) else vis
        stages[0]["vision"] = [vis, vis_rank, vis_rank * dt]

    # load-time buffers
    buffers: list[Term] = []
    buf_bytes = 0
    for label, nrows, rot in _rope_caches(arch):
        b = nrows * rot * dt
        buf_bytes += b
        buffers.append(Term(name=f"rope_cache_{label}", formula="rows x rotary_dim x dtype_bytes",
                            inputs={"rows": nrows, "rotary_dim": rot, "dtype_bytes": dt}, value=b, unit="bytes"))
    for st in stages:
        st["other_buffers"] = [0, 0, float(buf_bytes)]

    stage_bytes = [int(round(sum(st[k][2] for k in COMPONENTS))) for st in stages]
    big = max(range(pp), key=lambda s: stage_bytes[s])
    st = stages[big]
    comps = {}
    for k in COMPONENTS:
        pt, pr, by = st[k]
        comps[k] = WeightComponent(
            name=k, params_total=int(sum(x[k][0] for x in stages)), params_per_gpu=int(pr),
            bytes_per_weight=(by / pr if pr else 0.0), bytes_per_gpu=int(round(by)),
            note=vis_note if k == "vision" else (f"mxfp4 layout: {mx_note} (guessed)" if k == "moe_routed_experts" and mx_note else ""))
    params_total = text_total + vis
    params_gpu = sum(comps[k].params_per_gpu for k in COMPONENTS)
    total = stage_bytes[big]
    if q:
        fmt = q.name
    else:
        d = (cfg.dtype or "auto").replace("torch.", "")
        if d == "auto":
            d = arch.torch_dtype.replace("torch.", "")
        fmt = "fp32" if dt == 4 else ("fp16" if d in ("float16", "half", "fp16") else "bf16")

    explain: list[Term] = [
        Term(name="params_total", formula="sum of component parameters (whole model)",
             inputs={k: comps[k].params_total for k in COMPONENTS if comps[k].params_total},
             value=params_total, unit="params"),
        Term(name="vocab_rows_per_rank", formula="ceil(pad64(vocab) / tp)",
             inputs={"vocab": vocab, "tp": tp}, value=rows, unit="rows"),
    ]
    for k in COMPONENTS:
        cpt = comps[k]
        if cpt.bytes_per_gpu and k == "allocator_rounding":
            explain.append(Term(name="weights_allocator_rounding", formula="sum over weight tensors >= 10 MiB of the "
                                "2 MiB-segment remainder when <= 1 MiB (torch caching allocator counts it as allocated)",
                                inputs={}, value=cpt.bytes_per_gpu, unit="bytes"))
        elif cpt.bytes_per_gpu and k == "other_buffers":
            explain.append(Term(name="weights_other_buffers", formula="sum of the buffers vLLM allocates at load "
                                "time (rotary cos/sin caches: the rope_cache_* terms below)",
                                inputs={}, value=cpt.bytes_per_gpu, unit="bytes"))
        elif cpt.bytes_per_gpu:
            explain.append(Term(name=f"weights_{k}", formula="params_per_gpu x bytes_per_weight",
                                inputs={"params_per_gpu": cpt.params_per_gpu,
                                        "bytes_per_weight": round(cpt.bytes_per_weight, 6)},
                                value=cpt.bytes_per_gpu, unit="bytes",
                                guessed=(k == "vision" and "guessed" in vis_note) or bool(k == "moe_routed_experts" and mx_note)))
    explain.extend(buffers)
    explain.append(Term(name="weights_per_gpu", formula="sum of components on the largest PP stage / 2^30",
                        inputs={"stage": big, "tp": tp, "pp": pp, "format": fmt},
                        value=total / GIB, unit="GiB"))
    return WeightBreakdown(model_id=arch.id, weight_format=fmt, components=comps,
                           params_total=int(params_total), params_per_gpu=int(params_gpu),
                           bytes_per_gpu=total, tensor_parallel_size=tp, pipeline_parallel_size=pp,
                           pp_stage=big, stage_bytes=stage_bytes, explain=explain)
