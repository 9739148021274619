"""Simulation size is bounded (issue 16): `diagnose --random-output-len 100000` took 148 s and 2 GB,
`simulate` with 1M prompts at rate 0.001 used 10 GB. A run over ``MAX_SIM_TOKENS`` is refused before
it starts, with the estimate; a run whose preemption churn passes ``MAX_SIM_STEPS`` stops with the
progress made and a hint."""

from __future__ import annotations

from hostile import SERVE, bounded, one_line_error


def test_diagnose_with_100k_output_tokens_refused_with_the_estimate(run_cli):
    # 1,000 prompts (the default) x 100,000 output tokens = 100,000,000 tokens to decode
    with bounded(20):
        code, _, err = run_cli("diagnose", "--random-output-len", "100000", *SERVE)
    one_line_error(code, err, "100,000,000 output tokens", "20,000,000 bound", "--num-prompts")


def test_a_million_prompts_at_a_slow_rate_stays_within_a_gigabyte(run_cli):
    with bounded(30, extra_bytes=1 << 30):
        code, _, err = run_cli("simulate", "--num-prompts", "1000000", "--request-rate", "0.001", *SERVE)
    one_line_error(code, err, "1,000,000 requests", "bound")


def test_preemption_churn_stops_at_the_step_bound(run_cli, monkeypatch):
    from sched_reader.analyzers.simulator import engine

    monkeypatch.setattr(engine, "MAX_SIM_STEPS", 2000)
    # 50 x 60,000-token outputs do not fit the KV cache of one H100 together: evicted and recomputed
    with bounded(30):
        code, _, err = run_cli("simulate", "--num-prompts", "50", "--random-output-len", "60000", *SERVE)
    one_line_error(code, err, "passed 2,000 scheduler steps", "preemptions", "KV cache is too small")


def test_a_bench_sized_run_is_within_the_bounds():
    from sched_reader.analyzers.simulator.api import check_size
    from sched_reader.analyzers.simulator.policies import SchedParams
    from sched_reader.analyzers.simulator.workloads import from_bench_flags

    req = from_bench_flags(random_input_len=1024, random_output_len=1024, num_prompts=1000)
    params = SchedParams(block_size=16, num_blocks=1000, max_num_seqs=256, max_num_batched_tokens=8192)
    # 1,000 x 1,024 output tokens + 1,000 x 1,024 prompt tokens / 8,192 per step = 1,024,000 + 125
    assert check_size(req, params) == 1_024_125
