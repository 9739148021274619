"""Sweep vLLM's scheduling and memory flags with the simulator; the Pareto frontier against latency targets.

Grid (each axis only where it applies): ``--max-num-batched-tokens`` x ``--max-num-seqs`` x
``--gpu-memory-utilization`` x ``--kv-cache-dtype`` (fp8 where the GPU supports it) x
``--tensor-parallel-size`` (x the speculative config, on/off, when the deployment has one). Every point
is one engine replayed on the same requests: capacity (a point vLLM would refuse to start is marked so),
then the event-driven simulation with the roofline step cost (and the active calibration profile).

Targets use ``vllm bench serve --goodput`` syntax: ``ttft:500 tpot:50 e2el:2000`` (ms). A point *meets* the
targets when the given percentile (p99 by default) of each metric is within its target. Output: every point,
the Pareto frontier of output throughput per GPU vs the latency metrics, and the best point per target and
for all targets together, each as a ready-to-paste ``vllm serve`` command line.

Executors: ``local`` (processes on this machine's cores, default), ``serial``, ``ray`` (Ray tasks;
``ray.init()`` joins a running cluster, or starts a local one).
"""

import math
import os
from typing import Any, Callable, Iterable

from pydantic import Field

from sched_reader.compat.chat_template_work import template_release
from sched_reader.data_model import DataModel, new_dict
from sched_reader.errors import InputError
from sched_reader.models.cost.frontend import api_server_for, endpoint_for
from sched_reader.models.cost.iteration import IterationCostModel
from sched_reader.models.capacity import estimate_capacity
from sched_reader.models.calibration_profile import calibrated, frontend_kwargs, use_profile
from sched_reader.analyzers.simulator.api import with_frontend_latency
from sched_reader.analyzers.simulator import params_for, simulate

GOODPUT_KEYS = {"ttft": "ttft", "tpot": "tpot", "e2el": "e2el", "itl": "itl"}


def parse_goodput(words: Iterable[str] | None) -> dict[str, float]:
    """``["ttft:500", "tpot:50"]`` -> {"ttft": 500.0, "tpot": 50.0} (ms), as ``vllm bench serve --goodput``."""
    out: dict[str, float] = {}
    for w in words or []:
        for part in str(w).replace(",", " ").split():
            if ":" not in part:
                raise InputError(f"--goodput {part!r}: expected METRIC:MS, e.g. ttft:500 tpot:50")
            k, v = part.split(":", 1)
            k = k.strip().lower()
            if k not in GOODPUT_KEYS:
                raise InputError(f"--goodput {part!r}: unknown metric {k!r} (ttft, tpot, itl, e2el)")
            try:
                ms = float(v)
            except ValueError:
                raise InputError(f"--goodput {part!r}: {v!r} is not a number of ms") from None
            if not ms > 0 or math.isinf(ms):
                raise InputError(f"--goodput {part!r}: the target must be > 0 ms")
            out[k] = ms
    return out


class Point(DataModel):
    """One configuration of the sweep and its predicted metrics (ms, tok/s)."""

    flags: dict[str, Any]
    gpus: int
    starts: bool = True
    error: str | None = None
    kv_tokens: int | None = None
    output_throughput: float | None = None          # tok/s, whole replica
    throughput_per_gpu: float | None = None         # tok/s per GPU
    request_goodput: float | None = None            # req/s meeting every target
    metrics: dict[str, float | None] = Field(default_factory=new_dict)
    meets: dict[str, bool] = Field(default_factory=new_dict)
    command: str = ""

    def key(self) -> tuple:
        return tuple(sorted((k, str(v)) for k, v in self.flags.items()))


class TuneResult(DataModel):
    points: list[Point]
    frontier: list[int]                             # indices into points
    best: dict[str, int | None]                     # target name (or "all") -> index
    targets: dict[str, float]
    percentile: str
    workload: str
    grid: dict[str, list[Any]]
    executor: str


def default_grid(spec: Any, *, max_gpus: int | None = None) -> dict[str, list[Any]]:
    """The sweep's axes around the deployment (about 200 points for a single-GPU engine)."""
    eff = spec.effective
    gpu = spec.hardware.gpu
    fp8_ok = gpu.compute_capability is not None and _cc(gpu.compute_capability) >= 8.9
    tp0 = eff.tensor_parallel_size
    limit = max_gpus or 8
    tps = sorted({t for t in (tp0, tp0 * 2) if t * eff.pipeline_parallel_size <= limit
                  and spec.arch.num_kv_heads and (spec.arch.num_kv_heads % t == 0 or t % spec.arch.num_kv_heads == 0)})
    grid: dict[str, list[Any]] = {
        "max_num_batched_tokens": [2048, 4096, 8192, 16384],
        "max_num_seqs": [64, 128, 256, 512],
        "gpu_memory_utilization": [0.85, 0.9, 0.95],
        "kv_cache_dtype": ["auto", "fp8"] if fp8_ok else [eff.kv_cache_dtype],
        "tensor_parallel_size": tps or [tp0],
    }
    if eff.speculative:
        grid["speculative"] = ["on", "off"]
    return grid


_AXIS_TYPES = {"max_num_batched_tokens": int, "max_num_seqs": int, "gpu_memory_utilization": float,
               "kv_cache_dtype": str, "tensor_parallel_size": int, "speculative": str}


def parse_axes(words: Iterable[str] | None) -> dict[str, list[Any]]:
    """``["max-num-seqs=128,256"]`` -> {"max_num_seqs": [128, 256]} (``InputError`` on an unknown axis/value)."""
    out: dict[str, list[Any]] = {}
    for w in words or []:
        if "=" not in w:
            raise InputError(f"--axis {w!r}: expected FLAG=V1,V2")
        k, v = w.split("=", 1)
        key = k.strip().lstrip("-").replace("-", "_")
        if key not in _AXIS_TYPES:
            raise InputError(f"--axis {w!r}: unknown axis (one of {', '.join(a.replace('_', '-') for a in _AXIS_TYPES)})")
        try:
            vals = [_AXIS_TYPES[key](x.strip()) for x in v.split(",") if x.strip()]
        except ValueError:
            raise InputError(f"--axis {w!r}: values must be {_AXIS_TYPES[key].__name__}") from None
        if not vals:
            raise InputError(f"--axis {w!r}: no values")
        if key == "gpu_memory_utilization" and not all(0 < x <= 1 for x in vals):
            raise InputError(f"--axis {w!r}: gpu-memory-utilization is a fraction in (0, 1]")
        if key in ("max_num_batched_tokens", "max_num_seqs", "tensor_parallel_size") and not all(x >= 1 for x in vals):
            raise InputError(f"--axis {w!r}: values must be >= 1")
        out[key] = list(dict.fromkeys(vals))
    return out


def _cc(cc: str) -> float:
    try:
        return float(cc)
    except ValueError:
        return 0.0


def expand(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    import itertools

    keys = list(grid)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(grid[k] for k in keys))]


def _effective_for(spec: Any, flags: dict[str, Any]) -> Any:
    eff = spec.effective
    upd = {k: v for k, v in flags.items() if k != "speculative"}
    if flags.get("speculative") == "off":
        upd["speculative"] = None
    if not eff.enable_chunked_prefill and "max_num_batched_tokens" in upd:
        upd["max_num_batched_tokens"] = max(int(upd["max_num_batched_tokens"]), eff.max_model_len)
    return eff.model_copy(update=upd)


def evaluate(spec: Any, flags: dict[str, Any], requests: Any, targets: dict[str, float],
             percentile: str = "p99", profile: Any = None, endpoint: str = "completions") -> Point:
    """One point of the sweep (pure: safe to run in another process or a Ray task). ``endpoint``: the API
    entry point the workload's client calls ("completions" or "chat")."""

    if profile is not None:
        use_profile(profile)
    eff = _effective_for(spec, flags)
    gpus = eff.tensor_parallel_size * eff.pipeline_parallel_size
    pt = Point(flags=flags, gpus=gpus)
    try:
        cap = estimate_capacity(spec.arch, spec.hardware.gpu, eff, spec.checkpoint_quantization)
    except Exception as err:  # noqa: BLE001 - a configuration the model cannot size does not start
        pt.starts, pt.error = False, f"{type(err).__name__}: {err}"
        return pt
    if cap.start_error() is not None:
        pt.starts, pt.error = False, cap.start_error()
        return pt
    blocks = int(cap.kv_cache.num_blocks)
    pt.kv_tokens = int(cap.kv_cache.tokens or 0)
    cost = calibrated(IterationCostModel(spec.arch, spec.hardware.gpu, eff, spec.checkpoint_quantization), profile)

    endpoint = endpoint_for(endpoint, getattr(spec.arch, "model_type", None), template_release(spec))
    res = with_frontend_latency(simulate(requests, params_for("vllm", eff, blocks), cost,
                                         slo_ttft_ms=targets.get("ttft"), slo_tpot_ms=targets.get("tpot"),
                                         frontend=api_server_for(endpoint, spec.vllm_version, **frontend_kwargs(profile))), endpoint)
    pt.output_throughput = float(res["output_throughput"])
    pt.throughput_per_gpu = pt.output_throughput / max(1, gpus)
    pt.request_goodput = float(res.get("request_goodput") or 0.0) if targets else None
    for m in ("ttft", "tpot", "itl", "e2el"):
        for stat in ("mean", "median", "p90", "p99"):
            k = f"{stat}_{m}_ms"
            v = res.get(k)
            pt.metrics[k] = None if v is None else round(float(v), 3)
    for name, ms in targets.items():
        v = pt.metrics.get(f"{percentile}_{name}_ms")
        pt.meets[name] = v is not None and v <= ms
    return pt


def _chunks(items: list[Any], n: int) -> list[list[Any]]:
    return [items[i::n] for i in range(n)] if items else []


def _eval_many(args: tuple) -> list[tuple[int, Point]]:
    return _eval_batch(*args)


def _eval_batch(spec: Any, batch: list, requests: Any, targets: dict, percentile: str,
                profile: Any, endpoint: str = "completions") -> list[tuple[int, Point]]:
    return [(i, evaluate(spec, flags, requests, targets, percentile, profile, endpoint)) for i, flags in batch]


def run_sweep(spec: Any, requests: Any, grid: dict[str, list[Any]], targets: dict[str, float], *,
              percentile: str = "p99", executor: str = "local", workers: int | None = None,
              progress: Callable[[int, int], None] | None = None, profile: Any = None,
              workload_label: str = "", endpoint: str = "completions") -> TuneResult:
    """Evaluate every grid point; see module docstring. ``endpoint``: the API entry point the client calls."""
    if executor not in ("local", "serial", "ray"):
        raise InputError(f"unknown executor {executor!r} (local, serial, ray)", key="--executor")
    configs = expand(grid)
    indexed = list(enumerate(configs))
    done: dict[int, Point] = {}
    total = len(indexed)
    if executor == "serial" or total <= 1:
        for i, flags in indexed:
            done[i] = evaluate(spec, flags, requests, targets, percentile, profile, endpoint)
            if progress:
                progress(len(done), total)
    elif executor == "local":
        from concurrent.futures import ProcessPoolExecutor, as_completed

        n = max(1, min(workers or os.cpu_count() or 1, total))
        # small batches keep every worker busy to the end and the progress bar moving
        batches = [indexed[i:i + max(1, total // (n * 8))] for i in range(0, total, max(1, total // (n * 8)))]
        with ProcessPoolExecutor(max_workers=n) as pool:
            futs = [pool.submit(_eval_many, (spec, b, requests, targets, percentile, profile, endpoint)) for b in batches]
            for f in as_completed(futs):
                for i, p in f.result():
                    done[i] = p
                if progress:
                    progress(len(done), total)
    elif executor == "ray":
        try:
            import ray
        except ImportError:
            raise InputError("--executor ray needs Ray: pip install 'sched-reader[ray]'") from None
        started = False
        if not ray.is_initialized():
            ray.init(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False)
            started = True
        try:
            remote = ray.remote(_eval_batch)
            spec_ref, req_ref = ray.put(spec), ray.put(requests)
            n = max(1, int(ray.available_resources().get("CPU", 1)))
            pending = [remote.remote(spec_ref, b, req_ref, targets, percentile, profile, endpoint)
                       for b in _chunks(indexed, n * 4) if b]
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                for i, p in ray.get(ready[0]):
                    done[i] = p
                if progress:
                    progress(len(done), total)
        finally:
            if started:
                ray.shutdown()
    else:
        raise InputError(f"unknown executor {executor!r} (local, serial, ray)")
    points = [done[i] for i in range(total)]
    for p in points:
        p.command = command_line(spec, p.flags)
    frontier = pareto(points, targets or {"ttft": 0, "tpot": 0}, percentile)
    best = best_points(points, targets)
    return TuneResult(points=points, frontier=frontier, best=best, targets=targets, percentile=percentile,
                      workload=workload_label, grid=grid, executor=executor)


def pareto(points: list[Point], targets: dict[str, float], percentile: str) -> list[int]:
    """Indices of the points no other point beats on throughput per GPU and every targeted latency."""
    keys = [f"{percentile}_{m}_ms" for m in targets] or [f"{percentile}_ttft_ms", f"{percentile}_tpot_ms"]
    ok = [i for i, p in enumerate(points) if p.starts and p.throughput_per_gpu is not None
          and all(p.metrics.get(k) is not None for k in keys)]

    def vec(i: int) -> tuple:
        p = points[i]
        return (-p.throughput_per_gpu,) + tuple(p.metrics[k] for k in keys)

    out = []
    for i in ok:
        vi = vec(i)
        dominated = False
        for j in ok:
            if j == i:
                continue
            vj = vec(j)
            if all(a <= b for a, b in zip(vj, vi)) and any(a < b for a, b in zip(vj, vi)):
                dominated = True
                break
        if not dominated:
            out.append(i)
    # one representative per identical metric vector (ties), ordered by throughput
    # one representative per (near-)identical metric vector: the one best_points would pick
    groups: dict[tuple, list[int]] = {}
    for i in out:
        groups.setdefault(_sig(vec(i)), []).append(i)
    reps = [max(g, key=lambda i: _rank(points[i])) for g in groups.values()]
    return sorted(reps, key=lambda i: (vec(i), points[i].key()))


def _sig(v: tuple) -> tuple:
    """Values to 3 significant digits: differences below ~0.1% are model noise, not a reason to choose."""
    return tuple(float(f"{x:.3g}") if isinstance(x, float) else x for x in v)


def _rank(p: Point) -> tuple:
    return (float(f"{p.throughput_per_gpu:.4g}"), -p.gpus, _tiebreak(p))


def best_points(points: list[Point], targets: dict[str, float]) -> dict[str, int | None]:
    """Per target (and "all"): the highest throughput per GPU among the points meeting it."""
    out: dict[str, int | None] = {}
    names = list(targets) + (["all"] if targets else [])
    for name in names:
        ok = [i for i, p in enumerate(points) if p.starts and p.throughput_per_gpu is not None
              and (all(p.meets.values()) if name == "all" else p.meets.get(name))]
        out[name] = max(ok, key=lambda i: _rank(points[i])) if ok else None
    if not targets:
        ok = [i for i, p in enumerate(points) if p.starts and p.throughput_per_gpu is not None]
        out["throughput"] = max(ok, key=lambda i: _rank(points[i])) if ok else None
    return out


def _tiebreak(p: Point) -> tuple:
    """Among equal throughputs prefer the smaller, safer values (less memory, smaller batches)."""
    f = p.flags
    return (-float(f.get("gpu_memory_utilization", 0)), -int(f.get("max_num_seqs", 0)),
            -int(f.get("max_num_batched_tokens", 0)), str(f.get("kv_cache_dtype")) == "auto")


_FLAG = {"max_num_batched_tokens": "--max-num-batched-tokens", "max_num_seqs": "--max-num-seqs",
         "gpu_memory_utilization": "--gpu-memory-utilization", "kv_cache_dtype": "--kv-cache-dtype",
         "tensor_parallel_size": "--tensor-parallel-size"}


def command_line(spec: Any, flags: dict[str, Any]) -> str:
    """``vllm serve MODEL`` with the deployment's own flags, the swept ones replaced."""
    import json
    import shlex

    words = ["vllm", "serve", spec.model_name]
    swept = set(flags)
    for dest, fv in sorted(spec.args.items()):
        if dest in swept or dest in ("model", "model_tag"):
            continue
        if dest == "speculative_config" and flags.get("speculative") == "off":
            continue
        v = fv.value
        if isinstance(v, bool):
            words.append(fv.flag if v else "--no-" + fv.flag.lstrip("-"))
        elif isinstance(v, (dict, list)):
            words += [fv.flag, json.dumps(v, separators=(",", ":"))]
        else:
            words += [fv.flag, str(v)]
    for k in ("tensor_parallel_size", "max_num_seqs", "max_num_batched_tokens", "gpu_memory_utilization",
              "kv_cache_dtype"):
        if k in flags:
            if k == "tensor_parallel_size" and int(flags[k]) == 1:
                continue
            if k == "kv_cache_dtype" and flags[k] == "auto":
                continue
            words += [_FLAG[k], f"{flags[k]:g}" if isinstance(flags[k], float) else str(flags[k])]
    return " ".join(shlex.quote(w) for w in words)
