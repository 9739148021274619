"""Family-and-size matching of model names the catalog does not list.

People serve fine-tunes, renames and distills under names the catalog cannot enumerate
(``Qwen/Qwen3-Coder-30B-A3B-Instruct``, ``moonshotai/Kimi-Dev-72B``, ``acme/llama-3.1-8b-sft``). Most
reuse a published architecture exactly; the name says which through its family word, version and size.
This module reads those three from a repo name and picks the catalog entry with the same ones:

1. same family word and version (``qwen`` + ``3``), same size (``30B``) and active size (``A3B``);
   a modality word (``VL``, ``Vision``, ``Omni``) must agree when either side has one;
2. otherwise, when the catalog has no model of that family and version, a model of the same KIND
   (dense or mixture-of-experts) in any family, closest total size first (within 20%): a dense name
   never gets a MoE proxy (its KV cache and per-token FLOPs would be off several-fold), and a name
   says MoE only through an ``8x7B`` expert count, an ``A3B`` active size, a ``16E`` expert tag, the
   word ``MoE`` or a MoE-only family (Mixtral, DBRX, gpt-oss, MiniMax, DeepSeek-V2/V3/R1, ...).

The caller reports the choice as an assumption ("assumed architecture of X; pass --model-config to be
exact"). Sizes are in billions of parameters as written in names (``1.5B``, ``500M`` -> 0.5).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

# Family words, longest first (so "mixtral" is not read as "mistral" + junk, "codellama" before "llama").
_FAMILIES = (
    "deepseek-coder", "deepseek-llm", "medgemma", "translategemma", "vicuna", "zephyr", "openchat", "tulu",
    "tinyllama", "codellama", "llama", "qwq", "qwen", "gemma", "mixtral", "ministral", "mistral", "magistral",
    "devstral", "pixtral", "codestral", "phi", "deepseek", "granite", "gpt-oss", "glm", "minimax", "kimi", "nemotron",
    "falcon", "internlm", "olmo", "smollm", "exaone", "hunyuan", "baichuan", "starcoder", "jamba", "command-r",
    "yi", "ernie", "seed-oss", "dbrx", "aya", "lfm",
)
# Fine-tune lines whose checkpoints keep a base family's shapes (LlamaForCausalLM / MistralForCausalLM
# configs): Vicuna v1.5, CodeLlama and DeepSeek-Coder v1 keep Llama-2's multi-head layout at 7B/13B;
# Zephyr and OpenChat-3.5 are Mistral-7B fine-tunes; Tulu-3 is Llama-3.1. (OLMo is its own family: the
# catalog has OLMo 2, whose multi-head 7B/13B shapes OLMo 1 and OLMo 3 share.)
_LINEAGE = {"vicuna": ("llama", "2"), "codellama": ("llama", "2"), "deepseek-coder": ("llama", "2"),
            "zephyr": ("mistral", None), "openchat": ("mistral", None),
            "tulu": ("llama", "3.1"), "devstral": ("mistral", None), "magistral": ("mistral", None),
            "pixtral": ("mistral", None),   # Pixtral-12B: the Mistral-NeMo-12B decoder behind a Pixtral ViT
            # DeepSeek-LLM 7B / 67B (LlamaForCausalLM): 7B is multi-head 32 x 128 like Llama-2-7B (30 layers, not
            # 32), 67B grouped-query with 8 KV heads like Llama-2-70B (95 layers, not 80): the nearest shapes
            "deepseek-llm": ("llama", "2"),
            # MedGemma and TranslateGemma are Gemma 3 checkpoints (Gemma3ForConditionalGeneration / gemma3_text;
            # model cards: "built on Gemma 3"), 4B and 27B like Gemma 3's
            "medgemma": ("gemma", "3"), "translategemma": ("gemma", "3")}
# A release line that reused its predecessor's shapes at the sizes both published: Qwen2.5's 0.5B / 1.5B / 7B /
# 72B have Qwen2's layer, head and width configuration (Qwen2.5 technical report, arXiv 2412.15115, Table 1,
# beside the Qwen2 report, arXiv 2407.10671, Table 1): a Qwen2 name of one of those sizes the catalog lacks takes
# the Qwen2.5 one. (successor version, the sizes in billions both lines published with one configuration)
_VERSION_FALLBACK = {("qwen", "2"): ("2.5", (0.5, 1.5, 7.0, 72.0))}
# Mistral names its open-weight lines by tier and release date (YYMM) instead of a size: "Small" checkpoints
# from 2501 on (Mistral-Small-24B-Instruct-2501, Mistral-Small-3.1/3.2, Devstral-Small-2505/2507,
# Magistral-Small-2506/2507/2509) are the 24B Mistral-Small-3 text shape (model cards on
# huggingface.co/mistralai: "24B parameters"); Mistral-Small-Instruct-2409 is 22B. (tier, first YYMM, size B),
# newest first. Devstral and Magistral are Mistral-Small fine-tunes (their model cards: "finetuned from
# Mistral-Small-3.1").
_TIER_SIZES = (("small", 2501, 24.0), ("small", 2409, 22.0))
_TIER_RE = re.compile(r"(?<![a-z])(small)(?![a-z])")
# "Mistral-Small-3.2-24B": the tier's own version (a 1-2 digit number, not a size or a YYMM date code)
_TIER_VERSION_RE = re.compile(r"(?<![a-z])(?:small|medium|large)[-_ ]?(\d{1,2}(?:\.\d+)?)(?![\d.]|[bm](?![a-z]))")
_DATE_RE = re.compile(r"(?<!\d)(2[3-9][01]\d)(?!\d)")
_FAMILY_RE = re.compile(r"(?<![a-z])(" + "|".join(re.escape(f) for f in _FAMILIES) + r")(?:[-_ .]?(v?\d+(?:\.\d+)?)(?![\d.]|[bm](?![a-z])))?")
_SIZE_RE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*([bm])(?![a-z0-9])")
_ACTIVE_RE = re.compile(r"(?<![a-z0-9])a(\d+(?:\.\d+)?)b(?![a-z0-9])")
_EXPERTS_RE = re.compile(r"(?<![a-z0-9])(\d+)x(\d+(?:\.\d+)?)b(?![a-z0-9])")
_EXPERT_COUNT_RE = re.compile(r"(?<![a-z0-9])(\d+)e(?![a-z0-9])")   # Llama-4 "17B-16E" / "17B-128E"
_MODALITY_RE = re.compile(r"(?<![a-z])(vl|vision|omni|llava|pixtral)(?![a-z])")
# What makes a name say mixture-of-experts (applied after a "-Distill-" prefix is cut: R1 distills are dense):
# the word MoE, an expert-count tag ("Llama-4-Scout-17B-16E"), or a family whose every release is MoE.
_MOE_WORD_RE = re.compile(r"(?<![a-z])(?:moe|olmoe|phimoe)(?![a-z0-9])|(?<![a-z0-9.])\d+e(?![a-z0-9])"
                          r"|(?<![a-z])(?:mixtral|dbrx|gpt-oss|minimax|grok|arctic|kimi-k2|deepseek-(?:v2|v3|r1)"
                          # Mistral's MoE lines (vLLM recipes: Mistral-Small-4-119B "128 experts, 4 active per token
                          # (plus 1 shared expert)", 6.5B active; Mistral-Large-3-675B, 22B-41B active)
                          r"|mistral-small-4|mistral-large-3)")
SIZE_FALLBACK_TOL = 0.20   # a proxy by size alone: within 20% of the named total size
UNGROUPED_PENALTY = 0.10   # ... preferring grouped-query attention over MHA / MQA unless 10% closer in size
OTHER_FAMILY_PENALTY = 0.05   # ... and the query's family when within 5% (two family-less names are no family match;
                              # size decides beyond: a Qwen3.6-27B
                              # name is nearer a 27B model of another family than Qwen2.5-32B)
_DISTILL_RE = re.compile(r"distill[-_ ]")


@dataclass(frozen=True)
class NameKey:
    """What a repo name says about its architecture (None where it says nothing)."""

    family: str | None        # "qwen", "llama", ...
    version: str | None       # "3", "2.5", "3.1" (a leading "v" dropped)
    size_b: float | None      # total parameters, 10^9 (for "8x7B": the expert count x size)
    active_b: float | None    # MoE active parameters, 10^9 ("A3B")
    modality: str | None      # "vl" for vision-language names, else None
    moe: bool = False         # the name says mixture-of-experts (see _MOE_WORD_RE, "8x7B", "A3B")
    experts: int | None = None  # routed experts when the name states them ("17B-128E" -> 128)


def name_key(name: str) -> NameKey:
    """Parse a (repo) name: ``"Qwen/Qwen3-VL-30B-A3B-Instruct"`` -> qwen, 3, 30.0, 3.0, vl."""
    s = name.strip().lower().rsplit("/", 1)[-1]
    # "DeepSeek-R1-Distill-Qwen-32B": the architecture is the distill target's
    d = _DISTILL_RE.search(s)
    fam_text = s[d.end():] if d else s
    family = version = None
    m = _FAMILY_RE.search(fam_text)
    if m:
        family = m.group(1)
        version = m.group(2).lstrip("v") if m.group(2) else None
        if family == "qwq":
            family, version = "qwen", "2.5"   # QwQ-32B is a Qwen2.5-32B fine-tune (config.json model_type qwen2)
        elif family in _LINEAGE:
            family, version = _LINEAGE[family]
    size = active = None
    e = _EXPERTS_RE.search(s)
    if e:
        size = int(e.group(1)) * float(e.group(2))
    a = _ACTIVE_RE.search(s)
    if a:
        active = float(a.group(1))
    if size is None:
        for sm in _SIZE_RE.finditer(s):
            # skip the version digits the family regex consumed ("qwen2.5-7b": "2.5" is not a size)
            if m and not d and m.start(2) <= sm.start() < m.end(2):
                continue
            if a and sm.start() == a.start() + 1:
                continue
            val = float(sm.group(1)) / (1000.0 if sm.group(2) == "m" else 1.0)
            size = val
            break
    if family == "mistral" and version is None:
        tv = _TIER_VERSION_RE.search(s)
        version = tv.group(1) if tv else None
    if size is None and family == "mistral":
        size = _tier_size(s)
    mod = _MODALITY_RE.search(s)
    moe = bool(e or a or _MOE_WORD_RE.search(fam_text))
    ne = _EXPERT_COUNT_RE.search(s)
    return NameKey(family, version, size, active, "vl" if mod else None, moe, int(ne.group(1)) if ne else None)


def _tier_size(s: str) -> float | None:
    """Size of a Mistral tier name without one ("devstral-small-2507" -> 24.0), from its YYMM date code."""
    tier, date = _TIER_RE.search(s), _DATE_RE.search(s)
    if not tier or not date:
        return None
    yymm = int(date.group(1))
    if not 1 <= yymm % 100 <= 12:
        return None
    for name, first, size in _TIER_SIZES:
        if tier.group(1) == name and yymm >= first:
            return size
    return None


def _close(a: float | None, b: float | None, tol: float) -> bool:
    return a is not None and b is not None and abs(a - b) <= tol * max(a, b)


def best_match(query: NameKey, candidates: list[tuple[str, NameKey, float | None]],
               hybrid_ids: frozenset[str] = frozenset(),
               moe_ids: frozenset[str] = frozenset(),
               ungrouped_ids: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """(catalog id, how it matched) for ``query`` among ``(id, key, official_params_b)`` rows, or None.

    Needs a size in the query: a family word alone does not fix the shapes. ``moe_ids`` are the catalog
    entries with routed experts: the size-only fallback keeps to the query's kind (dense or MoE).
    ``ungrouped_ids`` are entries with one KV head per query head (multi-head, e.g. Command-R v01, Llama-2-13B)
    or a single KV head (multi-query, Falcon-7B): a dense size-only guess prefers the grouped-query layout most
    checkpoints since 2024 use (their KV per token differs up to 8-fold) unless it is over 10% further in size.
    """
    if query.size_b is None:
        return None

    def size_of(key: NameKey, params_b: float | None) -> float | None:
        return key.size_b if key.size_b is not None else params_b

    def active_ok(key: NameKey) -> bool:
        if query.experts is not None and key.experts is not None and query.experts != key.experts:
            return False          # Llama-4 Scout (16E) and Maverick (128E) share "17B" but not their experts
        if query.active_b is None and key.active_b is None:
            return True
        return _close(query.active_b, key.active_b, 0.15)

    # When the catalog knows the query's family and version, a size it lacks there is not looked for in
    # other families ("Qwen3-15B" is no phi-4): only family-less or unknown-family names fall back to size.
    known_line = bool(query.family) and query.version is not None and any(
        k.family == query.family and (query.version is None or k.version == query.version) for _, k, _ in candidates)
    family_hits: list[tuple[float, str]] = []
    size_hits: list[tuple[float, str]] = []
    sizes: dict[str, float] = {}
    for mid, key, params_b in candidates:
        size = size_of(key, params_b)
        if size is None or not active_ok(key):
            continue
        dist = abs(size - query.size_b) / query.size_b
        same_mod = query.modality == key.modality
        if _close(query.size_b, size, 0.05) and query.family and key.family == query.family and (
                query.version is None or key.version == query.version):
            family_hits.append((dist + (0 if same_mod else 1), mid))
        # a recurrent-state hybrid is never assumed from a size alone, nor a model of the other kind
        if mid not in hybrid_ids and (mid in moe_ids) == query.moe and _close(query.size_b, size, SIZE_FALLBACK_TOL):
            sizes[mid] = size
            size_hits.append((dist + (0 if same_mod else 1) + (0 if key.family and key.family == query.family else OTHER_FAMILY_PENALTY)
                              + (UNGROUPED_PENALTY if mid in ungrouped_ids and not query.moe
                                 and key.family != query.family else 0), mid))   # a family keeps its KV layout
    if family_hits:
        family_hits.sort()
        return family_hits[0][1], "same family and size"
    successor, shared_sizes = _VERSION_FALLBACK.get((query.family or "", query.version or ""), (None, ()))
    if successor is not None and query.size_b in shared_sizes:
        hit = best_match(replace(query, version=successor), candidates, hybrid_ids, moe_ids, ungrouped_ids)
        if hit is not None and hit[1] == "same family and size":
            return hit[0], f"same family and size in {query.family}{successor}, which kept {query.family}{query.version}'s shapes"
    # A family the catalog knows only as recurrent-state hybrids (Nemotron-H / Nano v2: Mamba-2 + a few attention
    # layers) is not mapped onto a dense model of the same size: its KV per token would be off several-fold.
    fam_ids = [mid for mid, k, _ in candidates if query.family and k.family == query.family]
    hybrid_family = bool(fam_ids) and all(mid in hybrid_ids for mid in fam_ids)
    if size_hits and not known_line and not hybrid_family:
        size_hits.sort()
        mid = size_hits[0][1]
        kind = "mixture-of-experts" if query.moe else "dense"
        return mid, (f"a guess: the {kind} catalog model closest in total size, {sizes[mid]:.3g}B for "
                     f"{query.size_b:.3g}B named")
    return None
