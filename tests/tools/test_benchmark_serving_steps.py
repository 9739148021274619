"""tools/benchmark_serving_steps.py: engine steps recovered from a benchmark_serving result's ttfts and itls.

A hand-built result of three 100-token prompts. Request 0 (6 output tokens) sets the clock: first token at
0.050 s, then steps of 10, 11, 40, 12 and 13 ms, so step j ends at E = 0.050, 0.060, 0.071, 0.111, 0.123, 0.136.
Requests 1 and 2 (3 output tokens) stream ITLs of 12 and 13 ms: they match request 0's from step 4 on, so both
got their first token at the end of step 3 (the 40 ms one) and were sent at E[3] - TTFT = 0.111 - 0.050 = 0.061
and 0.111 - 0.048 = 0.063 s, after step 2 had started (0.060) and, 5 ms later in the engine, before step 3 did
(0.071). Step 3 then holds both prompts (200 tokens, 2 x 100 x 101 / 2 = 10,100 attention pairs) and request
0's decode (context 100 + 3 tokens); steps 4 and 5 hold three decodes. With a 150-token budget the second prompt
is split (49 tokens in step 3, one decode first) and finishes in step 4, not in the step its ITLs put it in.
"""

from __future__ import annotations

from conftest import load_script

RESULT = {"input_lens": [100, 100, 100], "output_lens": [6, 3, 3], "ttfts": [0.050, 0.050, 0.048],
          "itls": [[0.010, 0.011, 0.040, 0.012, 0.013], [0.012, 0.013], [0.012, 0.013]]}


def test_alignment_and_step_contents():
    mod = load_script("tools/benchmark_serving_steps.py")
    assert mod.align(RESULT["itls"]) == [0, 3, 3]
    rows, unaligned, mismatched = mod.steps(RESULT, 8192)
    assert (unaligned, mismatched) == (0, 0)
    assert [round(r["dur_s"] * 1e3) for r in rows] == [50, 10, 11, 40, 12, 13]
    s3 = rows[3]
    assert (s3["prefill_tokens"], s3["chunks"], s3["prefills"], s3["attn_pairs"]) == (200, 2, 2, 10100)
    assert (s3["decodes"], s3["decode_ctx"]) == (1, 103)
    assert [r["decodes"] for r in rows[4:]] == [3, 3]
    assert rows[2]["prefill_tokens"] == 0 and rows[0]["prefill_tokens"] == 100


def test_token_budget_splits_the_second_prompt():
    mod = load_script("tools/benchmark_serving_steps.py")
    rows, _, mismatched = mod.steps(RESULT, 150)
    assert (rows[3]["prefill_tokens"], rows[4]["prefill_tokens"]) == (149, 51)
    assert mismatched == 1
