"""Recover engine step durations from a vLLM ``benchmark_serving.py`` result JSON (per-request ttfts and itls).

Every running request gets one token per engine step (no speculative decoding), and a streaming client sees
all of a step's tokens at about the same time, so the inter-token latencies of two requests agree over the
steps they share. Request 0 (sent first, at t = 0) defines the step clock: step j ends at
E[j] = ttft_0 + sum(itl_0[:j]) (seconds after request 0 was sent), and lasts itl_0[j - 1]. Request i's
token m arrives at E[a_i + m], so its ITLs equal request 0's shifted by a_i: itl_i[m] = itl_0[a_i + m].
a_i is found by least absolute difference over the first ``MATCH`` ITLs; request i was prefilled (its last
prefill chunk) in step a_i, and was sent at E[a_i] - ttft_i. A request that outlives request 0 is aligned
on the overlap only (its later steps are unseen and are left out).

Which prompt chunks each step computed is replayed with vLLM V1's token budget (``steps``); the replay is
checked against the alignment (a request whose replayed last chunk is not in step a_i is counted). Step 0 is
request 0's TTFT (its prefill plus the request path), not a bare step. Output: the median decode-only step,
steps grouped by prompt tokens (duration range and median; with ``--model ROW_ID``, IterationCostModel's
step time for the same contents and the measured/model ratio) and a least-squares fit of step time on prompt
tokens and decodes. A measurement read from the published file to check the cost model, not a runtime input.

Usage: python tools/benchmark_serving_steps.py RESULT.json [--model ROW_ID] [--all]
(RESULT.json e.g. from ``git show 8eaead1:saved-results/v0.8.2/h200-brewster/qwq-32b/vllm-1000-2000.json``
in github.com/simon-mo/vLLM-Benchmark).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MATCH = 40          # ITLs compared when aligning a request to request 0
MAX_MAD_S = 2e-3    # an alignment whose mean |difference| exceeds this (s) is reported as unaligned
ARRIVAL_DELAY_S = 5e-3   # client send -> engine queue (HTTP, tokenization); checked by the replay mismatch count


def align(itls: list[list[float]]) -> list[int | None]:
    """a_i for every request (step index in request 0's clock of its first token); None if not aligned."""
    ref = np.asarray(itls[0], dtype=float)
    out: list[int | None] = [0]
    for seq in itls[1:]:
        s = np.asarray(seq[:MATCH], dtype=float)
        if len(s) == 0:
            out.append(None)
            continue
        best, best_err = None, float("inf")
        for a in range(0, len(ref)):
            n = min(len(s), len(ref) - a)
            if n < min(len(s), 8):
                break
            err = float(np.mean(np.abs(ref[a:a + n] - s[:n])))
            if err < best_err:
                best, best_err = a, err
        out.append(best if best_err <= MAX_MAD_S else None)
    return out


def steps(result: dict, budget: int, arrival_delay_s: float = ARRIVAL_DELAY_S) -> tuple[list[dict], int, int]:
    """Per step of request 0's clock: duration (s), prompt tokens and chunks scheduled, prompts finished,
    decodes and their context sum, attention pairs of the chunks. The chunks are replayed with vLLM V1's
    token budget (decodes first, then waiting prompts first come first served, the last one chunked), each
    request available from its send time (E[a_i] - ttft_i) plus ``arrival_delay_s``. Returns the rows, the
    number of unaligned requests and the number whose replayed last chunk is not in step a_i."""
    itls, ttfts = result["itls"], result["ttfts"]
    ins, outs = result["input_lens"], result["output_lens"]
    a = align(itls)
    ref = itls[0]
    ends = np.concatenate([[ttfts[0]], ttfts[0] + np.cumsum(ref)])      # E[j], s after request 0 was sent
    send = {i: float(ends[ai] - ttfts[i]) for i, ai in enumerate(a) if ai is not None and ai < len(ends)}
    order = sorted(send, key=lambda i: (send[i], i))
    done = {i: 0 for i in order}                                          # prompt tokens already computed
    first_step: dict[int, int] = {}
    rows = []
    for j in range(0, len(ends)):
        start = ends[j - 1] if j else 0.0
        dec = [i for i in order if i in first_step and first_step[i] < j <= first_step[i] + outs[i] - 1]
        left = budget - len(dec)
        chunks = []
        for i in order:
            if left <= 0:
                break
            if i in first_step or send[i] + arrival_delay_s > start + 1e-9 and not (j == 0 and i == 0):
                continue
            c = min(ins[i] - done[i], left)
            chunks.append((i, done[i], c))
            done[i] += c
            left -= c
            if done[i] == ins[i]:
                first_step[i] = j
        ctx = sum(ins[i] + (j - first_step[i]) for i in dec)
        rows.append({"step": j, "dur_s": float(ttfts[0] if j == 0 else ref[j - 1]),
                     "prefill_tokens": sum(c for _, _, c in chunks), "chunks": len(chunks),
                     "prefills": sum(1 for i, _, _ in chunks if first_step.get(i) == j),
                     "attn_pairs": sum(c * s0 + c * (c + 1) // 2 for _, s0, c in chunks),
                     "decodes": len(dec), "decode_ctx": ctx})
    mismatched = sum(1 for i in order if first_step.get(i) != a[i])
    return rows, sum(x is None for x in a), mismatched


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("result")
    p.add_argument("--budget", type=int, default=8192, help="max_num_batched_tokens (vLLM 0.8 V1 server default 8192)")
    p.add_argument("--model", help="row id in tests/data: print IterationCostModel's step time beside each step")
    p.add_argument("--all", action="store_true", help="print every step that computes prompt tokens")
    p.add_argument("--json", help="write the per-step rows (with the model's time) to this file")
    args = p.parse_args()
    result = json.loads(Path(args.result).read_text())
    rows, unaligned, mismatched = steps(result, args.budget)
    cm = None
    if args.model:
        from benchmarks.throughput_accuracy import build_spec, load_rows
        from sched_reader.models.cost.iteration import IterationCostModel
        row = next(r for r in load_rows() if r["id"] == args.model)
        spec = build_spec(row)
        cm = IterationCostModel(spec.arch, spec.hardware.gpu, spec.effective, spec.checkpoint_quantization)
    print(f"{args.result}: {len(result['itls'])} requests, {unaligned} unaligned, {mismatched} replayed last chunks "
          f"not in the aligned step, {len(rows)} steps seen by request 0")
    for r in rows:
        if cm is not None and r["decodes"] + r["prefill_tokens"] > 0:
            r["model_ms"] = cm.step_time(r["decodes"], r["decode_ctx"], r["prefill_tokens"], r["attn_pairs"],
                                         r["chunks"]) * 1e3
    dec_only = [r for r in rows if r["prefill_tokens"] == 0 and r["decodes"] > 0]
    line = f"decode-only steps: {len(dec_only)}, median {np.median([r['dur_s'] for r in dec_only]) * 1e3:.1f} ms"
    if cm is not None:
        line += f"; model median {np.median([r['model_ms'] for r in dec_only]):.1f} ms"
    print(line)
    pre = [r for r in rows if r["prefill_tokens"] > 0]
    by: dict[int, list] = {}
    for r in pre:
        by.setdefault(int(round(r["prefill_tokens"] / 1000.0)), []).append(r)
        if args.all:
            print(f"step {r['step']:5d}: {r['prefill_tokens']:5d} prompt tok in {r['chunks']} chunk(s) + {r['decodes']:3d} "
                  f"decodes (ctx {r['decode_ctx']:7d}): {r['dur_s'] * 1e3:7.1f} ms"
                  + (f"  model {r['model_ms']:6.1f} ms" if cm is not None else ""))
    for k, rs in sorted(by.items()):
        d = np.array([r["dur_s"] * 1e3 for r in rs])
        line = (f"~{k}k prompt tokens: {len(rs):3d} steps, {np.median([r['decodes'] for r in rs]):.0f} decodes (median), "
                f"{d.min():.1f}-{d.max():.1f} ms, median {np.median(d):.1f}")
        if cm is not None:
            m = np.array([r["model_ms"] for r in rs])
            line += f"; model median {np.median(m):.1f} ms, measured/model {np.median(d / m):.3f}"
        print(line)
    if len(pre) >= 3:
        # least squares: ms = a + b x (prompt tokens / 1000) + c x decodes, measured and modelled
        X = np.array([[1.0, r["prefill_tokens"] / 1000.0, r["decodes"]] for r in pre])
        for name, y in (("measured", [r["dur_s"] * 1e3 for r in pre]),
                        ("model", [r.get("model_ms") for r in pre] if cm is not None else None)):
            if y is None:
                continue
            coef = np.linalg.lstsq(X, np.array(y), rcond=None)[0]
            print(f"fit ({name}): {coef[0]:.1f} ms + {coef[1]:.1f} ms per 1000 prompt tokens + {coef[2]:.3f} ms per decode")
    if args.json:
        Path(args.json).write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
