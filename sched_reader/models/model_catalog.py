"""Model catalog: load ``models/data/models.yaml`` and resolve the model a deploy file names.

Accepted forms (case-insensitive): catalog ids and aliases (``meta-llama/Llama-3.1-8B-Instruct``),
a bare repo name (``Qwen2-7B-Instruct``), ``hf://org/name``, object-store or PVC URIs and local paths
(matched by their last path component, ``org--name`` cache spellings included), quantized derivative
checkpoints (``RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic`` -> Llama-3.3-70B + fp8), a local model
directory or ``config.json`` (``--model-config PATH``, or a ``name`` that is an existing directory).

Nothing here touches the network. The catalog YAML is read on first use and cached.
"""

import difflib
import json
import os
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from sched_reader.data_model import DataModel
from sched_reader.errors import InputError, UnknownModelError
from sched_reader.models.architecture import ModelArch
from sched_reader.models.config_keys import normalize_config
from sched_reader.models.quantization import scheme_from_quant_config
from sched_reader.models.data_files import load
from sched_reader.models.hf_cache import find_cached_config
from sched_reader.models.hybrid import is_hybrid
from sched_reader.models.name_match import best_match, name_key
from sched_reader.limits import clip, loads_json, read_text_file

MAX_MODEL_NAME = 512  # characters: a Hugging Face id is <= 96, a local path a few hundred

_URI_SCHEMES = ("s3://", "gs://", "gcs://", "pvc://", "oci://", "file://", "az://", "abfs://", "http://", "https://")
_HF_SCHEMES = ("hf://", "huggingface://", "hf.co/", "huggingface.co/")


class ModelResolution(DataModel):
    """The result of resolving a model name.

    ``checkpoint_quantization`` is the weight scheme the checkpoint is stored in (``fp8``, ``w4a16``,
    ``awq``, ``gptq``, ``gptq_int8``, ``w8a8``, ``nvfp4``, ``mxfp4``, ``bnb_4bit``) or None for 16-bit
    weights; ``quantization_method`` is the vLLM ``--quantization`` method that checkpoint loads with
    (``compressed-tensors``, ``fp8``, ``modelopt``, ``awq``, ``gptq``, ...). ``guessed`` is True when the
    architecture was inferred from a path or a look-alike name rather than matched exactly.
    """

    model_config = ConfigDict(frozen=True)

    arch: ModelArch
    checkpoint_quantization: str | None = None
    quantization_method: str | None = None
    quantization_config: dict[str, Any] | None = None  # verbatim from a read config.json, else None
    guessed: bool = False
    note: str | None = None


# ----------------------------------------------------------------------------------------------
# Quantized-derivative name suffixes -> (scheme, default vLLM method). Order matters: longest first.
@dataclass(frozen=True)
class _Suffix:
    pattern: re.Pattern[str]
    scheme: str
    method: str | None  # None: depends on the publishing org (see _fp8_method)


def _sfx(regex: str, scheme: str, method: str | None) -> _Suffix:
    return _Suffix(re.compile(r"[-_.](?:" + regex + r")$", re.IGNORECASE), scheme, method)


_SUFFIXES: tuple[_Suffix, ...] = (
    # Google's quantization-aware-trained Gemma releases in compressed-tensors form ("-qat-w4a16-ct": 4-bit weights,
    # 16-bit activations; "-qat-mobile-ct": the on-device 4-bit weight variant, taken as w4a16 too)
    _sfx(r"qat[-_]w4a16[-_]ct|qat[-_]mobile[-_]ct", "w4a16", "compressed-tensors"),
    _sfx(r"quantized\.w4a16", "w4a16", "compressed-tensors"),
    _sfx(r"quantized\.w8a16", "w8a16", "compressed-tensors"),
    _sfx(r"quantized\.w8a8", "w8a8", "compressed-tensors"),
    _sfx(r"quantized\.w4a4", "nvfp4", "compressed-tensors"),
    _sfx(r"w8a8[-_]fp8", "fp8", "compressed-tensors"),
    _sfx(r"w[-_]?mxfp4[-_]a[-_]?fp8", "mxfp4", "mxfp4"),   # AMD Quark: MXFP4 weights, FP8 activations
    _sfx(r"nvfp4[-_]w4a4", "nvfp4", None),   # "-NVFP4-W4A4": NVFP4 weights and activations (Inferact/Muse-Glimmer-30B)
    _sfx(r"fp8[-_]dynamic|fp8[-_]static|fp8[-_]block|fp8[-_]kv|fp8[-_]e4m3", "fp8", None),
    _sfx(r"fp8", "fp8", None),
    _sfx(r"nvfp4|fp4", "nvfp4", None),
    _sfx(r"mxfp4", "mxfp4", "mxfp4"),
    _sfx(r"mxfp8", "mxfp8", "mxfp8"),   # MiniMaxAI/MiniMax-M3-MXFP8: OCP MX FP8 (E4M3 + an E8M0 scale per 32)
    _sfx(r"gptq[-_]int4|gptq[-_]4bit|gptq", "gptq", "gptq"),
    _sfx(r"gptq[-_]int8|gptq[-_]8bit", "gptq_int8", "gptq"),
    _sfx(r"awq[-_]int4|awq", "awq", "awq"),
    _sfx(r"w4a16", "w4a16", "compressed-tensors"),
    _sfx(r"w8a16", "w8a16", "compressed-tensors"),
    _sfx(r"w8a8|int8", "w8a8", "compressed-tensors"),
    _sfx(r"int4", "w4a16", "compressed-tensors"),
    _sfx(r"bnb[-_]4bit|unsloth[-_]bnb[-_]4bit", "bnb_4bit", "bitsandbytes"),
)

# Checkpoint formats a size-only proxy does not pass on (4-bit post-training or QAT releases of one model); FP8 is
# kept: the native training / release format of most 100B+ MoE checkpoints since DeepSeek-V3 (block FP8).
_RELEASE_SPECIFIC_SCHEMES = ("mxfp4", "nvfp4", "w4a16", "awq", "gptq", "bnb_4bit")

# A release tag some publishers put after the quantization suffix ("-FP4-V2", "-MXFP4-Preview").
_RELEASE_TAG = re.compile(r"[-_.](?:v\d+(?:\.\d+)?|preview)$", re.IGNORECASE)

# FP8 / FP4 checkpoints: the loader depends on who published them.
_ORG_FP8_METHOD = {
    "redhatai": "compressed-tensors",
    "neuralmagic": "compressed-tensors",
    "nm-testing": "compressed-tensors",
    "nvidia": "modelopt",
    "meta-llama": "fbgemm_fp8",
    "qwen": "fp8",
    "deepseek-ai": "fp8",
}


# The quantization_config a publisher's own FP8 releases carry, where every one of them uses the same layout:
# Qwen's FP8 checkpoints are block-wise ("fine-grained fp8 quantization with block size of 128", the Qwen3
# FP8 model cards, e.g. https://huggingface.co/Qwen/Qwen3-30B-A3B-FP8; config.json quantization_config
# {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}).
# The block layout picks vLLM's block-FP8 kernels (and their ROCm paths), not the per-tensor ones.
_ORG_FP8_CONFIG: dict[str, dict[str, Any]] = {
    "qwen": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]},
}


def _fp8_method(org: str | None, scheme: str) -> str:
    org_l = (org or "").lower()
    method = _ORG_FP8_METHOD.get(org_l, "fp8" if scheme == "fp8" else "compressed-tensors")
    if scheme == "nvfp4":
        return "modelopt_fp4" if org_l == "nvidia" else "compressed-tensors"
    return method


# ----------------------------------------------------------------------------------------------
def _arch_from_row(row: dict[str, Any]) -> ModelArch:
    op = row.get("official_params") or {}
    sources = [row.get("config_url", ""), *(row.get("config_read_from") or [])]
    return ModelArch(
        id=row["id"],
        aliases=list(row.get("aliases") or []),
        model_type=row["model_type"],
        architectures=list(row.get("architectures") or []),
        config=normalize_config(row["model_type"], row["config"])[0],
        vision_config=row.get("vision_config"),
        official_params=op.get("total"),
        official_params_counts=op.get("counts"),
        official_active_params=op.get("active"),
        multimodal=row.get("multimodal"),
        source="; ".join(s for s in sources if s),
    )


class _LazyArchs(dict):
    """id -> ModelArch, each built from its catalog row when first looked up (``[]``).

    Building all ~130 entries (config normalised, model validated) took ~5% of a ``diagnose`` process that
    uses one of them; the entries built are the same objects the eager build made."""

    def __init__(self, rows: dict[str, dict[str, Any]]) -> None:
        super().__init__()
        self.rows = rows

    def __missing__(self, mid: str) -> ModelArch:
        arch = self[mid] = _arch_from_row(self.rows[mid])
        return arch


class _Catalog:
    def __init__(self, data: dict[str, Any]) -> None:
        rows = data["models"]
        self.ids: list[str] = [r["id"] for r in rows]     # catalog order
        self.by_id = _LazyArchs({r["id"]: r for r in rows})
        # alias repos whose config.json differs in a few keys: resolved as their own ModelArch (built on use)
        self._variant_rows: dict[str, tuple[str, str, dict[str, Any]]] = {}
        self._variants: dict[str, ModelArch] = {}
        for row in rows:
            aliases = list(row.get("aliases") or [])
            for alias, overrides in (row.get("alias_config") or {}).items():
                if alias not in aliases:
                    raise ValueError(f"models.yaml: alias_config names {alias!r}, not an alias of {row['id']}")
                self._variant_rows[alias.lower()] = (row["id"], alias, overrides)
        self.full: dict[str, str] = {}   # "org/name" lower -> id
        self.short: dict[str, set[str]] = {}  # "name" lower -> ids
        for row in rows:
            mid = row["id"]
            for spelling in [mid, *(row.get("aliases") or [])]:
                key = spelling.lower()
                other = self.full.get(key)
                if other is not None and other != mid:
                    raise ValueError(f"models.yaml: {spelling!r} names both {other} and {mid}")
                self.full[key] = mid
                self.short.setdefault(key.rsplit("/", 1)[-1], set()).add(mid)

    @property
    def models(self) -> list[ModelArch]:
        """Every entry, in catalog order (each built on first use)."""
        return [self.by_id[mid] for mid in self.ids]

    def variant_keys(self) -> list[str]:
        """The lower-cased alias of every variant, in catalog order."""
        return list(self._variant_rows)

    def variant(self, key: str) -> ModelArch:
        """The variant ModelArch of lower-cased alias ``key``: its base entry with the alias's config keys."""
        arch = self._variants.get(key)
        if arch is None:
            mid, alias, overrides = self._variant_rows[key]
            base = self.by_id[mid]
            arch = self._variants[key] = base.model_copy(update={"id": alias, "config": {**base.config, **overrides}})
        return arch


@lru_cache(maxsize=1)
def _catalog() -> _Catalog:
    return _Catalog(load("models"))


def list_models() -> list[ModelArch]:
    """Every architecture in the catalog, in catalog order."""
    return list(_catalog().models)


def get_model(model_id: str) -> ModelArch:
    """The catalog entry whose id or alias is ``model_id`` (case-insensitive)."""
    cat = _catalog()
    mid = cat.full.get(model_id.lower()) if isinstance(model_id, str) else None
    if mid is None:
        raise UnknownModelError(f"unknown model {model_id!r}", key="model", hint=_hint(str(model_id)))
    return cat.by_id[mid]


def nearest_model_ids(name: str, n: int = 3) -> list[str]:
    """Up to ``n`` catalog ids closest to ``name`` (by id/alias similarity), closest first."""
    return list(_nearest_model_ids(name, n))


@lru_cache(maxsize=4096)
def _nearest_model_ids(name: str, n: int) -> tuple[str, ...]:
    cat = _catalog()
    key = (name or "").lower()
    short = key.rsplit("/", 1)[-1]
    scored = []
    for spelling, mid in cat.full.items():
        r = max(
            difflib.SequenceMatcher(None, key, spelling).ratio(),
            difflib.SequenceMatcher(None, short, spelling.rsplit("/", 1)[-1]).ratio(),
        )
        scored.append((r, mid))
    scored.sort(key=lambda t: (-t[0], t[1]))
    out: list[str] = []
    for _, mid in scored:
        if mid not in out:
            out.append(mid)
        if len(out) == n:
            break
    return tuple(out)


def _hint(name: str) -> str:
    return "nearest known models: " + ", ".join(nearest_model_ids(name)) + "; or pass --model-config PATH"


# ----------------------------------------------------------------------------------------------
@dataclass
class _Parsed:
    org: str | None
    repo: str
    from_path: bool  # came from a local path / object-store URI (so the name is only a hint)


def _parse_name(name: str) -> _Parsed:
    s = name.strip().strip("\"'")
    low = s.lower()
    for scheme in _HF_SCHEMES:
        if low.startswith(scheme):
            s = s[len(scheme):]
            return _split_repo(s.strip("/"), from_path=False)
    from_path = low.startswith(_URI_SCHEMES) or s.startswith(("/", "./", "../", "~")) or s.count("/") > 1
    if from_path:
        if "://" in s:
            s = s.split("://", 1)[1]
        parts = [p for p in s.split("/") if p and p not in (".", "..", "~")]
        base = parts[-1] if parts else s
        # a Hugging Face cache snapshot path: .../models--org--name/snapshots/<revision>
        hub = [p for p in parts if p.startswith("models--")]
        if hub:
            base = hub[-1]
        if base.startswith("models--"):  # HF hub cache dir: models--org--name
            base = base[len("models--"):]
        if "--" in base:  # "TinyLlama--TinyLlama-1.1B-Chat-v1.0"
            org, repo = base.split("--", 1)
            return _Parsed(org=org, repo=repo, from_path=True)
        return _Parsed(org=None, repo=base, from_path=True)
    return _split_repo(s, from_path=False)


def _split_repo(s: str, from_path: bool) -> _Parsed:
    if "/" in s:
        org, repo = s.split("/", 1)
        return _Parsed(org=org, repo=repo.split("/")[0], from_path=from_path)
    return _Parsed(org=None, repo=s, from_path=from_path)


def _lookup(cat: _Catalog, org: str | None, repo: str) -> tuple[str | None, bool]:
    """(catalog id, exact) for org/repo; exact=False when only the repo name matched."""
    if org:
        mid = cat.full.get(f"{org}/{repo}".lower())
        if mid:
            return mid, True
    low = repo.lower()
    # Meta's Llama-2 repos end in "-hf" while community copies drop it (TheBloke/Llama-2-7B-Chat-AWQ)
    for spelling in (low, low[:-3] if low.endswith("-hf") else low + "-hf"):
        ids = cat.short.get(spelling)
        if ids and len(ids) == 1:
            return next(iter(ids)), org is None and spelling == low
    return None, False


def resolve_model(name: str, model_config_path: str | None = None) -> ModelResolution:
    """Resolve a model name (see module docstring); ``model_config_path`` overrides the catalog.

    Raises UnknownModelError (exit 2) naming the 3 nearest catalog ids when nothing matches, and
    InputError when a given config file cannot be read.
    """
    if model_config_path:
        return _from_config_path(model_config_path, name)
    if not isinstance(name, str) or not name.strip():
        raise UnknownModelError(f"model name is empty or not a string: {name!r}", key="model", hint=_hint(""))
    if len(name) > MAX_MODEL_NAME:  # the nearest-name search is quadratic in the length (100k chars: 44 s)
        raise UnknownModelError(f"a model name of {len(name):,} characters is over the {MAX_MODEL_NAME}-character "
                                f"limit: {clip(name)}", key="model",
                                hint="a Hugging Face model id is at most 96 characters (org/name)")
    local = Path(os.path.expanduser(name.strip()))
    if name.strip().startswith(("/", ".", "~")) and (local / "config.json").is_file():
        return _from_config_path(str(local), name)

    cat = _catalog()
    parsed = _parse_name(name)
    mid, exact = _lookup(cat, parsed.org, parsed.repo)
    if mid:
        return _resolution_for(_variant(cat, mid, parsed), name, parsed, exact, None)

    # The user's own copy in a local Hugging Face cache is exact (and carries its quantization_config).
    cached = find_cached_config(parsed.org, parsed.repo) if not parsed.from_path else None
    if cached is not None:
        res = _from_config_path(str(cached), name)
        return res.model_copy(update={"note": f"config.json from the local Hugging Face cache: {cached}"})

    # Quantized derivative: strip one quantization suffix and retry. A release tag after it is dropped first
    # (nvidia/DeepSeek-R1-0528-FP4-V2, amd/DeepSeek-R1-0528-MXFP4-Preview, nvidia/Qwen3.5-397B-A17B-NVFP4-V2).
    quant: tuple[str, str] | None = None
    base_repo = parsed.repo
    tag = _RELEASE_TAG.search(parsed.repo)
    for repo in (parsed.repo, parsed.repo[: tag.start()]) if tag else (parsed.repo,):
        for suffix in _SUFFIXES:
            m = suffix.pattern.search(repo)
            if not m:
                continue
            base = repo[: m.start()]
            method = suffix.method or _fp8_method(parsed.org, suffix.scheme)
            if quant is None:
                quant, base_repo = (suffix.scheme, method), base
            mid, exact = _lookup(cat, parsed.org, base)
            if mid is None:
                # two formats named ("RedHatAI/Hy3-NVFP4-FP8": NVFP4 experts, FP8 attention): the first one written,
                # next to the model name, is the bulk of the weights
                for inner in _SUFFIXES:
                    m2 = inner.pattern.search(base)
                    mid2, exact2 = _lookup(cat, parsed.org, base[: m2.start()]) if m2 else (None, False)
                    if mid2 is not None:
                        method2 = inner.method or _fp8_method(parsed.org, inner.scheme)
                        base_parsed = _Parsed(org=parsed.org, repo=base[: m2.start()], from_path=parsed.from_path)
                        return _resolution_for(_variant(cat, mid2, base_parsed), name, parsed, exact2,
                                               (inner.scheme, method2))
                continue
            base_parsed = _Parsed(org=parsed.org, repo=base, from_path=parsed.from_path)
            return _resolution_for(_variant(cat, mid, base_parsed), name, parsed, exact, (suffix.scheme, method))

    # A fine-tune, rename or distill of a catalog architecture: same family, version and size.
    hit = _family_match(cat, base_repo)
    if hit is not None:
        mid, how = hit
        assumed = (f"{name.strip()!r} is not in the catalog: assumed architecture of {mid} ({how}); "
                   f"pass --model-config to be exact")
        arch = cat.by_id[mid]
        inherited, _ = scheme_from_quant_config(arch.quantization_config)
        if how.startswith("a guess") and quant is None and inherited in _RELEASE_SPECIFIC_SCHEMES:
            # a size-only proxy from another family: its 4-bit release format (gpt-oss's MXFP4 experts, Kimi's INT4)
            # says nothing about this checkpoint, whose name states no format -> 16-bit weights assumed
            arch = arch.model_copy(update={"config": {k: v for k, v in arch.config.items() if k != "quantization_config"}})
            assumed += f"; {mid}'s own {inherited} weights not assumed (the name states no format: 16-bit)"
        return _resolution_for(arch, name, parsed, False, quant, assumed=assumed)
    raise UnknownModelError(f"unknown model {name.strip()!r}", key="model", hint=_hint(parsed.repo))


@lru_cache(maxsize=1)
def _name_keys() -> list[tuple[str, Any, float | None]]:
    """(id, NameKey, official params in 10^9) for every catalog entry; the id's name, else an alias's."""
    out = []
    for m in _catalog().models:
        key = name_key(m.id)
        if key.size_b is None:
            for alias in m.aliases:
                k2 = name_key(alias)
                if k2.size_b is not None and k2.family == key.family:
                    key = k2
                    break
        if key.modality is None and m.vision_config:
            # a vision-language checkpoint whose name has no modality word (Mistral-Small-3.2, Gemma 3):
            # a text-only name of the same size then prefers a text-only entry
            key = replace(key, modality="vl")
        params_b = m.official_params / 1e9 if m.official_params else None
        out.append((m.id, key, params_b))
    return out


_EXPERT_KEYS = ("n_routed_experts", "num_local_experts", "num_experts")


def _family_match(cat: _Catalog, repo: str) -> tuple[str, str] | None:
    hybrids = frozenset(m.id for m in cat.models if is_hybrid(m))
    moe = frozenset(m.id for m in cat.models if any(m.config.get(k) for k in _EXPERT_KEYS))
    ungrouped = frozenset(m.id for m in cat.models if not m.is_mla and m.num_kv_heads in (1, m.num_attention_heads))
    return best_match(name_key(repo), _name_keys(), hybrids, moe, ungrouped)


def _variant(cat: _Catalog, mid: str, parsed: _Parsed) -> ModelArch:
    """The catalog arch, or the alias variant whose config differs (matched on the repo name)."""
    repo = parsed.repo.lower()
    for key in cat.variant_keys():
        if cat.full.get(key) == mid and key.rsplit("/", 1)[-1] == repo:
            return cat.variant(key)
    return cat.by_id[mid]


def _resolution_for(
    arch: ModelArch, name: str, parsed: _Parsed, exact: bool, quant: tuple[str, str] | None,
    assumed: str | None = None,
) -> ModelResolution:
    notes: list[str] = []
    guessed = False
    if assumed:
        guessed = True
        notes.append(assumed)
    elif parsed.from_path:
        guessed = True
        notes.append(f"path {name.strip()!r} assumed to hold {arch.id} (matched by directory name)")
    elif not exact and parsed.org and quant is None:
        guessed = True
        notes.append(f"{parsed.org}/{parsed.repo} is not in the catalog; assumed the architecture of {arch.id} (same repo name)")
    scheme, method = scheme_from_quant_config(arch.quantization_config)
    qc_from_name = None
    if quant is not None:
        if arch.quantization_config is not None and scheme != quant[0]:
            # a re-quantization of a natively quantized model (nvidia/DeepSeek-R1-FP4 of the block-FP8 DeepSeek-R1,
            # nvidia/Kimi-K2.5-NVFP4 of the INT4 Kimi-K2.5): the base's quantization_config describes the base's
            # files, not this checkpoint's, so the name's format replaces it
            cfg = {k: v for k, v in arch.config.items() if k != "quantization_config"}
            arch = arch.model_copy(update={"config": cfg})
            notes.append(f"{arch.id}'s own {scheme} quantization_config does not describe this {quant[0]} checkpoint")
        scheme, method = quant
        notes.append(f"quantized derivative of {arch.id}: {scheme} weights (vLLM method {method}), from the name")
        qc_from_name = _ORG_FP8_CONFIG.get((parsed.org or "").lower()) if (scheme, method) == ("fp8", "fp8") else None
        if qc_from_name is not None and arch.quantization_config is None:
            arch = arch.model_copy(update={"config": {**arch.config, "quantization_config": dict(qc_from_name)}})
            notes.append(f"{parsed.org}'s FP8 releases are block-wise (128 x 128 weight blocks)")
        else:
            qc_from_name = None
    return ModelResolution(
        arch=arch,
        checkpoint_quantization=scheme,
        quantization_method=method,
        quantization_config=arch.quantization_config if quant is None else qc_from_name,
        guessed=guessed,
        note="; ".join(notes) or None,
    )


# ----------------------------------------------------------------------------------------------
# Reading a config.json given on the command line.

# transformers attribute_map equivalents for configs that spell the standard keys differently.
_KEY_SYNONYMS = {
    "hidden_size": ("n_embd", "d_model", "dim"),
    "num_hidden_layers": ("n_layer", "num_layers", "n_layers"),
    "num_attention_heads": ("n_head", "num_heads", "n_heads"),
    "max_position_embeddings": ("n_positions", "max_seq_len", "seq_length"),
    "intermediate_size": ("n_inner", "ffn_dim", "d_ff"),
}
_REQUIRED = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")


def _from_config_path(path: str, name: str | None) -> ModelResolution:
    p = Path(os.path.expanduser(path))
    cfg_file = p / "config.json" if os.path.isdir(p) else p
    try:
        raw = loads_json(read_text_file(cfg_file, key="--model-config", what="model config"),
                         file=str(cfg_file), key="--model-config", allow_nonfinite=True)
    except json.JSONDecodeError as exc:
        raise InputError(f"model config is not valid JSON: {exc.msg}", file=str(cfg_file), line=exc.lineno,
                         key="--model-config") from None
    if not isinstance(raw, dict):
        raise InputError("model config must be a JSON object", file=str(cfg_file), key="--model-config")
    arch, filled = arch_from_hf_config(raw, model_id=(name or "").strip() or cfg_file.parent.name, source=str(cfg_file))
    missing = [k for k in _REQUIRED if k not in arch.config]
    if missing:
        raise InputError(f"model config lacks {', '.join(missing)}", file=str(cfg_file), key="--model-config",
                         hint="give the model's Hugging Face config.json")

    qc = arch.quantization_config
    hf_quant = cfg_file.parent / "hf_quant_config.json"  # ModelOpt checkpoints
    if qc is None and hf_quant.is_file():
        try:
            mo = json.loads(hf_quant.read_text(encoding="utf-8")).get("quantization", {})
            qc = {"quant_method": "modelopt", **mo} if mo.get("quant_algo") != "NVFP4" else {"quant_method": "nvfp4", **mo}
        except (OSError, ValueError, AttributeError):
            qc = None
    scheme, method = scheme_from_quant_config(qc)
    note = f"architecture read from {cfg_file}"
    if filled:
        note += f" (keys filled: {', '.join(filled)})"
    return ModelResolution(arch=arch, checkpoint_quantization=scheme, quantization_method=method,
                           quantization_config=qc, guessed=False, note=note)


# Nested language-model configs of multimodal checkpoints (HF ``text_config``; InternVL ``llm_config``;
# some VLMs ``language_config``); the model_type their text part has when the nested dict omits it.
_TEXT_KEYS = ("text_config", "llm_config", "language_config")
_TEXT_TYPE_OF = {"gemma3": "gemma3_text", "mllama": "mllama_text_model"}


@lru_cache(maxsize=None)
def _class_defaults_all() -> dict[str, dict[str, Any]]:
    return {k: dict(v["keys"]) for k, v in (load("hf_defaults").get("defaults") or {}).items()}


def _class_defaults(model_type: str) -> dict[str, Any]:
    """transformers config-class defaults for ``model_type`` (models/data/hf_defaults.yaml), else {}."""
    return _class_defaults_all().get(model_type, {})


def arch_from_hf_config(raw: dict[str, Any], model_id: str, source: str = "") -> tuple[ModelArch, list[str]]:
    """Build a ModelArch from a verbatim HF config.json dict.

    Multimodal configs: ``text_config`` keys are flattened into ``config`` (they win over top-level
    keys), ``vision_config`` is kept apart, top-level ``quantization_config`` stays in ``config``.
    Returns the arch and the standard keys that were filled from synonyms (e.g. GPT-2 ``n_embd``).
    """
    nested = next((k for k in _TEXT_KEYS if isinstance(raw.get(k), dict)), None)
    cfg: dict[str, Any] = {k: v for k, v in raw.items() if k not in (*_TEXT_KEYS, "vision_config")}
    text = raw.get(nested) if nested else None
    filled: list[str] = []
    if isinstance(text, dict):
        cfg.update(text)
        if "torch_dtype" not in text and "torch_dtype" in raw:
            cfg["torch_dtype"] = raw["torch_dtype"]
        # keys the text config omits take the transformers class default for its model_type (data file)
        text_type = str(text.get("model_type") or _TEXT_TYPE_OF.get(str(raw.get("model_type")), ""))
        for k, v in _class_defaults(text_type).items():
            if k not in text:
                cfg[k] = v
                filled.append(f"{k}={v!r} ({text_type} default)")
    elif "hidden_size" in cfg and "num_hidden_layers" in cfg:  # a real config missing a few keys, not a stub
        for k, v in _class_defaults(str(raw.get("model_type") or "")).items():
            if k in _REQUIRED and k not in cfg:
                cfg[k] = v
                filled.append(f"{k}={v!r} ({raw.get('model_type')} default)")
    for std, syns in _KEY_SYNONYMS.items():
        if std not in cfg:
            for syn in syns:
                if isinstance(cfg.get(syn), int):
                    cfg[std] = cfg[syn]
                    filled.append(f"{std}={syn}")
                    break
    cfg, arch_filled = normalize_config(str(cfg.get("model_type") or ""), cfg)
    filled += arch_filled
    vision = raw.get("vision_config") if isinstance(raw.get("vision_config"), dict) else None
    if vision is not None:
        # likewise a vision_config holding only the keys that differ from its class default (Llama 3.2 Vision
        # fine-tunes saved by transformers >= 4.47 keep just image_size and model_type)
        vtype = str(vision.get("model_type") or "")
        vdef = {k: v for k, v in _class_defaults(vtype).items() if k not in vision}
        if vdef:
            vision = {**vdef, **vision}
            filled += [f"vision_config.{k}={v!r} ({vtype} default)" for k, v in vdef.items()
                       if k not in ("intermediate_layers_indices", "supported_aspect_ratios")]
    model_type = str(text.get("model_type") or raw.get("model_type") or "unknown") if isinstance(text, dict) \
        else str(raw.get("model_type") or "unknown")
    multimodal = {k: raw[k] for k in ("mm_tokens_per_image", "image_token_index", "image_token_id",
                                      "spatial_merge_size", "image_grid_pinpoints") if k in raw}
    arch = ModelArch(
        id=model_id,
        model_type=model_type,
        architectures=list(raw.get("architectures") or []),
        config=cfg,
        vision_config=vision,
        multimodal=multimodal or None,
        source=source,
    )
    return arch, filled
