"""report/units.py: number formatting of the text reports (expectations written by hand), and its use by
the `diagnose` text report (speculative-decoding line, ITL p99 without tails)."""

from __future__ import annotations

import math

import pytest

from sched_reader.report.text_diagnose import ITL_P99_NA, speculative_line
from sched_reader.report.units import fmt_duration_ms, fmt_int, fmt_rate


@pytest.mark.parametrize(
    "ms,expected",
    [
        (0.0, "0.0 ms"),
        (0.04, "0.0 ms"),
        (5.32, "5.3 ms"),
        (236.94, "236.9 ms"),
        (999.94, "999.9 ms"),
        (999.96, "1.00 s"),          # rounds to 1,000.0 ms: shown in seconds instead
        (1000.0, "1.00 s"),
        (1234.5, "1.23 s"),
        (17_817.8, "17.82 s"),
        (236_955.1, "236.96 s"),     # the audit's "236,955.1 ms"
        (599_994.0, "599.99 s"),
        (599_996.0, "10.0 min"),     # rounds to 600.00 s: shown in minutes instead
        (600_000.0, "10.0 min"),
        (810_000.0, "13.5 min"),
        (7_200_000.0, "120.0 min"),
        (60_000_000.0, "1,000.0 min"),
        (-1500.0, "-1.50 s"),
        (-0.0, "0.0 ms"),
    ],
)
def test_fmt_duration_ms(ms, expected):
    assert fmt_duration_ms(ms) == expected


def test_fmt_duration_ms_digits_and_missing():
    assert fmt_duration_ms(5.324, ms_digits=2) == "5.32 ms"
    assert fmt_duration_ms(192.68, ms_digits=2) == "192.68 ms"
    assert fmt_duration_ms(999.996, ms_digits=2) == "1.00 s"
    assert fmt_duration_ms(999.99, ms_digits=2) == "999.99 ms"
    assert fmt_duration_ms(2500, ms_digits=2) == "2.50 s"     # digits apply to milliseconds only
    assert fmt_duration_ms(None) == "n/a"
    assert fmt_duration_ms(math.nan) == "n/a"
    assert fmt_duration_ms(math.inf) == "inf"
    assert fmt_duration_ms(7) == "7.0 ms"                     # an int is fine


@pytest.mark.parametrize(
    "x,unit,expected",
    [
        (3224.3, "tok/s", "3,224 tok/s"),
        (17_729.08, "tok/s", "17,729 tok/s"),
        (1_234_567.5, "tok/s", "1,234,568 tok/s"),
        (100.0, "req/s", "100 req/s"),
        (99.94, "req/s", "99.9 req/s"),
        (99.96, "req/s", "100 req/s"),   # rounds up past 100: no "100.0"
        (15.39, "req/s", "15.4 req/s"),
        (10.0, "req/s", "10.0 req/s"),
        (9.996, "req/s", "10.0 req/s"),  # rounds up past 10: no "10.00"
        (1.25, "req/s", "1.25 req/s"),
        (0.5, "req/s", "0.50 req/s"),
        (0.0, "req/s", "0.00 req/s"),
        (-12.34, "x", "-12.3 x"),
        (42.0, "", "42.0"),
    ],
)
def test_fmt_rate_auto_digits(x, unit, expected):
    assert fmt_rate(x, unit) == expected


def test_fmt_rate_fixed_digits_and_missing():
    assert fmt_rate(562.54, "FLOP/B", 1) == "562.5 FLOP/B"
    assert fmt_rate(3224.7, "tok/s", 0) == "3,225 tok/s"
    assert fmt_rate(1234.5678, "tok/s", 2) == "1,234.57 tok/s"
    assert fmt_rate(None, "tok/s") == "n/a"
    assert fmt_rate(math.nan, "tok/s") == "n/a"
    assert fmt_rate(math.inf, "req/s") == "inf req/s"


@pytest.mark.parametrize(
    "n,expected",
    [(0, "0"), (7, "7"), (999, "999"), (1000, "1,000"), (28_150, "28,150"), (1_099_511_627_776, "1,099,511,627,776"),
     (-4096, "-4,096"), (2.5, "3"), (3.5, "4"), (-2.5, "-3"), (0.4, "0"), (1234.6, "1,235"), (None, "n/a"), (math.nan, "n/a")],
)
def test_fmt_int(n, expected):
    assert fmt_int(n) == expected


# --- text_diagnose: the speculative line and the ITL p99 placeholder ---------------------------------

_NGRAM = {
    "method": "ngram", "num_speculative_tokens": 3, "acceptance_rate": 0.3,
    "acceptance_source": "assumed: prompt-lookup n-gram on chat data", "tokens_per_step": 1.417,
    "notes": [], "breakeven_batch": 108,
    "step_at_operating_batch": {"num_seqs": 8, "speedup": 1.3854795232027957},
}


def test_speculative_line_with_break_even():
    assert speculative_line(_NGRAM, 1024) == (
        "ngram, 3 draft tokens, acceptance 0.30 per token (assumed), 1.42 tokens per step, "
        "speedup 1.39x at batch 8, break-even batch 108 (no speedup from there on)"
    )


def test_speculative_line_without_break_even_says_why():
    sp = dict(_NGRAM, method="eagle", acceptance_rate=0.6, acceptance_source="given", tokens_per_step=2.176,
              breakeven_batch=None, step_at_operating_batch={"num_seqs": 1, "speedup": 1.69})
    assert speculative_line(sp, 16) == (
        "eagle, 3 draft tokens, acceptance 0.60 per token (given), 2.18 tokens per step, "
        "speedup 1.69x at batch 1, no break-even batch: speculation pays at every batch up to max-num-seqs 16"
    )
    assert speculative_line(dict(sp, breakeven_batch=1), 16).endswith(
        "break-even batch 1 (no speedup at any batch)")


def test_speculative_line_absent():
    assert speculative_line(None) is None
    assert speculative_line({}) is None


LLAMA = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]


def test_diagnose_text_speculative_line_and_itl_placeholder(run_cli):
    # 100,000 prompts x 128 tokens: too large to replay, so the closed form answers (no ITL p99)
    code, out, err = run_cli("diagnose", "--vllm", "0.19.0", "--gpu", "H100", "--max-concurrency", "8",
                             "--num-prompts", "100000", "--",
                             *LLAMA, "--speculative-config", '{"method": "ngram", "num_speculative_tokens": 3}')
    assert code == 0, err
    [spec] = [ln for ln in out.splitlines() if ln.startswith("  speculative  ")]
    assert spec.startswith("  speculative  ngram, 3 draft tokens, acceptance 0.30 per token (assumed), ")
    assert "tokens per step" in spec and "speedup" in spec and "break-even batch" in spec
    [pred] = [ln for ln in out.splitlines() if ln.startswith("  predicted    ")]
    assert pred.endswith(f"ITL p99 {ITL_P99_NA}")


def test_diagnose_text_durations_use_units(run_cli):
    # all at once, 1000 prompts: queueing pushes the mean TTFT past 10 s, shown in seconds
    code, out, err = run_cli("diagnose", "--vllm", "0.19.0", "--gpu", "H100", "--", *LLAMA)
    assert code in (0, 1), err
    [pred] = [ln for ln in out.splitlines() if ln.startswith("  predicted    ")]
    ttft = pred.split("TTFT mean ")[1].split(",")[0].split(" (likely")[0]
    assert ttft.endswith(" s") and float(ttft[:-2]) >= 10, pred
    assert "speculative" not in out
    assert ITL_P99_NA not in out   # simulated: the p99 is known
