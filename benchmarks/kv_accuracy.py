"""Accuracy of sched-reader's start-up memory / KV predictions against real vLLM logs.

Usage: python benchmarks/kv_accuracy.py [path/to/kv_logs.yaml]
Prints, per row of tests/data/kv_logs.yaml: predicted / logged / relative error for weights,
activation peak, non-torch memory, KV GiB and KV tokens (blocks for V0 rows), then the median and
p90 absolute relative error of each column. Each row is replayed through the whole pipeline
(tests/accuracy/kv_rows.py: the command line the log states -> spec builder -> capacity model).

Then the section "start-up logs": every verbatim log in tests/data/logs/ that sized a KV cache, replayed by
explain-log from the log alone (tests/accuracy/kv_log_files.py; what a log does not print is in
tests/data/kv_logs_files.yaml with its source), KV-token error by source, release era and GPU class.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "tests" / "accuracy"))

from kv_rows import load_rows, predict  # noqa: E402
from kv_log_files import kv_error, load_manifest, replay, sources  # noqa: E402


INDEPENDENT = ROOT / "tests" / "data" / "kv_logs_independent.yaml"
# The one sweep most calibration rows come from: reported apart from the independent sources.
SWEEPS = ("github.com/llm-d-incubation/llm-d-planner",)



def _add_to_groups(groups: dict[str, dict[str, list[float]]], row: dict, err: float, is_sweep: bool) -> None:
    """File one relative error under the row's source, release era and GPU class."""
    groups["source"].setdefault(source_of(row) + (" (sweep)" if is_sweep else ""), []).append(err)
    groups["era"].setdefault(era_of(row), []).append(err)
    groups["gpu class"].setdefault(gpu_class_of(row), []).append(err)


def _print_groups(groups: dict[str, dict[str, list[float]]], heading: str) -> None:
    """One block per grouping (source, era, GPU class): median / p90 / max per key."""
    for name, g in groups.items():
        print(f"\n{heading} {name}:")
        for k in sorted(g):
            print(f"  {k[:60]:60s} {_stats(g[k])}")

def source_of(row: dict) -> str:
    """A source key: the repository (for repo files) or the issue/PR thread."""
    url = str(row["source_url"])
    parts = url.split("/")
    if "/blob/" in url or "/tree/" in url:
        return "/".join(parts[2:5])
    return "/".join(parts[2:7])


def era_of(row: dict) -> str:
    from sched_reader.models.memory_profile import parse_version

    v = parse_version(row["vllm_version"] or "0.6.4")
    if row["engine_core"] == "v0":
        return "V0 <=0.6.4" if v < (0, 6, 5) else "V0 0.6.5+"
    if v < (0, 9, 1):   # absolute torch peak before memory_profiling (memory_profile.V1_MEMORY_PROFILING_FROM)
        return "V1 <0.9.1"
    return "V1 0.9.1-0.18" if v < (0, 19, 0) else "V1 0.19+"


def gpu_class_of(row: dict) -> str:
    from sched_reader.models.gpu_catalog import resolve_gpu

    try:
        return resolve_gpu(row["gpu"]).gpu.arch
    except Exception:  # noqa: BLE001
        return "unknown"


def _stats(errs: list[float]) -> str:
    if not errs:
        return "n= 0"
    a = np.abs(np.array(errs))
    return (f"n={len(a):2d}  median |err| {100 * np.median(a):5.2f}%  p90 |err| {100 * np.percentile(a, 90):5.2f}%"
            f"  max {100 * a.max():5.2f}%")


def grouped_report(rows: list[dict], token_err: dict[str, float | None]) -> None:
    """KV-token (V1) / GPU-block (V0) error by source, era and GPU class; sweep rows apart.

    Rows whose source prints no token count are compared on "Available KV cache memory" (GiB).

    No constant is re-fitted when this runs, so leaving a source out changes no prediction: the
    leave-one-source-out error of a row is its error here. Rows a constant was read from are marked
    in-sample (``constants_from_this_row``) and listed apart.
    """
    answered = sum(1 for r in rows if token_err[r["id"]] is not None)
    print(f"\nanswered {answered}/{len(rows)} rows")
    groups: dict[str, dict[str, list[float]]] = {"source": {}, "era": {}, "gpu class": {}}
    indep: list[float] = []
    indep_out: list[float] = []
    sweep: list[float] = []
    for r in rows:
        e = token_err[r["id"]]
        if e is None:
            continue
        is_sweep = any(s in str(r["source_url"]) for s in SWEEPS)
        (sweep if is_sweep else indep).append(e)
        if not is_sweep and not r.get("constants_from_this_row"):
            indep_out.append(e)
        _add_to_groups(groups, r, e, is_sweep)
    print(f"{'independent sources':44s} {_stats(indep)}")
    print(f"{'  of which no constant was read off':44s} {_stats(indep_out)}")
    print(f"{'sweep rows (' + ', '.join(s.split('/')[-1] for s in SWEEPS) + ')':44s} {_stats(sweep)}")
    _print_groups(groups, "by")


def logs_report() -> None:
    """explain-log rebuilt from each start-up log alone vs the KV size it logged."""
    man = load_manifest()
    src = sources()
    print(f"\n== start-up logs (tests/data/logs, rebuilt by explain-log from the log alone): "
          f"{len(man['files'])} replayed, {len(man['left_out'])} left out (reasons in kv_logs_files.yaml)")
    errs: dict[str, dict[str, list[float]]] = {"source": {}, "era": {}, "gpu class": {}}
    indep: list[float] = []
    sweep: list[float] = []
    answered = 0
    for e in man["files"]:
        try:
            facts, ex = replay(e)
        except Exception as exc:  # noqa: BLE001 - reported, not fatal
            print(f"  {e['file'][:60]:60s} NOT ANSWERED: {str(exc).splitlines()[0][:100]}")
            continue
        ke = kv_error(ex)
        if ke is None:
            print(f"  {e['file'][:60]:60s} NOT ANSWERED: {'; '.join(ex.notes)[-110:]}")
            continue
        answered += 1
        what, err = ke
        url = src[e["file"]]
        row = {"source_url": url, "vllm_version": ex.release, "engine_core": ex.engine_core or "v1", "gpu": ex.gpu}
        is_sweep = any(sw in url for sw in SWEEPS)
        (sweep if is_sweep else indep).append(err)
        _add_to_groups(errs, row, err, is_sweep)
        print(f"  {e['file'][:60]:60s} {what:10s} {100 * err:+6.2f}%  (largest term: {ex.differs or '-'}"
              f"{'' if ex.differs_by_gib is None else f' {ex.differs_by_gib:+.2f} GiB'})")
    print(f"answered {answered}/{len(man['files'])} logs")
    print(f"{'independent sources':44s} {_stats(indep)}")
    print(f"{'sweep logs (' + ', '.join(sw.split('/')[-1] for sw in SWEEPS) + ')':44s} {_stats(sweep)}")
    _print_groups(errs, "logs by")


def main(path: str | None = None) -> int:
    rows = load_rows(path)
    if path is None and INDEPENDENT.is_file():
        rows += load_rows(INDEPENDENT)
    token_err: dict[str, float | None] = {}
    cols = ("weights", "activation", "non_torch", "kv_gib", "tokens")
    errs: dict[str, list[float]] = {c: [] for c in cols}
    print(f"{'row':44s} " + " ".join(f"{c:>24s}" for c in cols))
    for row in rows:
        try:
            j = predict(row)
        except Exception as exc:  # noqa: BLE001 - an unanswered row is reported, not fatal
            token_err[row["id"]] = None
            print(f"{row['id'][:44]:44s} NOT ANSWERED: {str(exc).splitlines()[0][:120]}")
            continue
        lg = row["logged"]
        act = lg["activation_peak_gib"]
        if act is None and lg["peak_torch_memory_gib"] is not None:
            act = round(lg["peak_torch_memory_gib"] - lg["weights_gib"], 2)
        v1 = row["engine_core"] == "v1"
        # Where the release subtracts its CUDA-graph estimate (V1 0.20+), the "peak activation" vLLM prints is the
        # transient torch peak plus that estimate (vllm 0.31.0 gpu_worker.py: peak_activation_memory =
        # transient_peak_headroom + cudagraph_memory_estimate_applied): compare like with like.
        cg = next((t for t in j["explain"] if t["name"] == "cuda_graph"), None)
        act_pred = j["memory"]["activation_peak_gib"]
        if cg is not None and cg["inputs"].get("subtracted"):
            act_pred = round(act_pred + j["memory"]["cuda_graph_gib"], 2)
        pairs = {
            "weights": (j["memory"]["weights_gib"], lg["weights_gib"]),
            "activation": (act_pred, act),
            "non_torch": (j["memory"]["non_torch_gib"], lg["non_torch_gib"]),
            "kv_gib": (j["memory"]["kv_cache_gib"], lg["kv_cache_gib"]),
            "tokens": ((j["kv_cache"]["tokens"], lg["kv_cache_tokens"]) if v1 and lg["kv_cache_tokens"]
                       else (j["kv_cache"]["num_blocks"], lg["gpu_blocks"])),
        }
        cells = []
        for c in cols:
            p, r = pairs[c]
            if r is None or r == 0:
                cells.append(f"{p:>10} / {'-':>6} {'':>5}")
                continue
            e = p / r - 1
            errs[c].append(abs(e))
            if c == "tokens":
                token_err[row["id"]] = e
            cells.append(f"{p:>10} / {r:>6} {100 * e:+5.1f}%")
        if row["id"] not in token_err and lg["kv_cache_gib"]:   # no token count logged: KV memory instead
            token_err[row["id"]] = pairs["kv_gib"][0] / lg["kv_cache_gib"] - 1
        token_err.setdefault(row["id"], None)
        print(f"{row['id'][:44]:44s} " + " ".join(f"{x:>24s}" for x in cells))
    print()
    for c in cols:
        a = np.array(errs[c])
        print(f"{c:12s} n={len(a):2d}  median |err| {100 * np.median(a):6.2f}%  p90 |err| {100 * np.percentile(a, 90):6.2f}%"
              f"  max {100 * a.max():6.2f}%")
    grouped_report(rows, token_err)
    if path is None:
        logs_report()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1] if len(sys.argv) > 1 else None))
