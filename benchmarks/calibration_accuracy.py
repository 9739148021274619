"""Calibrate on published workloads of a deployment, predict its other published workloads.

Deployments:

* every ``tests/data/bench/*-sharegpt.yaml`` (one deployment each: its serve command, GPU, release, and
  several ``vllm bench serve`` runs with their summary numbers verbatim; see each file's header and SOURCES);
* every group of rows of the throughput corpus (``tests/data/throughput.yaml``, ``throughput_public.yaml``)
  that one publisher measured on one serve config (same model, GPU, parallelism, release, flags and API
  endpoint) with two or more workloads (other lengths, concurrency or rate): random-dataset runs, replayed
  at their stated lengths. Rows of the sources kept out of the corpus (PLAN: they judge the model) are
  never used.

For each deployment:

* one-to-others: fit the profile on one run alone, predict every other run (all ordered pairs);
* leave-one-out (``--loo``): fit on all runs but one, predict the one left out (deployments of 3 to
  ``LOO_MAX_RUNS`` runs: a fit over several concurrency levels searches the host terms, minutes each).

Prints the relative error of output throughput, mean TPOT and median TPOT per pair, the medians of
|error| per deployment, their median over deployments (each weighs the same) and over all pairs pooled,
next to the uncalibrated model's on the same predictions. A deployment that cannot be replayed (no KV
block fits by the memory model) is reported as skipped.
The decode prior (analyzers/calibrate_posterior.py) is measured on deployments with three or more
concurrency levels (each one's decode scale and per-step time fitted over all its runs, printed first: its
centre and spread): those above and the groups of NVIDIA's measured vLLM closed loops in tests/data/silicon
(``silicon_deployments``: measured, never scored here), per engine generation (V0 / V1). Each deployment is
scored with the prior re-measured WITHOUT its source (leave the whole source out: the three LambdaLabs
deployments are one source, each corpus group's ``source`` another, NVIDIA's table one more), from the
deployments of its own engine generation (all of them when fewer than ``MIN_PRIOR_DEPLOYMENTS``);
``--shipped`` with the shipped ``calibrate_posterior.PRIOR_BY_ENGINE`` instead, ``--terms`` prints the
measurement and stops.
Run: python benchmarks/calibration_accuracy.py [--loo] [--quiet] [--shipped | --terms] [--only SUBSTRING[,...]]
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_reader.analyzers.calibrate import (_profile, decode_observations, fit, fit_decode, predict,  # noqa: E402
                                              requests_for, unit_step_ms)
from sched_reader.analyzers.calibrate_posterior import FLAT, PRIOR, DecodePrior  # noqa: E402,F401
from sched_reader.analyzers.pipeline import build_specs  # noqa: E402
from sched_reader.errors import SchedReaderError  # noqa: E402
from sched_reader.readers.bench_result import BenchResult  # noqa: E402

DATA_DIR = ROOT / "tests" / "data" / "bench"
DATA = DATA_DIR / "lambda-h100-llama31-8b-fp8-sharegpt.yaml"
METRICS = ("output_throughput", "mean_tpot_ms", "median_tpot_ms")
LOO_MAX_RUNS = 5
MIN_PRIOR_DEPLOYMENTS = 3   # an engine generation's own prior needs this many deployments, else all are pooled


def load(path: Path = DATA):
    """(spec, [BenchResult]) of one deployment file; each run replays the first N requests of the
    file's per-request lists (``input_lens_<N>`` / ``output_lens_<N>``: every run of these sources sends
    the first N prompts of the same ShareGPT sample)."""
    d = yaml.safe_load(path.read_text())
    dep = d["deployment"]
    [spec] = build_specs([], dep["command"].split(), gpu=dep["gpu"], vllm=dep["vllm_version"])
    ins = next(v for k, v in d.items() if k.startswith("input_lens_"))
    outs = next(v for k, v in d.items() if k.startswith("output_lens_"))
    model = dep.get("model_id") or dep["command"].split()[2]
    benches = []
    for r in d["runs"]:
        n = r["num_prompts"]
        benches.append(BenchResult(
            file=f"prompt_{n}", model_id=model, num_prompts=n, completed=r["completed"],
            duration_s=r["duration"], total_input_tokens=r["total_input_tokens"],
            total_output_tokens=r["total_output_tokens"], output_throughput=r["output_throughput"],
            mean_ttft_ms=r["mean_ttft_ms"], mean_tpot_ms=r["mean_tpot_ms"], median_tpot_ms=r["median_tpot_ms"],
            input_lens=ins[:n], output_lens=outs[:n]))
    return spec, benches


def corpus_deployments() -> list[tuple[str, object, list[BenchResult], str]]:
    """(name, spec, runs, endpoint) of each corpus group with two or more runs of one serve config."""
    import json
    import math
    import posixpath

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from throughput_accuracy import build_spec, load_rows, row_endpoint  # noqa: E402
    from sched_reader.models.cost.frontend import endpoint_for  # noqa: E402

    groups: dict[tuple, list[dict]] = {}
    for r in load_rows():
        w, res = r["workload"], r["results"]
        if r.get("keep_out") or not (res.get("output_throughput_tok_s") or res.get("mean_tpot_ms")
                                     or res.get("median_tpot_ms")):
            continue
        if "sharegpt" in str(w.get("dataset") or "").lower():
            continue   # per-request lengths not published: the replay's ShareGPT sample is not theirs
        key = (r["source"], r["model"], r["gpu"], r.get("tensor_parallel_size"), r.get("pipeline_parallel_size"),
               r.get("data_parallel_size"), str(r["engine_version"]), r.get("max_model_len"),
               r.get("gpu_memory_utilization"), json.dumps(r["config_flags"], sort_keys=True), row_endpoint(r),
               "tuned" in r["id"].split("-"), posixpath.dirname(str(r.get("source_url") or "")))
        # (vLLM PRs 17530 / 17535 measured the same flags before and with their tuned fused-MoE configs: two
        # kernel configurations, so two deployments; their rows say which only in their ids. The last part:
        # the folder the result files were saved in -- a publisher's per-host folder is one machine:
        # simon-mo/vLLM-Benchmark's 0.8.4 DeepSeek-R1 sweep ran on "nebius-h200" (Xeon 8468 host) and on
        # the Berkeley DGX "h200", whose same runs differ by 20-30% in TPOT: two deployments, not one)
        groups.setdefault(key, []).append(r)
    out = []
    for key, rows in groups.items():
        if len(rows) < 2:
            continue
        spec = build_spec(rows[0])
        runs = []
        for r in rows:
            w, res = r["workload"], r["results"]
            n, li, lo = int(w.get("num_prompts") or 1000), int(w["input_len"]), int(w["output_len"])
            rate = w.get("request_rate")
            runs.append(BenchResult(
                file=r["id"], model_id=None, num_prompts=n, completed=n,
                request_rate=math.inf if rate in (None, "inf") else float(rate),
                max_concurrency=w.get("max_concurrency"), total_input_tokens=n * li, total_output_tokens=n * lo,
                output_throughput=res.get("output_throughput_tok_s") or 0.0,
                mean_ttft_ms=res.get("mean_ttft_ms"), mean_tpot_ms=res.get("mean_tpot_ms"),
                median_tpot_ms=res.get("median_tpot_ms")))
        name = f"{key[0]}: {key[1]} {key[3] or 1}x {key[2]}, vLLM {key[6]}"
        name += ", tuned fused-MoE config" if key[-2] else ""
        if any(k[:-1] == key[:-1] and k != key for k in groups):   # the same config in another folder
            name += f", results in {posixpath.basename(key[-1])}"
        out.append((name, spec, runs, endpoint_for(key[-3], getattr(spec.arch, "model_type", None),
                                                      spec.vllm_version)))
    return out


SILICON_WAVES = 2   # requests per silicon run = waves x concurrency (the table states no prompt count)


def silicon_deployments() -> list[tuple[str, object, list[BenchResult], str]]:
    """Groups of NVIDIA's measured vLLM closed loops (tests/data/silicon, benchmarks/silicon_accuracy.py: one
    source) with three or more concurrency levels of one serve config and lengths up to 8K in / 1K out,
    each as (name, spec, runs, endpoint) with its lowest, middle and highest level: for the decode prior's
    measurement only (their TPOT and TTFT are means; no throughput is published), never scored here."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import silicon_accuracy as SA  # noqa: E402

    groups: dict[tuple, list[dict]] = {}
    for r in SA.load_rows():
        if int(r["osl"]) > 1024 or int(r["isl"]) > 8192 or not r["backend_version"][:1].isdigit():
            continue
        moe_world = int(r.get("moe_tp_size") or 1) * max(1, int(r.get("moe_ep_size") or 1))
        if moe_world not in (1, int(r.get("tp_size") or 1)) or SA.row_argv(r) is None:
            continue
        key = (r["model_path"], r["system"], r["tp_size"], r["moe_ep_size"], r["backend_version"], r["isl"],
               r["osl"], r["precision"])
        groups.setdefault(key, []).append(r)
    out = []
    for key, rs in sorted(groups.items()):
        levels = sorted({int(r["batch_size"]) for r in rs})
        if len(levels) < 3:
            continue
        try:
            [spec] = build_specs([], SA.row_argv(rs[0]), gpu=SA.SYSTEMS[key[1]], vllm=key[4])
        except (SchedReaderError, KeyError):
            continue
        runs = []
        for c in (levels[0], levels[len(levels) // 2], levels[-1]):
            r = next(x for x in rs if int(x["batch_size"]) == c)
            n = SILICON_WAVES * c
            runs.append(BenchResult(file=r["id"], num_prompts=n, completed=n, max_concurrency=c,
                                    total_input_tokens=n * int(r["isl"]), total_output_tokens=n * int(r["osl"]),
                                    output_throughput=0.0, mean_tpot_ms=float(r["silicon_tpot_ms"]),
                                    mean_ttft_ms=float(r["silicon_ttft_ms"])))
        name = f"nvidia-silicon: {key[0]} {key[2]}x {key[1]} ep{key[3]}, vLLM {key[4]}, {key[5]} in / {key[6]} out"
        out.append((name, spec, runs, "completions"))
    return out


def engine_of(spec) -> str:
    """The engine generation a deployment runs ("v0" or "v1": the release's default or VLLM_USE_V1)."""
    return str(getattr(spec.effective, "engine", None) or "v1").lower()


def deployment_terms(name: str, spec, benches: list[BenchResult], endpoint: str) -> dict | None:
    """The deployment's own decode scale d and per-step time c (ms) fitted over ALL its runs with a flat
    prior (the uncalibrated model's other terms held), and the log residual of each run's TPOT / throughput
    there; None when its runs share one concurrency level (d and c are then one number) or it cannot be
    replayed."""
    reqs = [requests_for(b) for b in benches]
    if len({min(len(r), b.max_concurrency or len(r)) for b, r in zip(benches, reqs)}) < 2:
        return None
    try:
        d, c, _ = fit_decode(spec, benches, reqs, _profile(1.0, 1.0, 0.0), endpoint, FLAT)
        unit = unit_step_ms(spec)
    except SchedReaderError:
        return None
    obs = decode_observations(spec, benches, reqs, _profile(d, 1.0, c), endpoint, FLAT)
    res = {"time": [], "rate": []}
    for o in obs:
        res[o.kind].append(math.log(o.at / o.measured))
    return {"name": name, "d": d, "c": c, "res": res, "n": len(obs), "unit": unit, "engine": engine_of(spec)}


def prior_from(terms: list[dict], source: str) -> DecodePrior:
    """The decode prior measured on ``terms`` (deployment_terms of two or more deployments): the mean and the
    standard deviation of ln d, of c (ms) and of c in units of each deployment's own one-sequence step
    (``unit``, calibrate.unit_step_ms: what fit() uses); one run's spread per metric: the median over
    deployments of the residual's root mean square, corrected for the two fitted terms (x sqrt(n / (n - 2)),
    deployments with 3+ observations)."""
    def rms(xs):
        return math.sqrt(sum(x * x for x in xs) / len(xs))

    def spread(kind):   # (the shipped prior's where the deployments left that have such observations come from
        # fewer than MIN_PRIOR_DEPLOYMENTS sources: a median over one or two publishers' deployments, each x sqrt(3)
        # for its 3 runs, is not a measured spread; two A100 PCIe throughput-only deployments of one publisher
        # once set the V1 throughput spread to 0.46, against 0.05 pooled)
        use = [t for t in terms if t["n"] >= 3 and t["res"][kind]]
        if len({t.get("source", t.get("name", id(t))) for t in use}) >= MIN_PRIOR_DEPLOYMENTS:
            return statistics.median(rms(t["res"][kind]) * math.sqrt(t["n"] / (t["n"] - 2)) for t in use)
        return getattr(PRIOR, f"{'tpot' if kind == 'time' else 'throughput'}_log_sd")

    lds, cs, ks = [math.log(t["d"]) for t in terms], [t["c"] for t in terms], [t["c"] / t["unit"] for t in terms]
    return DecodePrior(decode_log_sd=round(statistics.stdev(lds), 3), step_ms_sd=round(statistics.stdev(cs), 2),
                       tpot_log_sd=round(spread("time"), 3), throughput_log_sd=round(spread("rate"), 3),
                       source=source, decode_log_mean=round(statistics.fmean(lds), 3),
                       step_ms_mean=round(statistics.fmean(cs), 2), step_rel_mean=round(statistics.fmean(ks), 3),
                       step_rel_sd=round(statistics.stdev(ks), 3))


def _errs(p: dict, b: BenchResult) -> dict[str, float]:
    return {k: p[k] / getattr(b, k) - 1 for k in METRICS if p.get(k) and getattr(b, k)}


def _med(rows: list[dict[str, float]], k: str) -> str:
    xs = [abs(r[k]) for r in rows if k in r]
    return f"{statistics.median(xs):5.1%}" if xs else "  n/a"


def _med_of_meds(res: list[dict], key: str, k: str) -> str:
    xs = [statistics.median(abs(e[k]) for e in r[key] if k in e) for r in res if any(k in e for e in r[key])]
    return f"{statistics.median(xs):.1%}" if xs else "n/a"


def _summary(label: str, rows: list[dict[str, float]]) -> str:
    return (f"{label}: median |error| output throughput {_med(rows, 'output_throughput')}, mean TPOT "
            f"{_med(rows, 'mean_tpot_ms')}, median TPOT {_med(rows, 'median_tpot_ms')} ({len(rows)} predictions)")


def evaluate(name: str, spec, benches: list[BenchResult], endpoint: str, loo: bool, quiet: bool,
             prior: DecodePrior | None = None) -> dict[str, list]:
    print(f"\n== {name}: {spec.model_name} on {spec.hardware.gpu.name}, vLLM {spec.vllm_version}, "
          f"{len(benches)} workloads")
    reqs = [requests_for(b) for b in benches]
    try:
        base = [_errs(predict(spec, b, None, r, endpoint), b) for b, r in zip(benches, reqs)]
    except SchedReaderError as exc:   # e.g. no KV block fits by the memory model: nothing to replay
        print(f"  skipped: {exc}")
        return {"name": name, "base": [], "one": [], "loo": []}
    if not quiet:
        for b, e in zip(benches, base):
            print(f"  uncalibrated {b.file:12} " + "  ".join(f"{k} {v:+.1%}" for k, v in e.items()))
    print("  " + _summary("uncalibrated", base))
    one: list[dict[str, float]] = []
    for i, cal in enumerate(benches):
        prof = fit(spec, [cal], endpoint=endpoint, prior=prior)
        t = prof.terms
        if not quiet:
            print(f"  calibrated on {cal.file}: decode x{t['decode_time_scale'].value:.3f}, "
                  f"{t['step_overhead_ms'].value:.2f} ms per step, prefill x{t['prefill_time_scale'].value:.3f}")
        for j, b in enumerate(benches):
            if i == j:
                continue
            e = _errs(predict(spec, b, prof, reqs[j], endpoint), b)
            one.append(e)
            if not quiet:
                print(f"     {b.file:12} " + "  ".join(f"{k} {v:+.1%}" for k, v in e.items()))
    print("  " + _summary("calibrated on one, predicting each other", one))
    out = {"name": name, "base": base, "one": one, "loo": []}
    if loo and len(benches) > LOO_MAX_RUNS:
        print(f"  leave-one-out skipped: {len(benches)} runs (each fit over {len(benches) - 1} runs at several "
              f"concurrency levels searches the host terms: minutes per fit; --loo covers up to {LOO_MAX_RUNS})")
    elif loo and len(benches) >= 3:
        for j, b in enumerate(benches):
            cal = [x for i, x in enumerate(benches) if i != j]
            prof = fit(spec, cal, endpoint=endpoint, prior=prior)
            e = _errs(predict(spec, b, prof, reqs[j], endpoint), b)
            out["loo"].append(e)
            if not quiet:
                t = prof.terms
                print(f"  leave out {b.file:12} " + ", ".join(
                    f"{k} {v.value:g}{v.unit}" for k, v in t.items() if v.fitted) + "  -> " +
                      "  ".join(f"{k} {v:+.1%}" for k, v in e.items()))
        print("  " + _summary("leave one workload out", out["loo"]))
    return out


def main() -> int:
    t0 = time.perf_counter()
    loo, quiet = "--loo" in sys.argv, "--quiet" in sys.argv
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    deps = []
    for f in sorted(DATA_DIR.glob("*-sharegpt.yaml")):
        spec, benches = load(f)
        deps.append((f.name, spec, benches, "completions"))
    deps += corpus_deployments()
    source = {d[0]: ("lambdalabs" if d[0].endswith(".yaml") else d[0].split(":")[0]) for d in deps}
    # the decode prior: each deployment's own terms over all its runs; a deployment is scored with the prior
    # measured on the deployments of OTHER sources (leave the whole source out: the three LambdaLabs files
    # are one source); --shipped: calibrate_posterior.PRIOR
    print("== each deployment's decode scale d and per-step time c over all its runs (flat prior), and the "
          "root mean square log residual of TPOT / throughput there")
    terms = {}
    silicon = silicon_deployments()
    for name, *_ in silicon:
        source[name] = "nvidia-silicon"
    for name, spec, benches, ep in deps + silicon:
        t = deployment_terms(name, spec, benches, ep)
        if t is None:
            print(f"  {name[:70]:70} one concurrency level or no replay: not used")
            continue
        t["source"] = source[name]
        terms[name] = t
        r = {k: (f"{math.sqrt(sum(x * x for x in v) / len(v)):.3f}" if v else "-") for k, v in t["res"].items()}
        print(f"  {name[:70]:70} {t['engine']} d x{t['d']:.3f}  c {t['c']:5.2f} ms = {t['c'] / t['unit']:.2f} x "
              f"its {t['unit']:.2f} ms step  residual {r['time']} / {r['rate']} ({t['n']} observations)")
    every = prior_from(list(terms.values()), f"measured on {len(terms)} deployments")
    print(f"  prior from all {len(terms)}: {every}")
    for eng in ("v0", "v1"):
        some = [t for t in terms.values() if t["engine"] == eng]
        if len(some) >= MIN_PRIOR_DEPLOYMENTS:
            print(f"  prior from the {len(some)} {eng} ones: {prior_from(some, f'{eng}: {len(some)} deployments')}")
    if "--terms" in sys.argv:
        return 0
    shipped = "--shipped" in sys.argv
    res = []
    for d in deps:
        if not any(o in d[0] for o in only.split(",")):
            continue
        if shipped:
            prior = None    # fit() picks the shipped prior of the deployment's engine
        else:   # the deployments of the same engine generation from other sources (all of them if too few)
            others = [t for k, t in terms.items() if source[k] != source[d[0]]]
            same = [t for t in others if t["engine"] == engine_of(d[1])]
            use = same if len(same) >= MIN_PRIOR_DEPLOYMENTS else others
            prior = prior_from(use, f"{len(use)} {engine_of(d[1]) + ' ' if use is same else ''}deployments "
                                    f"without source {source[d[0]]}")
        print(f"\n  prior: {prior}")
        res.append(evaluate(*d, loo, quiet, prior))
    print("\n== per deployment, median |error| output throughput / mean TPOT / median TPOT "
          "(uncalibrated -> calibrated)")
    for key in ("one", "loo"):
        for r in res:
            if r[key]:
                print(f"  {key:4} {r['name'][:70]:70} " + " / ".join(
                    f"{_med(r['base'], k).strip()} -> {_med(r[key], k).strip()}" for k in METRICS)
                    + f" ({len(r[key])})")
    print("\n== all deployments")
    for key, label in (("base", "uncalibrated"), ("one", "calibrated on one, predicting each other"),
                       ("loo", "leave one workload out")):
        rows = [e for r in res for e in r[key]]
        if rows:
            print("  " + _summary(label, rows))
    for key, label in (("one", "calibrated on one"), ("loo", "leave one out")):
        done = [r for r in res if r[key]]
        if done:   # every deployment weighs the same, however many runs it has
            print(f"  median over {len(done)} deployments, uncalibrated -> {label}: " + " / ".join(
                _med_of_meds(done, "base", k) + " -> " + _med_of_meds(done, key, k) for k in METRICS))
    # the uncalibrated model on the same predictions (each run counted once per pair it is a target of)
    pairs = [r["base"][j] for r in res for i in range(len(r["base"])) for j in range(len(r["base"])) if i != j]
    if pairs:
        print("  " + _summary("uncalibrated, same one-to-others pairs", pairs))
    print(f"time {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
