"""Record every simulator-dependent output, to prove a speed change changed no prediction (byte for byte).

Usage:
  python benchmarks/sim_outputs.py save DIR      # before the change (or in a checkout of main)
  python benchmarks/sim_outputs.py check DIR     # after: exit 1 and name the files that differ

What it records (each a file under DIR): `sched-reader simulate --format json --compare` all five policies
and `sched-reader diagnose --format json` on the example configs and a sample of tests/data/deploy
fixtures (dense, MoE, FP8 TP4, V0, sliding window, multi-model files); simulate on a trace, on ShareGPT
with prefix caching and EAGLE speculative decoding, a closed loop, a preempting run; the full metric dict
(repr floats) and every request's first-token and finish time of direct engine runs (roofline and toy cost,
Poisson, burst, a small KV cache); and `benchmarks/throughput_accuracy.py --json`. Slow (minutes): it is a
check to run around an optimisation, not a test.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = [
    "examples/llama3-8b-h100.yaml", "examples/llama70b-fp8-tp4.yaml", "examples/mixed.yaml", "examples/rag-v0.yaml",
    "examples/deploy/kubeai__llama-3.1-70b-instruct-fp8-h100.yaml",
    "examples/deploy/multi-model-server__docker-compose-vllm.yml",
    "examples/deploy/production-stack__values-02-basic-config.yaml",
    "tests/data/deploy/k8s/aibrix__quickstart_model_deployment.yaml",
    "tests/data/deploy/helm-values/production-stack__values-25-v100-multi-gpu-tp2.yaml",
    "tests/data/deploy/skypilot/skypilot__mixtral-service.yaml",
    "tests/data/deploy/cmdline/kvcached__start_vllm_server.sh",
    "tests/data/deploy/kserve/kserve__llm-inference-service-qwen2-7b-gpu.yaml",
]
SERVE = ["--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
RUNS = {
    "sim_trace": ["simulate", "--format", "json", "--workload", "examples/traces/rag_600_poisson4.jsonl",
                  "examples/llama3-8b-h100.yaml"],
    "sim_sharegpt": ["simulate", "--format", "json", "--request-rate", "10", "--dataset-name", "sharegpt",
                     "--num-prompts", "2000", "--compare", "vllm,chunked", *SERVE],
    "sim_spec": ["simulate", "--format", "json", "--request-rate", "10", "--dataset-name", "sharegpt",
                 "--num-prompts", "1000", *SERVE, "--enable-prefix-caching", "--speculative-config",
                 '{"method":"eagle","num_speculative_tokens":3,"model":"yuhuili/EAGLE-LLaMA3.1-Instruct-8B"}'],
    "sim_closed_loop": ["simulate", "--format", "json", "--max-concurrency", "64", "--random-range-ratio", "0.5",
                        "--num-prompts", "3000", *SERVE, "--max-num-seqs", "64", "--gpu-memory-utilization", "0.3"],
    "sim_preempt": ["simulate", "--format", "json", "--num-prompts", "2000", "--random-input-len", "3000",
                    "--random-output-len", "1000", *SERVE, "--gpu-memory-utilization", "0.25"],
}

DIRECT = r'''
import json, sys
sys.path.insert(0, ".")
from sched_reader.analyzers.simulator import LinearStepCost, from_bench_flags, params_for
from sched_reader.analyzers.simulator.api import engine_inputs
from sched_reader.analyzers.pipeline import build_specs
from sched_reader.analyzers.simulator.engine import run_engine
from sched_reader.analyzers.simulator.metrics import summarize
spec = build_specs([], ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"])[0]
cost, blocks = engine_inputs(spec)
toy = LinearStepCost(base_s=0.012, per_token_s=3e-5, per_ctx_s=2e-9)
tcfg = dict(block_size=16, max_num_seqs=256, max_num_batched_tokens=8192, max_model_len=4096)
for n, rate in ((20000, 30.0), (5000, float("inf")), (3000, 5.0)):
    req = from_bench_flags(dataset_name="sharegpt", num_prompts=n, request_rate=rate, seed=0)
    for name, p, c in (("model", params_for("vllm", spec.effective, blocks), cost),
                       ("toy", params_for("vllm", tcfg, 40000), toy),
                       ("model-small-kv", params_for("vllm", spec.effective, 3000), cost)):
        eng = run_engine(req, p, c)
        res = summarize(eng.rec, eng.send_ns, eng.prompt, eng.target, slo_ttft_ms=500, slo_tpot_ms=50)
        print(name, n, rate, eng.rec.steps, json.dumps(res, sort_keys=True))
        print(name, n, rate, "first", eng.rec.first_ns, "finish", eng.rec.finish_ns)
'''


def _cli(argv: list[str]) -> bytes:
    r = subprocess.run([sys.executable, "-m", "sched_reader", *argv], cwd=ROOT, capture_output=True)
    return r.stdout + b"\n--- stderr ---\n" + r.stderr + f"\n--- rc {r.returncode}\n".encode()


def outputs():
    """(name, bytes) of every recorded output, in a fixed order."""
    for f in FILES:
        b = Path(f).name
        yield f"sim_{b}", _cli(["simulate", "--format", "json", "--compare", "naive,static,continuous,chunked,vllm",
                                "--num-prompts", "300", f])
        yield f"diag_{b}", _cli(["diagnose", "--format", "json", f])
    for name, argv in RUNS.items():
        yield name, _cli(argv)
    r = subprocess.run([sys.executable, "-c", DIRECT], cwd=ROOT, capture_output=True)
    yield "direct_engine", r.stdout + r.stderr
    r = subprocess.run([sys.executable, "benchmarks/throughput_accuracy.py", "--json"], cwd=ROOT, capture_output=True)
    yield "throughput_accuracy", r.stdout


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[1] not in ("save", "check"):
        print(__doc__)
        return 2
    mode, out = sys.argv[1], Path(sys.argv[2])
    differ = []
    for name, data in outputs():
        path = out / f"{name}.out"
        if mode == "save":
            out.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        elif not path.exists() or path.read_bytes() != data:
            differ.append(name)
        print(f"{name:60s} {hashlib.sha1(data).hexdigest()[:12]}", flush=True)
    if mode == "check":
        print("IDENTICAL" if not differ else "DIFFERENT: " + ", ".join(differ))
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
