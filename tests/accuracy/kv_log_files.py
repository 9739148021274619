"""Real vLLM start-up logs (tests/data/logs/, listed in tests/data/kv_logs_files.yaml) replayed by explain-log.

The engine is rebuilt from the log itself (``analyzers.explain_log.rebuild_argv``) plus, per file, only what the
log does not print (GPU, a local model directory's Hugging Face id, flags on a hard-wrapped line), each with its
source in the manifest. Shared by benchmarks/kv_accuracy.py and tests/accuracy/test_kv_log_files.py.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from sched_reader.analyzers.explain_log import _base_release, explain, rebuild_argv
from sched_reader.analyzers.pipeline import build_specs
from sched_reader.readers.vllm_log import parse_log, read_log_text

DATA = Path(__file__).resolve().parents[1] / "data"
LOGS = DATA / "logs"
MANIFEST = DATA / "kv_logs_files.yaml"


def load_manifest() -> dict:
    return yaml.safe_load(MANIFEST.read_text())


def sources() -> dict[str, str]:
    """file -> source URL (tests/data/logs/SOURCES)."""
    return dict(line.split("\t") for line in (LOGS / "SOURCES").read_text().splitlines()
                if line and not line.startswith("#"))


def replay(entry: dict):
    """(facts, Explanation) for one manifest entry."""
    facts = parse_log(read_log_text(LOGS / entry["file"]), entry["file"])
    if not (entry.get("model") or entry.get("args")):
        return facts, explain(facts, gpu=entry.get("gpu"))
    argv = rebuild_argv(facts)
    if entry.get("model"):
        argv[2] = entry["model"]
    argv += [str(a) for a in entry.get("args") or []]
    release = _base_release(facts.release) if facts.release else None
    [spec] = build_specs([], argv, gpu=entry.get("gpu"), vllm=release)
    if entry.get("model"):  # the log names the local directory; compare as the same engine
        facts = facts.model_copy(update={"model": entry["model"]})
    return facts, explain(facts, spec)


def kv_error(ex) -> tuple[str, float] | None:
    """(what was compared, predicted / logged - 1): KV tokens, else GPU blocks, else KV GiB."""
    rows = {r.name: r for r in ex.kv}
    for name in ("kv_tokens", "gpu_blocks"):
        r = rows.get(name)
        if r is not None and r.logged and r.predicted is not None:
            return name, r.predicted / r.logged - 1
    kv = next((r for r in ex.memory if r.name == "kv_cache"), None)
    if kv is not None and kv.logged and kv.predicted is not None:
        return "kv_gib", kv.predicted / kv.logged - 1
    return None
