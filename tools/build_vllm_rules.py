#!/usr/bin/env python3
"""Generate sched_reader/compat/data/{matrix,rules}/ from the shared vLLM facts.

Reads (build time only, never at run time):
  <shared>/vllm/compat_matrix/<version>.md + index.json   -> data/matrix/index.json + data/matrix/m-<hash>.json
  <shared>/vllm/validation_rules.yaml                      -> data/rules/startup_rules.json
  <shared>/vllm/facts.yaml (speculative_decoding)          -> data/rules/startup_rules.json ("documented")

The start-up rules are a curated selection (``CURATED`` below): each entry names one extracted vLLM
rule by ``where`` + a message prefix, and gives the predicate that expresses its condition over engine
values. vLLM's message, exception and version ranges are copied from the extracted rule, so the data
stays a copy of vLLM facts; only the predicate encoding is ours. A selector that no longer matches any
extracted rule is a build error.

Usage:  python tools/build_vllm_rules.py [--shared /work/shared] [--out sched_reader/compat/data]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
VLLM_REPO = "https://github.com/vllm-project/vllm"

# --------------------------------------------------------------------------------------------------
# Feature matrix
# --------------------------------------------------------------------------------------------------

# label as shown in the doc (lowercased, markup stripped) -> stable key
FEATURE_KEYS: dict[str, str] = {
    "cp": "chunked_prefill",
    "apc": "prefix_caching",
    "lora": "lora",
    "prmpt adptr": "prompt_adapter",
    "sd": "spec_decode",
    "cuda graph": "cuda_graph",
    "pooling": "pooling",
    "enc-dec": "encoder_decoder",
    "logp": "logprobs",
    "prmpt logp": "prompt_logprobs",
    "async output": "async_output",
    "multi-step": "multi_step",
    "mm": "multimodal",
    "best-of": "best_of",
    "beam-search": "beam_search",
    "guided dec": "guided_decoding",
    "prompt-embeds": "prompt_embeds",
}

HARDWARE_KEYS: dict[str, str] = {
    "volta": "volta",
    "turing": "turing",
    "ampere": "ampere",
    "ada": "ada",
    "hopper": "hopper",
    "blackwell": "blackwell",
    "cpu": "cpu",
    "amd": "amd",
    "intel gpu": "intel_gpu",
    "tpu": "tpu",
}

STATUS = {"✅": "yes", "❌": "no", "✗": "no", "🟠": "partial", "❔": "unknown", "?": "unknown"}

_ABBR_HTML = re.compile(r'<abbr title="([^"]*)">([^<]*)</abbr>')
_ABBR_RST = re.compile(r":abbr:`([^`(]*?)\s*\(([^)]*)\)`")
_REF_RST = re.compile(r":ref:`([^`<]*?)\s*<[^>]*>`")
_MD_LINK = re.compile(r"\[([^\]]*)\](?:\(([^)]*)\)|\[([^\]]*)\])")
_RST_LINK = re.compile(r"`([^`<]*?)\s*<([^>]*)>`__")
_SUP = re.compile(r"<sup>([^<]*)</sup>")


def _label(cell: str) -> tuple[str, str | None]:
    """Visible text and abbr title of a header cell."""
    text, title = cell.strip(), None
    m = _ABBR_HTML.search(text) or _ABBR_RST.search(text)
    if m:
        if m.re is _ABBR_HTML:
            title, text = m.group(1), m.group(2)
        else:
            text, title = m.group(1), m.group(2)
    m = _REF_RST.search(text)
    if m:
        text = m.group(1)
    m = _MD_LINK.search(text)
    if m:
        text = m.group(1)
    return text.strip(), title


def _link_url(target: str) -> str:
    target = target.strip()
    m = re.fullmatch(r"gh-issue:(\d+)", target)
    if m:
        return f"{VLLM_REPO}/issues/{m.group(1)}"
    m = re.fullmatch(r"gh-pr:(\d+)", target)
    if m:
        return f"{VLLM_REPO}/pull/{m.group(1)}"
    return target


def _cell(raw: str) -> dict[str, Any] | None:
    """Normalize one body cell: {"s": status, "link"?: url, "marks"?: [footnote marks]}."""
    text = raw.strip()
    if not text:
        return None
    out: dict[str, Any] = {}
    marks = _SUP.findall(text)
    text = _SUP.sub("", text)
    if text.endswith("\\*"):
        marks.append("*")
        text = text[:-2]
    m = _RST_LINK.search(text)
    if m:
        out["link"] = _link_url(m.group(2))
        text = m.group(1)
    else:
        m = _MD_LINK.search(text)
        if m and m.group(2):
            out["link"] = _link_url(m.group(2))
            text = m.group(1)
    text = text.strip()
    if text not in STATUS:
        raise ValueError(f"unknown matrix cell {raw!r}")
    out = {"s": STATUS[text], **out}
    if marks:
        out["marks"] = [m.strip() for m in marks]
    return out


def _sections(text: str) -> dict[str, list[str]]:
    """Split the doc into the 'Feature x Feature' and 'Feature x Hardware' sections (lines)."""
    lines = text.splitlines()
    out: dict[str, list[str]] = {}
    current = None
    for i, line in enumerate(lines):
        stripped = line.strip().lstrip("#").strip()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        is_heading = line.startswith("#") or (nxt and set(nxt) <= set("-=^~") and len(nxt) >= 3)
        if is_heading and stripped in ("Feature x Feature", "Feature x Hardware"):
            current = "ff" if stripped.endswith("Feature") else "fh"
            out[current] = []
            continue
        if current:
            out[current].append(line)
    return out


def _rows(lines: list[str]) -> list[list[str]]:
    """Table rows of one section: pipe tables, RST list-tables and MyST list-tables."""
    rows: list[list[str]] = []
    pipe = [ln for ln in lines if ln.startswith("|")]
    if pipe:
        for ln in pipe:
            cells = [c.strip() for c in ln.strip().strip("|").split("|")]
            if all(re.fullmatch(r":?-+:?", c) for c in cells):
                continue
            rows.append(cells)
        return rows
    row_start = re.compile(r"^\s*(?:\* -|- \*)(?:\s(.*))?$")
    cell_line = re.compile(r"^\s*(?:-|\*)(?:\s(.*))?$")
    for ln in lines:
        m = row_start.match(ln)
        if m:
            rows.append([(m.group(1) or "").strip()])
            continue
        m = cell_line.match(ln)
        if m and rows:
            rows[-1].append((m.group(1) or "").strip())
    return rows


def _footnotes(lines: list[str]) -> dict[str, str]:
    notes: dict[str, str] = {}
    for ln in lines:
        s = ln.strip()
        if s.startswith("\\*"):
            notes["*"] = s[2:].strip()
        else:
            m = re.match(r"<sup>([^<]*)</sup>\s*(.*)", s)
            if m:
                notes[m.group(1).strip()] = m.group(2).strip()
    return notes


def parse_matrix(text: str) -> dict[str, Any]:
    """Parse one compatibility-matrix doc into {features, hardware, ff, fh}."""
    secs = _sections(text)
    if "ff" not in secs or "fh" not in secs:
        raise ValueError("matrix sections not found")
    notes = _footnotes(secs["ff"]) | _footnotes(secs["fh"])

    def table(lines: list[str], col_keys_map: dict[str, str] | None):
        rows = _rows(lines)
        header = rows[0]
        if _label(header[0])[0] != "Feature":
            raise ValueError(f"unexpected header {header[0]!r}")
        cols = []
        for h in header[1:]:
            label, title = _label(h)
            keymap = col_keys_map if col_keys_map is not None else FEATURE_KEYS
            key = keymap.get(label.lower())
            if key is None:
                raise ValueError(f"unknown column label {label!r}")
            cols.append((key, label, title))
        body: dict[str, dict[str, Any]] = {}
        row_meta = []
        for r in rows[1:]:
            label, title = _label(r[0])
            key = FEATURE_KEYS.get(label.lower())
            if key is None:
                raise ValueError(f"unknown row label {label!r}")
            row_meta.append((key, label, title))
            cells = r[1:] + [""] * (len(cols) - len(r[1:]))
            while len(cells) > len(cols) and not cells[-1]:
                cells.pop()  # 0.10.0's CP row has a stray trailing empty cell
            if len(cells) != len(cols):
                raise ValueError(f"row {label!r}: {len(cells)} cells for {len(cols)} columns")
            for (ckey, _, _), raw in zip(cols, cells):
                c = _cell(raw)
                if c is None:
                    continue
                for mk in c.pop("marks", []):
                    if mk not in notes:
                        raise ValueError(f"footnote {mk!r} has no text")
                    c.setdefault("notes", []).append(notes[mk])
                body.setdefault(key, {})[ckey] = c
        return cols, row_meta, body

    ff_cols, ff_rows, ff = table(secs["ff"], None)
    fh_cols, fh_rows, fh = table(secs["fh"], HARDWARE_KEYS)
    features = []
    seen = set()
    for key, label, title in ff_cols + ff_rows + fh_rows:
        if key not in seen:
            seen.add(key)
            features.append({"key": key, "label": label, **({"title": title} if title else {})})
    return {
        "features": features,
        "hardware": [{"key": k, "label": lab} for k, lab, _ in fh_cols],
        "ff": ff,
        "fh": fh,
    }


def build_matrix(shared: Path, out: Path) -> dict[str, Any]:
    src = shared / "vllm" / "compat_matrix"
    index = json.loads((src / "index.json").read_text())
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("m-*.json"):
        old.unlink()
    releases: dict[str, Any] = {}
    written: dict[str, str] = {}
    for version, meta in index.items():
        entry: dict[str, Any] = {"commit": meta.get("commit")}
        if not meta.get("file"):
            entry.update(matrix=None, note=meta.get("note"))
            releases[version] = entry
            continue
        text = (src / meta["file"]).read_text(encoding="utf-8")
        parsed = parse_matrix(text)
        blob = json.dumps(parsed, sort_keys=True, ensure_ascii=False)
        mid = "m-" + hashlib.sha256(blob.encode()).hexdigest()[:10]
        if mid not in written:
            (out / f"{mid}.json").write_text(blob + "\n", encoding="utf-8")
            written[mid] = version
        commit = meta.get("commit")
        if meta.get("approximate"):
            m = re.search(r"at commit ([0-9a-f]{40})", text.splitlines()[0])
            commit = m.group(1) if m else commit
            entry["commit"] = commit
        entry.update(
            matrix=mid,
            doc_path=meta.get("path"),
            source_url=f"{VLLM_REPO}/blob/{commit}/{meta.get('path')}",
            approximate=bool(meta.get("approximate", False)),
        )
        if meta.get("approximate"):
            entry["note"] = (
                f"no matrix at the {version} release commit is available; this is upstream "
                f"main at {commit[:7]} ({meta['file']}), newer than 0.28.0, date unknown"
            )
        releases[version] = entry
    doc = {
        "_about": "vLLM compatibility matrix per release, parsed from vLLM's docs (Compatibility Matrix). "
        "Identical matrices are stored once (m-<hash>.json). Generated by tools/build_vllm_rules.py.",
        "_source": "shared/vllm/compat_matrix/ (raw docs at the commits listed per release)",
        "releases": releases,
    }
    (out / "index.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return {"releases": len(releases), "matrices": len(written)}


# --------------------------------------------------------------------------------------------------
# Start-up rules
# --------------------------------------------------------------------------------------------------

# Predicates are prefix lists: ["and", p, q], ["or", ...], ["not", p], ["<", a, b] (also <=, >, >=,
# ==, !=), ["in", a, {"lit": [...]}], ["not in", ...], ["set", "name"], ["unset", "name"],
# ["*", a, b], ["+", a, b], ["%", a, b]. A bare string operand is a variable name (see VARIABLES);
# a literal string is written {"lit": "text"}; numbers, booleans and null are literals.
# sched_reader/compat/rules.py evaluates them (three-valued: an unknown variable never fires a rule).

FP8 = {"lit": ["fp8", "fp8_e4m3", "fp8_e5m2"]}
NGRAM = {"lit": ["ngram", "[ngram]", "ngram_gpu"]}

# Variables a predicate may use. Engine values are vLLM dest names; the rest are derived by
# sched_reader.compat.rules.engine_values (documented in RULES.md).
VARIABLES = {
    "async_scheduling", "block_size", "cpu_offload_gb", "data_parallel_external_lb", "data_parallel_size",
    "data_parallel_size_local", "decode_context_parallel_size", "distributed_executor_backend", "dtype",
    "enable_chunked_prefill", "enable_eplb", "enable_expert_parallel", "enable_lora", "enable_prefix_caching",
    "enable_prompt_adapter", "enable_prompt_embeds", "enforce_eager", "engine", "gpu_compute_capability",
    "gpu_memory_utilization", "kv_cache_dtype", "load_format", "long_prefill_token_threshold", "mamba_block_size",
    "max_cpu_loras", "max_long_partial_prefills", "max_loras", "max_model_len", "max_num_batched_tokens",
    "max_num_partial_prefills", "max_num_seqs", "num_lookahead_slots", "num_scheduler_steps", "numa_bind",
    "numa_bind_cpus", "numa_bind_nodes", "per_request_spec_decode_metrics", "pipeline_parallel_size",
    "platform", "prefill_context_parallel_size", "prefix_caching_hash_algo", "quantization", "runner",
    "spec.disable_by_batch_size", "spec.prompt_lookup_max", "spec.prompt_lookup_min",
    "spec.tensor_parallel_size", "spec_enabled", "spec_method", "spec_num_tokens", "task", "convert",
    "tensor_parallel_size",
}

# Each curated rule: id (stable, kebab), fix, predicate, and the extracted vLLM rules it encodes:
# sources = [(where, message prefix, optional predicate override for that source)].
CURATED: list[dict[str, Any]] = [
    {
        "id": "batched-tokens-below-max-model-len",
        "when": ["and", ["<", "max_num_batched_tokens", "max_model_len"], ["not", "enable_chunked_prefill"]],
        "fix": "raise --max-num-batched-tokens to at least --max-model-len, lower --max-model-len, or enable chunked prefill",
        "sources": [("SchedulerConfig._verify_args", "max_num_batched_tokens ({self.max_num_batched_tokens}) is smaller"),
                    ("SchedulerConfig.verify_max_model_len", "max_num_batched_tokens ({self.max_num_batched_tokens}) is smaller")],
    },
    {
        "id": "batched-tokens-below-max-num-seqs",
        "when": ["<", "max_num_batched_tokens", "max_num_seqs"],
        "fix": "set --max-num-batched-tokens >= --max-num-seqs (or lower --max-num-seqs)",
        "sources": [("SchedulerConfig._verify_args", "max_num_batched_tokens ({self.max_num_batched_tokens}) must be greater"),
                    ("SchedulerConfig.verify_max_model_len", "max_num_batched_tokens ({self.max_num_batched_tokens}) must be greater")],
    },
    {
        "id": "partial-prefills-need-chunked-prefill",
        "when": ["and", [">", "max_num_partial_prefills", 1], ["not", "enable_chunked_prefill"]],
        "fix": "enable chunked prefill or set --max-num-partial-prefills 1",
        "sources": [("SchedulerConfig._verify_args", "Chunked prefill must be enabled to set max_num_partial_prefills"),
                    ("SchedulerConfig.verify_max_model_len", "Chunked prefill must be enabled to set max_num_partial_prefills")],
    },
    {
        "id": "max-num-partial-prefills-below-1",
        "when": ["<", "max_num_partial_prefills", 1],
        "fix": "set --max-num-partial-prefills to 1 or more",
        "sources": [("SchedulerConfig._verify_args", "max_num_partial_prefills ({self.max_num_partial_prefills}) must be")],
    },
    {
        "id": "long-prefill-threshold-above-max-model-len",
        "when": ["and", [">", "max_num_partial_prefills", 1], [">", "long_prefill_token_threshold", "max_model_len"]],
        "fix": "lower --long-prefill-token-threshold to at most --max-model-len",
        "sources": [("SchedulerConfig._verify_args", "long_prefill_token_threshold ({self.long_prefill_token_threshold}) cannot"),
                    ("SchedulerConfig.verify_max_model_len", "long_prefill_token_threshold ({self.long_prefill_token_threshold}) cannot",
                     None),
                    ],
        "per_range": {"0.27.0": [">", "long_prefill_token_threshold", "max_model_len"]},
    },
    {
        "id": "max-long-partial-prefills-range",
        "when": ["or", ["<", "max_long_partial_prefills", 1], [">", "max_long_partial_prefills", "max_num_partial_prefills"]],
        "fix": "keep 1 <= --max-long-partial-prefills <= --max-num-partial-prefills",
        "sources": [("SchedulerConfig._verify_args", "max_long_partial_prefills ({self.max_long_partial_prefills}) must be"),
                    ("SchedulerConfig.verify_max_model_len", "self.max_long_partial_prefills={self.max_long_partial_prefills} must be",
                     [">", "max_long_partial_prefills", "max_num_partial_prefills"])],
    },
    {
        "id": "num-lookahead-slots-negative",
        "when": ["<", "num_lookahead_slots", 0],
        "fix": "set --num-lookahead-slots to 0 or more",
        "sources": [("SchedulerConfig._verify_args", "num_lookahead_slots ({self.num_lookahead_slots}) must be")],
    },
    {
        "id": "num-scheduler-steps-below-1",
        "when": ["<", "num_scheduler_steps", 1],
        "fix": "set --num-scheduler-steps to 1 or more",
        "sources": [("SchedulerConfig._verify_args", "num_scheduler_steps ({self.num_scheduler_steps}) must be")],
    },
    {
        "id": "gpu-memory-utilization-above-1",
        "when": [">", "gpu_memory_utilization", 1.0],
        "fix": "--gpu-memory-utilization is a fraction of device memory: use a value <= 1.0 (e.g. 0.9)",
        "sources": [("CacheConfig._verify_args", "GPU memory utilization must be less than 1.0")],
    },
    {
        "id": "cpu-offload-negative",
        "when": ["<", "cpu_offload_gb", 0],
        "fix": "set --cpu-offload-gb to 0 or more",
        "sources": [("EngineArgs.create_engine_config", "CPU offload space must be non-negative"),
                    ("CacheConfig._verify_args", "CPU offload space must be non-negative")],
    },
    {
        "id": "cuda-block-size-above-32",
        "when": ["and", ["==", "platform", {"lit": "cuda"}], [">", "block_size", 32]],
        "fix": "use --block-size 8, 16 or 32 on this release",
        "sources": [("CacheConfig._verify_args", "CUDA Paged Attention kernel only supports block sizes up to 32")],
    },
    {
        "id": "fp8-kv-cache-on-v1",
        "when": ["and", ["in", "kv_cache_dtype", FP8], ["==", "engine", {"lit": "v1"}]],
        "fix": "upgrade vLLM (V1 supports fp8 KV cache from 0.8.2), run V0 (VLLM_USE_V1=0) or drop --kv-cache-dtype",
        "sources": [("CacheConfig._verify_cache_dtype", "V1 does not yet support fp8 KV cache")],
    },
    {
        "id": "prefix-caching-sha256-on-v0",
        "when": ["and", "enable_prefix_caching", ["==", "prefix_caching_hash_algo", {"lit": "sha256"}],
                 ["==", "engine", {"lit": "v0"}]],
        "fix": "use --prefix-caching-hash-algo builtin on the V0 engine",
        "sources": [("EngineArgs._set_default_args_v0", "sha256 is not supported for prefix caching in V0 engine")],
    },
    {
        "id": "lora-max-loras-below-1",
        "when": ["and", "enable_lora", ["<", "max_loras", 1]],
        "fix": "set --max-loras to 1 or more",
        "sources": [("LoRAConfig.__post_init__", "max_loras ({self.max_loras}) must be >= 1.")],
    },
    {
        "id": "lora-max-cpu-loras-below-max-loras",
        "when": ["and", "enable_lora", ["set", "max_cpu_loras"], ["<", "max_cpu_loras", "max_loras"]],
        "fix": "set --max-cpu-loras >= --max-loras (or leave it unset)",
        "sources": [("LoRAConfig.__post_init__", "max_cpu_loras ({self.max_cpu_loras}) must be >= max_loras"),
                    ("LoRAConfig._validate_lora_config", "max_cpu_loras ({self.max_cpu_loras}) must be >= max_loras")],
    },
    {
        "id": "lora-with-chunked-prefill",
        "when": ["and", "enable_lora", "enable_chunked_prefill"],
        "fix": "disable chunked prefill with LoRA on this release, or upgrade to vLLM >= 0.6.5",
        "sources": [("LoRAConfig.verify_with_scheduler_config", "LoRA is not supported with chunked prefill yet.")],
    },
    {
        "id": "lora-with-cpu-offload",
        "when": ["and", "enable_lora", [">", "cpu_offload_gb", 0]],
        "fix": "drop --cpu-offload-gb when serving LoRA adapters on this engine",
        "sources": [("LoRAConfig.verify_with_cache_config", "CPU offload is not supported with LoRA yet."),
                    ("LoRAConfig.verify_with_cache_config", "V0 LoRA does not support CPU offload",
                     ["and", "enable_lora", [">", "cpu_offload_gb", 0], ["==", "engine", {"lit": "v0"}]])],
    },
    {
        "id": "lora-spec-decode-token-budget",
        "when": ["and", "enable_lora", "spec_enabled",
                 ["<", "max_num_batched_tokens", ["*", "max_num_seqs", ["+", "spec_num_tokens", 1]]]],
        "fix": "raise --max-num-batched-tokens to max-num-seqs x (num_speculative_tokens + 1), or lower num_speculative_tokens",
        "sources": [("EngineArgs.create_engine_config", "Consider increasing max_num_batched_tokens or decreasing")],
    },
    {
        "id": "bitsandbytes-needs-bitsandbytes-load-format",
        "when": ["and", ["==", "quantization", {"lit": "bitsandbytes"}], ["!=", "load_format", {"lit": "bitsandbytes"}]],
        "fix": "add --load-format bitsandbytes",
        "sources": [("EngineArgs.create_engine_config", "BitsAndBytes quantization and QLoRA adapter only support")],
    },
    {
        "id": "bitsandbytes-with-tp-or-pp",
        "when": ["and", ["==", "quantization", {"lit": "bitsandbytes"}],
                 ["or", [">", "tensor_parallel_size", 1], [">", "pipeline_parallel_size", 1]]],
        "fix": "run bitsandbytes models with TP = PP = 1 on this release, or upgrade",
        "sources": [("ModelConfig.verify_with_parallel_config", "BitAndBytes quantization with TP or PP is not supported yet.")],
    },
    {
        "id": "bfloat16-needs-sm80",
        "when": ["and", ["==", "dtype", {"lit": "bfloat16"}], ["<", "gpu_compute_capability", 8.0],
                 ["==", "platform", {"lit": "cuda"}]],
        "fix": "set --dtype half (float16) on GPUs older than Ampere (e.g. V100, T4)",
        "sources": [("_check_if_gpu_supports_dtype", "Bfloat16 is only supported on GPUs with compute capability"),
                    ("CudaPlatformBase.check_if_supports_dtype", "Bfloat16 is only supported on GPUs with compute capability")],
    },
    {
        "id": "spec-decode-with-multi-step",
        "when": ["and", [">", "num_scheduler_steps", 1], "spec_enabled"],
        "fix": "drop --num-scheduler-steps (multi-step) when using speculative decoding",
        "sources": [("EngineArgs.create_engine_config", "Speculative decoding is not supported with multi-step")],
    },
    {
        "id": "chunked-prefill-with-multi-step",
        "when": ["and", [">", "num_scheduler_steps", 1], "enable_chunked_prefill"],
        "fix": "drop --num-scheduler-steps or disable chunked prefill",
        "sources": [("EngineArgs.create_engine_config", "Chunked prefill is not supported with multi-step")],
    },
    {
        "id": "multi-step-chunked-prefill-with-pp",
        "when": ["and", [">", "num_scheduler_steps", 1], "enable_chunked_prefill", [">", "pipeline_parallel_size", 1]],
        "fix": "drop --num-scheduler-steps, disable chunked prefill, or use --pipeline-parallel-size 1",
        "sources": [("EngineArgs.create_engine_config", "Multi-Step Chunked-Prefill is not supported for pipeline-parallel-size")],
    },
    {
        "id": "multi-step-on-v1",
        "when": ["and", [">", "num_scheduler_steps", 1], ["==", "engine", {"lit": "v1"}], ["==", "platform", {"lit": "cuda"}]],
        "fix": "remove --num-scheduler-steps (the V1 engine does not need multi-step scheduling)",
        "sources": [("CudaPlatformBase.check_and_update_config", "Multi-step scheduling is not supported (and not needed)")],
    },
    {
        "id": "spec-decode-on-v1-unsupported",
        "when": ["and", "spec_enabled", ["==", "engine", {"lit": "v1"}], ["==", "platform", {"lit": "cuda"}]],
        "fix": "run V0 (VLLM_USE_V1=0) for speculative decoding on this release, or upgrade",
        "sources": [("CudaPlatformBase.check_and_update_config", "Speculative decoding is not yet supported on VLLM V1.")],
    },
    {
        "id": "spec-decode-on-v0-unsupported",
        "when": ["and", "spec_enabled", ["==", "engine", {"lit": "v0"}], ["==", "platform", {"lit": "cuda"}]],
        "fix": "use the V1 engine (unset VLLM_USE_V1=0) for speculative decoding",
        "sources": [("CudaPlatformBase.check_and_update_config", "Speculative decoding is not supported on vLLM V0.")],
    },
    {
        "id": "async-scheduling-with-pp",
        "when": ["and", "async_scheduling", [">", "pipeline_parallel_size", 1]],
        "fix": "drop --async-scheduling or use --pipeline-parallel-size 1",
        "sources": [("EngineArgs.create_engine_config", "Async scheduling is not supported with pipeline-parallel-size > 1."),
                    ("VllmConfig.__post_init__", "Async scheduling is not yet compatible with pipeline_parallel_size > 1")],
    },
    {
        "id": "async-scheduling-with-spec-decode",
        "when": ["and", "async_scheduling", "spec_enabled"],
        "fix": "drop --async-scheduling or --speculative-config on this release",
        "sources": [("EngineArgs.create_engine_config", "Currently, speculative decoding is not supported with async scheduling")],
    },
    {
        "id": "async-scheduling-with-uni-backend",
        "when": ["and", "async_scheduling", ["==", "distributed_executor_backend", {"lit": "uni"}]],
        "fix": "use --distributed-executor-backend mp with --async-scheduling",
        "sources": [("EngineArgs.create_engine_config", "Async scheduling is not supported with uni-process backend.")],
    },
    {
        "id": "async-scheduling-executor-backend",
        "when": ["and", "async_scheduling", ["==", "distributed_executor_backend", {"lit": "ray"}]],
        "fix": "use --distributed-executor-backend mp (or uni / external_launcher) with --async-scheduling",
        "sources": [("VllmConfig.__post_init__", "Currently, async scheduling only supports `mp`, `uni`, or `external_launcher`")],
    },
    {
        "id": "spec-num-tokens-not-positive",
        "when": ["and", "spec_enabled", ["<=", "spec_num_tokens", 0]],
        "fix": "set num_speculative_tokens to 1 or more",
        "sources": [("SpeculativeConfig._verify_args", "Expected num_speculative_tokens to be greater than zero")],
    },
    {
        "id": "ngram-lookup-min-below-1",
        "when": ["and", ["in", "spec_method", NGRAM], ["<", "spec.prompt_lookup_min", 1]],
        "fix": "set prompt_lookup_min to 1 or more",
        "sources": [("SpeculativeConfig.__post_init__", "prompt_lookup_min={self.prompt_lookup_min} must be > 0")],
    },
    {
        "id": "ngram-lookup-max-below-1",
        "when": ["and", ["in", "spec_method", NGRAM], ["<", "spec.prompt_lookup_max", 1]],
        "fix": "set prompt_lookup_max to 1 or more",
        "sources": [("SpeculativeConfig.__post_init__", "prompt_lookup_max={self.prompt_lookup_max} must be > 0")],
    },
    {
        "id": "ngram-lookup-min-above-max",
        "when": ["and", ["in", "spec_method", NGRAM], [">", "spec.prompt_lookup_min", "spec.prompt_lookup_max"]],
        "fix": "keep prompt_lookup_min <= prompt_lookup_max",
        "sources": [("SpeculativeConfig.__post_init__", "prompt_lookup_min={self.prompt_lookup_min} must be <= prompt_lookup_max")],
    },
    {
        "id": "spec-config-tensor-parallel-size",
        "when": ["and", "spec_enabled", ["set", "spec.tensor_parallel_size"]],
        "fix": "rename tensor_parallel_size to draft_tensor_parallel_size inside --speculative-config",
        "sources": [("SpeculativeConfig._verify_args", "'tensor_parallel_size' is not a valid argument in the speculative_config")],
    },
    {
        "id": "spec-disable-by-batch-size-below-2",
        "when": ["and", "spec_enabled", ["set", "spec.disable_by_batch_size"], ["<", "spec.disable_by_batch_size", 2]],
        "fix": "set disable_by_batch_size to 2 or more (or leave it unset)",
        "sources": [("SpeculativeConfig._verify_args", "Expect the batch size threshold of disabling speculative decoding")],
    },
    {
        "id": "per-request-spec-metrics-need-spec-decode",
        "when": ["and", ["set", "per_request_spec_decode_metrics"],
                 ["!=", "per_request_spec_decode_metrics", {"lit": "none"}], ["not", "spec_enabled"]],
        "fix": "drop --per-request-spec-decode-metrics or configure --speculative-config",
        "sources": [("VllmConfig.__post_init__", "--per-request-spec-decode-metrics requires speculative decoding")],
    },
    {
        "id": "eplb-needs-expert-parallel",
        "when": ["and", "enable_eplb", ["not", "enable_expert_parallel"]],
        "fix": "add --enable-expert-parallel (EPLB balances expert-parallel ranks)",
        "sources": [("ParallelConfig.__post_init__", "enable_expert_parallel must be True to use EPLB."),
                    ("ParallelConfig._validate_parallel_config", "enable_expert_parallel must be True to use EPLB.")],
    },
    {
        "id": "eplb-needs-parallelism",
        "when": ["and", "enable_eplb", ["<=", ["*", "tensor_parallel_size", "data_parallel_size"], 1]],
        "fix": "EPLB needs TP or DP > 1",
        "sources": [("ParallelConfig.__post_init__", "EPLB requires tensor_parallel_size or data_parallel_size"),
                    ("ParallelConfig._validate_parallel_config", "EPLB requires tensor_parallel_size or data_parallel_size"),
                    ("ParallelConfig._validate_parallel_config", "EPLB requires tensor, prefill-context, or data parallelism",
                     ["and", "enable_eplb", ["<=", ["*", ["*", "tensor_parallel_size", "prefill_context_parallel_size"],
                                                      "data_parallel_size"], 1]])],
    },
    {
        "id": "dp-size-local-above-dp-size",
        "when": [">", "data_parallel_size_local", "data_parallel_size"],
        "fix": "keep --data-parallel-size-local <= --data-parallel-size",
        "sources": [("ParallelConfig.__post_init__", "data_parallel_size_local ({self.data_parallel_size_local}) must be <="),
                    ("ParallelConfig._validate_parallel_config", "data_parallel_size_local ({self.data_parallel_size_local}) must be <=")],
    },
    {
        "id": "dp-external-lb-needs-dp",
        "when": ["and", "data_parallel_external_lb", ["<=", "data_parallel_size", 1]],
        "fix": "external DP load balancing needs --data-parallel-size > 1",
        "sources": [("ParallelConfig.__post_init__", "data_parallel_external_lb can only be set when data_parallel_size > 1"),
                    ("ParallelConfig._validate_parallel_config", "data_parallel_external_lb can only be set when data_parallel_size > 1")],
    },
    {
        "id": "tp-not-divisible-by-dcp",
        "when": ["!=", ["%", "tensor_parallel_size", "decode_context_parallel_size"], 0],
        "fix": "choose --decode-context-parallel-size that divides --tensor-parallel-size",
        "sources": [("EngineArgs.create_engine_config", "tp_size={self.tensor_parallel_size} must be divisible bydcp_size"),
                    ("ParallelConfig._validate_parallel_config", "tp_size={self.tensor_parallel_size} must be divisible bydcp_size"),
                    ("ParallelConfig._validate_parallel_config", "tp_size={tp} must be divisible by dcp_size={dcp}.",
                     ["and", ["==", "prefill_context_parallel_size", 1],
                      ["!=", ["%", "tensor_parallel_size", "decode_context_parallel_size"], 0]])],
    },
    {
        "id": "max-model-len-not-positive",
        "when": ["<", "max_model_len", 1],
        "fix": "set --max-model-len to a positive number of tokens (or leave it unset to use the model's)",
        "sources": [("ModelConfig.validate_model_config_after", "max_model_len must be a positive integer, got",
                     None)],
        "only_ranges_from": "0.23.0",
    },
    {
        "id": "mamba-block-size-needs-prefix-caching",
        "when": ["and", ["set", "mamba_block_size"], ["not", "enable_prefix_caching"]],
        "fix": "enable prefix caching or drop --mamba-block-size",
        "sources": [("VllmConfig.validate_mamba_block_size", "--mamba-block-size can only be set with --enable-prefix-caching")],
    },
    {
        "id": "numa-bind-lists-need-numa-bind",
        "when": ["and", ["not", "numa_bind"], ["or", ["set", "numa_bind_nodes"], ["set", "numa_bind_cpus"]]],
        "fix": "add --numa-bind, or drop --numa-bind-nodes / --numa-bind-cpus",
        "sources": [("ParallelConfig._validate_parallel_config", "numa_bind_nodes and numa_bind_cpus require numa_bind=True.")],
    },
]

# Feature key -> predicate that says the feature is on for an engine (None: request- or model-level
# features that a deploy config does not switch on; shown in the matrix, not checked).
FEATURE_WHEN: dict[str, Any] = {
    "chunked_prefill": "enable_chunked_prefill",
    "prefix_caching": "enable_prefix_caching",
    "lora": "enable_lora",
    "prompt_adapter": "enable_prompt_adapter",
    "spec_decode": "spec_enabled",
    "cuda_graph": ["not", "enforce_eager"],
    "pooling": ["or", ["==", "runner", {"lit": "pooling"}],
                ["in", "task", {"lit": ["embed", "embedding", "classify", "score", "reward"]}],
                ["in", "convert", {"lit": ["embed", "classify"]}]],
    "multi_step": [">", "num_scheduler_steps", 1],
    "prompt_embeds": "enable_prompt_embeds",
    "pipeline_parallel": [">", "pipeline_parallel_size", 1],
    "encoder_decoder": None,
    "logprobs": None,
    "prompt_logprobs": None,
    "async_output": None,
    "multimodal": None,
    "best_of": None,
    "beam_search": None,
    "guided_decoding": None,
}

FEATURE_DESCRIBE = {
    "chunked_prefill": "chunked prefill is on",
    "prefix_caching": "prefix caching is on",
    "lora": "--enable-lora",
    "prompt_adapter": "--enable-prompt-adapter",
    "spec_decode": "speculative decoding is configured",
    "cuda_graph": "CUDA graphs are on (no --enforce-eager)",
    "pooling": "a pooling runner/task",
    "multi_step": "--num-scheduler-steps > 1",
    "prompt_embeds": "--enable-prompt-embeds",
    "pipeline_parallel": "--pipeline-parallel-size > 1",
}


def _first(ranges: list[str]) -> str:
    return ranges[0].partition("..")[0]


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def _check_vars(pred: Any, rule_id: str) -> None:
    if isinstance(pred, str):
        if pred not in VARIABLES:
            raise ValueError(f"{rule_id}: unknown variable {pred!r}")
    elif isinstance(pred, list):
        for p in pred[1:]:
            _check_vars(p, rule_id)


def build_rules(shared: Path, out: Path) -> dict[str, int]:
    data = yaml.safe_load((shared / "vllm" / "validation_rules.yaml").read_text())
    facts = yaml.safe_load((shared / "vllm" / "facts.yaml").read_text())
    order = data["_meta"]["versions"]
    extracted = data["rules"]
    rules_out = []
    for cur in CURATED:
        variants = []
        _check_vars(cur["when"], cur["id"])
        for src in cur["sources"]:
            where, prefix = src[0], src[1]
            override = src[2] if len(src) > 2 else None
            matches = [r for r in extracted if r["where"] == where and (r.get("message") or "").startswith(prefix)]
            if not matches:
                raise ValueError(f"{cur['id']}: no extracted rule {where} / {prefix!r}")
            for r in matches:
                ranges = list(r["version_ranges"])
                if cur.get("only_ranges_from"):
                    ranges = [x for x in ranges if _vkey(_first([x])) >= _vkey(cur["only_ranges_from"])]
                    if not ranges:
                        continue
                when = override
                for start, pred in (cur.get("per_range") or {}).items():
                    if _vkey(_first(ranges)) >= _vkey(start):
                        when = pred
                if when is not None:
                    _check_vars(when, cur["id"])
                first = _first(ranges)
                files = r.get("files") or []
                variant = {
                    "versions": ranges,
                    "where": where,
                    "exception": r.get("exception"),
                    "kind": r.get("kind"),
                    "message": r.get("message"),
                    "conditions": r.get("conditions"),
                    "source_url": f"{VLLM_REPO}/blob/v{first}/{files[0]}" if files else None,
                }
                if when is not None:
                    variant["when"] = when
                variants.append(variant)
        variants.sort(key=lambda v: _vkey(_first(v["versions"])))
        # variants may overlap (0.10.2 checks bf16 in two places): the evaluator reports a rule once
        rules_out.append({"id": cur["id"], "when": cur["when"], "fix": cur["fix"], "variants": variants})

    # documented incompatibilities outside the matrix (spec-decode docs)
    documented = []
    for item in facts["speculative_decoding"]["documented_incompatibilities"]:
        text = item["text"]
        if "pipeline parallelism" in text.lower():
            documented.append({"features": ["spec_decode", "pipeline_parallel"], "text": text,
                               "docs_versions": item["docs_versions"]})
    # vLLM's docs say "as of vllm<=0.15.0": the releases covered are 0.7.3 (first doc note) .. 0.15.0
    pp_sd_versions = [v for v in order if _vkey("0.7.3") <= _vkey(v) <= _vkey("0.15.0")]
    doc_rules = [{
        "id": "spec-decode-with-pipeline-parallel",
        "features": ["spec_decode", "pipeline_parallel"],
        "versions": [f"{pp_sd_versions[0]}..{pp_sd_versions[-1]}"],
        "text": "; ".join(f"{d['text']} (docs {d['docs_versions']})" for d in documented),
        "source_url": f"{VLLM_REPO}/blob/v0.15.0/docs/features/spec_decode.md",
    }]
    spec_methods = []
    for pv in facts["speculative_decoding"]["per_version"]:
        mv = pv.get("method_values")
        spec_methods.append({"versions": pv["versions"], "methods": mv if isinstance(mv, list) else None,
                             "note": None if isinstance(mv, list) else mv})
    out.mkdir(parents=True, exist_ok=True)
    doc = {
        "_about": "vLLM start-up rules (raise/assert at engine start) that an engine spec can express, each as a "
        "predicate over engine values with vLLM's own message and version ranges; generated by "
        "tools/build_vllm_rules.py from shared/vllm/validation_rules.yaml (extracted from the vLLM wheels).",
        "_versions": order,
        "rules": rules_out,
        "documented": doc_rules,
        "features": {k: {"when": v, "describe": FEATURE_DESCRIBE.get(k)} for k, v in FEATURE_WHEN.items()},
        "spec_methods": {
            "_source": "shared/vllm/facts.yaml speculative_decoding.per_version (SpeculativeConfig.method Literal "
            "in each wheel, vllm/config/speculative.py)",
            "per_version": spec_methods,
        },
    }
    (out / "startup_rules.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return {"rules": len(rules_out), "variants": sum(len(r["variants"]) for r in rules_out), "documented": len(doc_rules)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=Path("/work/shared"))
    ap.add_argument("--out", type=Path, default=ROOT / "sched_reader" / "compat" / "data")
    args = ap.parse_args(argv)
    stats = build_matrix(args.shared, args.out / "matrix")
    print(f"matrix: {stats['releases']} releases, {stats['matrices']} distinct matrices")
    rstats = build_rules(args.shared, args.out / "rules")
    print(f"rules: {rstats}")
    write_rules_md(args.out / "rules" / "startup_rules.json", args.out.parent / "RULES.md")
    return 0


def write_rules_md(rules_json: Path, rules_md: Path) -> None:
    """Refresh the generated start-up rules table in RULES.md (between the markers)."""
    sys.path.insert(0, str(ROOT))
    from sched_reader.compat.rules import render  # build time only

    doc = json.loads(rules_json.read_text(encoding="utf-8"))
    lines = ["| rule | condition | vLLM raises in | releases |", "|---|---|---|---|"]
    for r in doc["rules"]:
        for i, v in enumerate(r["variants"]):
            cond = render(v.get("when", r["when"])).replace("|", "\\|")
            lines.append(f"| {r['id'] if i == 0 else ''} | `{cond}` | {v['where']} ({v['exception']}) | "
                         f"{', '.join(v['versions'])} |")
    text = rules_md.read_text(encoding="utf-8")
    begin, end = "<!-- startup-rules:begin -->", "<!-- startup-rules:end -->"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    rules_md.write_text(head + begin + "\n" + "\n".join(lines) + "\n" + end + tail, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
