"""Instructions executed (valgrind callgrind), a before/after measure that machine load does not move.

Run: python benchmarks/instructions.py [--against DIR] [--requests N] [--only sim|diagnose]

Wall and CPU seconds (``cli_speed.py``, ``simulate_speed.py``) swing by 30-100% on a shared machine (several
agents on two cores); the number of instructions a run executes does not: repeated runs agree within
~0.1%, so a 2% change is visible. Two measures, each for this checkout and, with ``--against DIR``, for
another one (its own ``.venv``), one after the other:

* ``sim toy`` / ``sim model``: ``run_engine`` alone on N ShareGPT-like requests at 30 req/s (N=10,000 by
  default; the setup before it, imports included, is not counted: collection is switched on around the
  call with ``callgrind_control``). ``toy`` is the analytic LinearStepCost of ``simulate_speed.py``,
  ``model`` the IterationCostModel for Llama-3.1-8B on an H100.
* ``diagnose FILE``: a whole ``python -m sched_reader diagnose FILE`` process, start-up included.

Bytecode is written first (one plain run per checkout): a module compiled from source on every run
(``PYTHONDONTWRITEBYTECODE`` set, or a stale ``.pyc``) costs more than all the rest and would hide any change.
Under valgrind a run is ~50x slower (about 30 s each). Needs ``valgrind`` on PATH; prints why and exits 2
otherwise. Not a test: a tool to run around an optimisation.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIAGNOSE = ["examples/llama3-8b-h100.yaml", "examples/llama70b-fp8-tp4.yaml"]

SIM = r'''
import os, subprocess, sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
from sched_reader.analyzers.simulator import LinearStepCost, from_bench_flags, params_for
from sched_reader.analyzers.simulator.engine import run_engine
req = from_bench_flags(dataset_name="sharegpt", num_prompts=int(sys.argv[2]), request_rate=30.0, seed=0)
if sys.argv[1] == "model":
    import simulate_speed
    cost, blocks, cfg = simulate_speed._model_cost(0)
else:
    cost, blocks = LinearStepCost(base_s=0.012, per_token_s=3e-5, per_ctx_s=2e-9), 40_000
    cfg = dict(block_size=16, max_num_seqs=256, max_num_batched_tokens=8192, max_model_len=4096)
params = params_for("vllm", cfg, blocks)
subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], capture_output=True, check=True)
run_engine(req, params, cost)
subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], capture_output=True, check=True)
'''


def _python(checkout: Path) -> str:
    venv = checkout / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["OPENBLAS_NUM_THREADS"] = "1"     # as the CLI sets it: no BLAS thread pool in the count
    return env


def _callgrind(checkout: Path, argv: list[str], at_start: bool) -> int:
    """Instructions of ``python argv`` in ``checkout`` (from the first instruction, or only while toggled on)."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
           f"--instr-atstart={'yes' if at_start else 'no'}", _python(checkout), *argv]
    r = subprocess.run(cmd, cwd=checkout, env=_env(), capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", r.stderr)
    if m is None:
        raise SystemExit(f"{checkout}: no instruction count from valgrind (exit {r.returncode}):\n{r.stderr[-2000:]}")
    return int(m.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", type=Path, help="another checkout (with its own .venv) to count as well")
    ap.add_argument("--requests", type=int, default=10_000, help="simulated requests (default 10,000)")
    ap.add_argument("--only", choices=["sim", "diagnose"], help="one of the two measures")
    a = ap.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("valgrind (callgrind) is not installed: nothing measured", file=sys.stderr)
        return 2
    checkouts = {"this": ROOT} | ({"against": a.against.resolve()} if a.against else {})
    for where in checkouts.values():     # write bytecode (see the module docstring)
        subprocess.run([_python(where), "-m", "sched_reader", "diagnose", DIAGNOSE[0]], cwd=where, env=_env(),
                       capture_output=True)
        subprocess.run([_python(where), "-m", "compileall", "-q", "sched_reader", "benchmarks"], cwd=where,
                       env=_env(), capture_output=True)
    rows: list[tuple[str, dict[str, int]]] = []
    if a.only != "diagnose":
        for kind in ("toy", "model"):
            rows.append((f"sim {kind} run_engine, {a.requests:,} requests",
                         {n: _callgrind(w, ["-c", SIM, kind, str(a.requests)], False) for n, w in checkouts.items()}))
    if a.only != "sim":
        for f in DIAGNOSE:
            rows.append((f"diagnose {f} (whole process)",
                         {n: _callgrind(w, ["-m", "sched_reader", "diagnose", f], True) for n, w in checkouts.items()}))
    for label, got in rows:
        line = f"{label:62} this {got['this'] / 1e6:9.1f} M"
        if "against" in got:
            line += f"  against {got['against'] / 1e6:9.1f} M  ({100 * (got['this'] / got['against'] - 1):+.1f}%)"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
