#!/usr/bin/env python3
"""Build the per-release vLLM data that ``sched_reader.compat`` ships.

Usage::

    python tools/build_vllm_data.py --shared /work/shared/vllm \\
        --out sched_reader/compat/data/releases

Inputs (maintainer-side only; the package never reads them at run time):

* ``<shared>/args/<version>.json``  every flag ``vllm serve`` registers in that
  release (statically extracted from the PyPI wheel's Python sources);
* ``<shared>/facts.yaml``           curated per-version facts (engine timeline,
  block size, scheduler-default eras, gpu-memory-utilization, spec decode,
  ``--config`` file rules);
* ``<shared>/source_commits.json``  wheel file name and git commit per release.

Outputs (plain JSON, stdlib-readable, written deterministically; keys sorted):

* ``index.json``      releases in version order with wheel, commit, source URL;
                      small, so resolving a version string loads only this file.
* ``records.json``    the table of *distinct* flag records (one record is shared
                      by every release where the flag is byte-identical).
* ``flags.json``      ``{version: [record ids]}``, in registration order.
* ``facts.json``      per-release facts (engine generation, block-size default,
                      gpu-memory-utilization default, async scheduling, spec
                      decode methods, ``--config`` rules) plus the structured
                      scheduler-default era tables used by ``compat.defaults``.

Every fact keeps the URL it was read from: the release's source tree
(``https://github.com/vllm-project/vllm/tree/<commit>``) or, for releases with
no matched commit, the PyPI page of the release (the wheel is the source).

How to add the next vLLM release (e.g. 0.34.0)
----------------------------------------------
1. In a scratch venv, ``pip install vllm==0.34.0`` (CPU box is fine; nothing runs).
2. Write ``args/0.34.0.json`` with ``tools/extract_vllm_args.py``: it imports
   that vLLM, builds the parser ``vllm serve`` uses (``ServeSubcommand`` /
   ``make_arg_parser`` / ``EngineArgs``) and writes the same record format
   (shared/vllm/README.md)::

       python tools/extract_vllm_args.py --out /path/to/shared/vllm/args

   The files for 0.6.0-0.33.0 came from an earlier, static (AST) reader of the
   wheel sources; see that tool's docstring for how the two differ.
3. Add ``0.34.0`` to ``facts.yaml: _meta.versions``, its wheel/commit entry to
   ``source_commits.json``, and extend the version ranges in ``facts.yaml``
   (``..0.33.0`` -> ``..0.34.0``) after checking ``EngineArgs`` default setters,
   ``vllm/config/scheduler.py`` and ``vllm/config/cache.py`` for changes. If
   the scheduler default tiers changed, add an era to ``SCHEDULER_ERAS`` below
   (each number is cross-checked against ``facts.yaml`` text when building).
4. Run this script and the compat tests; commit the regenerated files.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

REPO_TREE = "https://github.com/vllm-project/vllm/tree/{commit}"
PYPI_RELEASE = "https://pypi.org/project/vllm/{version}/"
SCHEMA = 1

# Record keys copied from args/<ver>.json. Keys whose value is "empty"
# (None / [] / False) are dropped to keep the files small; readers treat a
# missing key as that empty value. ``default`` and ``type`` are always kept.
_OPTIONAL_EMPTY = (
    "aliases", "choices", "deprecated", "action", "nargs", "optional", "hidden",
    "config", "positional",
)
# Keys kept only when present in the source (presence itself is information).
_PRESENCE_KEYS = ("engine_default", "config_default", "negative_flag", "valid_values",
                  "enum_values")


def vkey(version: str) -> tuple[int, ...]:
    """Numeric sort key for a plain release string such as ``0.10.2``."""
    return tuple(int(p) for p in version.split("."))


def expand_range(spec: str, versions: list[str]) -> list[str]:
    """Expand facts.yaml ``A..B`` (or a single ``A``) into sampled versions."""
    spec = str(spec).strip()
    if ".." in spec:
        lo, hi = spec.split("..", 1)
        lo_k, hi_k = vkey(lo.strip()), vkey(hi.strip())
        return [v for v in versions if lo_k <= vkey(v) <= hi_k]
    return [v for v in versions if v == spec]


def _ranges_of(entry: dict[str, Any]) -> list[str]:
    raw = entry.get("versions")
    if isinstance(raw, list):
        return [str(x) for x in raw]
    return [str(raw)]


def in_entry(version: str, entry: dict[str, Any], versions: list[str]) -> bool:
    """True when ``version`` is covered by the entry's ``versions`` range(s)."""
    return any(version in expand_range(r, versions) for r in _ranges_of(entry))


def section_of(source: str) -> str:
    """engine / frontend / serve, from the function that registered the flag."""
    if source.startswith("vllm.engine.arg_utils:"):
        return "engine"
    if source.startswith(("vllm.scripts:", "vllm.entrypoints.cli.")):
        return "serve"
    return "frontend"


def compact_record(raw: dict[str, Any]) -> dict[str, Any]:
    """One args/<ver>.json entry -> the compact record stored in records.json."""
    rec: dict[str, Any] = {
        "flag": raw["flag"],
        "dest": raw["dest"],
        "type": raw["type"],
        "default": raw["default"],
        "group": section_of(raw["source"]),
        "source": raw["source"],
    }
    if raw.get("group"):
        rec["config_group"] = raw["group"]
    for key in _OPTIONAL_EMPTY:
        value = raw.get(key)
        if value not in (None, [], False):
            rec[key] = value
    for key in _PRESENCE_KEYS:
        if key in raw:
            rec[key] = raw[key]
    return rec


def build_flags(shared: Path, versions: list[str]) -> tuple[list[dict], dict[str, list[int]]]:
    """Deduplicate flag records across releases; ids are assigned in first-seen order."""
    ids: dict[str, int] = {}
    records: list[dict] = []
    per_release: dict[str, list[int]] = {}
    for version in versions:
        raw_list = json.loads((shared / "args" / f"{version}.json").read_text())
        row: list[int] = []
        for raw in raw_list:
            rec = compact_record(raw)
            key = json.dumps(rec, sort_keys=True)
            if key not in ids:
                ids[key] = len(records)
                records.append(rec)
            row.append(ids[key])
        per_release[version] = row
    return records, per_release


def source_url(version: str, commit: str | None) -> str:
    return REPO_TREE.format(commit=commit) if commit else PYPI_RELEASE.format(version=version)


# --------------------------------------------------------------------------
# Scheduler default eras (structured form of facts.yaml scheduler_defaults).
# Each numeric value is cross-checked against facts.yaml text in
# ``check_eras_against_facts`` so a drift in the source breaks the build.
# Tier conditions: min_gib (device total memory, GiB), exclude_names
# (substring of lower-cased device name), require_names (any substring).
# --------------------------------------------------------------------------
_V0_06 = {"max_num_seqs": 256, "mnbt_chunked": 512, "mnbt_unchunked_floor": 2048,
          "auto_chunked_above_len": 32768, "multi_step_keeps_floor": False}
_V0_065 = {"max_num_seqs": 256, "mnbt_chunked": 2048, "mnbt_unchunked_floor": 2048,
           "auto_chunked_above_len": 32768, "multi_step_keeps_floor": False}
_V0_07 = {"max_num_seqs": 256, "mnbt_chunked": 2048, "mnbt_unchunked_floor": 2048,
          "auto_chunked_above_len": 32768, "multi_step_keeps_floor": True}
# 0.8.0..0.10.2 still ship V0 (fallback engine) but facts.yaml states no V0 table
# for them: the 0.7.x rules are carried over and flagged as assumed.
_V0_ASSUMED = dict(_V0_07, assumed=True)


def _tier(cond: dict, mnbt_llm: int, mnbt_api: int, seqs_llm: int, seqs_api: int,
          label: str) -> dict:
    return {
        "when": cond,
        "label": label,
        "max_num_batched_tokens": {"LLM_CLASS": mnbt_llm, "OPENAI_API_SERVER": mnbt_api},
        "max_num_seqs": {"LLM_CLASS": seqs_llm, "OPENAI_API_SERVER": seqs_api},
    }


_H100_NAMES = {"require_names": ["h100", "h200"]}
_BIG = {"min_gib": 70, "exclude_names": ["a100"]}
SCHEDULER_ERAS: list[dict[str, Any]] = [
    {"id": "0.6.0..0.6.4", "facts_index": 0, "v0": _V0_06, "v1": None, "clamps": False},
    {"id": "0.6.5..0.6.6", "facts_index": 1, "v0": _V0_065, "clamps": False,
     "v1": [_tier({}, 8192, 2048, 1024, 1024, "any GPU")]},
    {"id": "0.7.0..0.7.3", "facts_index": 2, "v0": _V0_07, "clamps": False,
     "v1": [_tier(_H100_NAMES, 16384, 8192, 1024, 1024, "H100/H200 (by device name)"),
            _tier({}, 8192, 2048, 1024, 1024, "other GPUs")]},
    {"id": "0.8.0..0.8.3", "facts_index": 3, "v0": _V0_ASSUMED, "clamps": False,
     "v1": [_tier(_H100_NAMES, 16384, 8192, 1024, 1024, "H100/H200 (by device name)"),
            _tier({}, 8192, 2048, 1024, 1024, "other GPUs")]},
    {"id": "0.8.4", "facts_index": 3, "v0": _V0_ASSUMED, "clamps": False,
     "v1": [_tier(_H100_NAMES, 16384, 8192, 1024, 1024, "H100/H200 (by device name)"),
            _tier({}, 8192, 2048, 256, 256, "other GPUs")]},
    {"id": "0.8.5", "facts_index": 4, "v0": _V0_ASSUMED, "clamps": False,
     "v1": [_tier({"min_gib": 70}, 16384, 8192, 1024, 1024, ">= 70 GiB"),
            _tier({}, 8192, 2048, 256, 256, "GPUs with < 70 GiB")]},
    {"id": "0.9.0..0.10.2", "facts_index": 5, "v0": _V0_ASSUMED, "clamps": False,
     "v1": [_tier(_BIG, 16384, 8192, 1024, 1024, ">= 70 GiB (not A100)"),
            _tier({}, 8192, 2048, 256, 256, "other GPUs (< 70 GiB or A100)")]},
    {"id": "0.11.0", "facts_index": 5, "v0": None, "clamps": False,
     "v1": [_tier(_BIG, 16384, 8192, 1024, 1024, ">= 70 GiB (not A100)"),
            _tier({}, 8192, 2048, 256, 256, "other GPUs (< 70 GiB or A100)")]},
    {"id": "0.11.1..0.27.1", "facts_index": 6, "v0": None, "clamps": True,
     "fallback": {"max_num_batched_tokens": 2048, "max_num_seqs": 128},
     "v1": [_tier(_BIG, 16384, 8192, 1024, 1024, ">= 70 GiB (not A100)"),
            _tier({}, 8192, 2048, 256, 256, "other GPUs (< 70 GiB or A100)")]},
    {"id": "0.28.0..0.32.0", "facts_index": 6, "v0": None, "clamps": True,
     "fallback": {"max_num_batched_tokens": 2048, "max_num_seqs": 128},
     "v1": [_tier({"min_gib": 160}, 16384, 16384, 1024, 1024, ">= 160 GiB"),
            _tier(_BIG, 16384, 8192, 1024, 1024, ">= 70 GiB (not A100)"),
            _tier({}, 8192, 2048, 256, 256, "other GPUs (< 70 GiB or A100)")]},
    {"id": "0.33.0", "facts_index": 6, "v0": None, "clamps": True,
     "fallback": {"max_num_batched_tokens": 2048, "max_num_seqs": 128},
     "v1": [_tier({"min_gib": 160}, 16384, 16384, 1024, 1024, ">= 160 GiB"),
            _tier({"min_gib": 70, "exclude_names": ["a100", "gb10"]}, 16384, 8192, 1024, 1024,
                  ">= 70 GiB (not A100, not GB10)"),
            _tier({}, 8192, 2048, 256, 256, "other GPUs (< 70 GiB, A100 or GB10)")]},
]


def check_eras_against_facts(facts: dict) -> None:
    """Every number in SCHEDULER_ERAS must appear in the facts.yaml era it cites."""
    eras = facts["scheduler_defaults"]["eras"]
    for era in SCHEDULER_ERAS:
        text = yaml.safe_dump(eras[era["facts_index"]])
        numbers: set[int] = set()
        for tier in era.get("v1") or []:
            numbers |= set(tier["max_num_batched_tokens"].values())
            numbers |= set(tier["max_num_seqs"].values())
            numbers |= {tier["when"].get("min_gib", 0)} - {0}
        if era.get("v0") and era["facts_index"] <= 2:
            v0 = era["v0"]
            numbers |= {v0["max_num_seqs"], v0["mnbt_chunked"], v0["mnbt_unchunked_floor"]}
        for fb in (era.get("fallback") or {}).values():
            numbers.add(fb)
        for n in numbers:
            if not re.search(rf"(?<![\d.]){n}(?!\d)", text):
                raise SystemExit(f"era {era['id']}: {n} not found in facts.yaml era "
                                 f"{era['facts_index']}")


def build_facts(facts: dict, versions: list[str], commits: dict,
                records: list[dict], per_release: dict[str, list[int]]) -> dict:
    """Per-release facts + global tables, each with the URL it was read from."""
    timeline = facts["engine_timeline"]
    v1_default_from = vkey(timeline["v1_engine_default"]["first_version"])
    v0_removed_from = vkey(timeline["v0_removed"]["first_version_without_v0"])
    v1_opt_in = expand_range(timeline["v1_engine_opt_in"]["versions"], versions)
    fallback_range = expand_range("0.8.0..0.10.2", versions)

    sched = facts["scheduler_defaults"]
    spec = facts["speculative_decoding"]
    cfg_rules = facts["config_file"]["value_handling"]

    def record_of(version: str, dest: str) -> dict | None:
        for rid in per_release[version]:
            if records[rid]["dest"] == dest:
                return records[rid]
        return None

    out: dict[str, Any] = {}
    for v in versions:
        k = vkey(v)
        sc = commits.get(v, {})
        url = source_url(v, sc.get("commit"))
        if k >= v0_removed_from:
            engine = {"default": "V1", "v0_available": False, "v1_available": True,
                      "v0_fallback": False, "note": "V1 only (V0 removed in 0.11.0)"}
        elif k >= v1_default_from:
            engine = {"default": "V1", "v0_available": True, "v1_available": True,
                      "v0_fallback": v in fallback_range,
                      "note": "V1 default (VLLM_USE_V1=1); unsupported features fall back to V0"}
        else:
            engine = {"default": "V0", "v0_available": True, "v1_available": v in v1_opt_in,
                      "v0_fallback": False,
                      "note": "V0 default; V1 opt-in with VLLM_USE_V1=1" if v in v1_opt_in
                      else "V0 only"}
        engine["source_url"] = url

        block = next(e for e in facts["block_size_default"] if in_entry(v, e, versions))
        bs_rec = record_of(v, "block_size")
        block_size = {
            "default": 16,
            "cli_default": bs_rec["default"] if bs_rec and isinstance(bs_rec["default"], int)
            else None,
            "cli_choices": bs_rec.get("choices") if bs_rec else None,
            "note": str(block["default"]),
            "read_from": block["read_from"],
            "source_url": url,
        }

        gmu = None
        for rng, value in sched["gpu_memory_utilization_default"].items():
            if rng != "note" and v in expand_range(rng, versions):
                gmu = value
        gmu_rec = record_of(v, "gpu_memory_utilization")
        if gmu_rec is None or gmu_rec["default"] != gmu:
            raise SystemExit(f"{v}: gpu_memory_utilization facts {gmu} != args "
                             f"{gmu_rec and gmu_rec['default']}")

        async_rec = record_of(v, "async_scheduling")
        if async_rec is None:
            async_sched = {"flag_present": False, "default": False,
                           "note": "no --async-scheduling flag in this release"}
        else:
            entry = next(e for e in sched["async_scheduling_default"] if in_entry(v, e, versions))
            auto = isinstance(entry["default"], str) and entry["default"].startswith("None")
            async_sched = {"flag_present": True, "default": "auto" if auto else entry["default"],
                           "note": entry.get("note") or entry["default"]}
        async_sched["source_url"] = url

        spec_entry = next(e for e in spec["per_version"] if in_entry(v, e, versions))
        methods = spec_entry["method_values"]
        style = [e["style"] for e in spec["config_format"] if in_entry(v, e, versions)]
        spec_facts = {
            "method_values": methods if isinstance(methods, list) else None,
            "method_free_form": isinstance(methods, str),
            "spec_flags": spec_entry["spec_flags"],
            "config_style": style,
            "source_url": url,
        }

        era_fact = next(e for e in sched["eras"] if in_entry(v, e, versions))
        v1_engine = engine["default"] == "V1"
        chunked = {"default": v1_engine,
                   "note": str(era_fact.get("chunked_prefill_default")
                               or ("V1: always on" if v1_engine else "off")),
                   "source_url": url}
        prefix = {"default": v1_engine,
                  "note": str(era_fact.get("prefix_caching_default")
                              or ("V1: on by default" if v1_engine else "V0: off by default")),
                  "source_url": url}

        config_rules = [r["rule"] for r in cfg_rules if in_entry(v, r, versions)]
        era_ids = [e["id"] for e in SCHEDULER_ERAS if v in _era_versions(e["id"], versions)]
        if len(era_ids) != 1:
            raise SystemExit(f"{v}: expected one scheduler era, got {era_ids}")

        out[v] = {
            "engine": engine,
            "block_size": block_size,
            "gpu_memory_utilization_default": gmu,
            "async_scheduling": async_sched,
            "chunked_prefill": chunked,
            "prefix_caching": prefix,
            "speculative_decoding": spec_facts,
            "config_file_rules": config_rules,
            "scheduler_era": era_ids[0],
            "num_cli_flags": len(per_release[v]),
            "source_url": url,
        }
    return {
        "releases": out,
        "scheduler_eras": SCHEDULER_ERAS,
        "scheduler_notes": {
            "usage_contexts": sched["usage_contexts"],
            "post_processing": sched["eras"][6]["post_processing_when_user_did_not_set"],
            "chunked_prefill_default_0_11_1_plus": sched["eras"][6]["chunked_prefill_default"],
            "prefix_caching_default_0_11_1_plus": sched["eras"][6]["prefix_caching_default"],
            "read_from": sched["eras"][6]["read_from"],
        },
        "engine_timeline": {
            "v1_opt_in": timeline["v1_engine_opt_in"]["versions"],
            "v1_default_from": timeline["v1_engine_default"]["first_version"],
            "v0_removed_in": timeline["v0_removed"]["first_version_without_v0"],
            "read_from": timeline["v1_engine_default"]["read_from"],
        },
        "config_file": {k: facts["config_file"][k] for k in
                        ("flag", "format", "precedence", "file_extension", "read_from")},
    }


def _era_versions(era_id: str, versions: list[str]) -> list[str]:
    return expand_range(era_id, versions)


def build_index(versions: list[str], commits: dict, per_release: dict) -> dict:
    releases = []
    for v in versions:
        sc = commits.get(v, {})
        releases.append({
            "version": v,
            "commit": sc.get("commit"),
            "commit_method": sc.get("method"),
            "wheel": sc.get("wheel"),
            "wheel_build_date": sc.get("wheel_build_date"),
            "source_url": source_url(v, sc.get("commit")),
            "num_flags": len(per_release[v]),
        })
    return {
        "schema": SCHEMA,
        "generated_by": "tools/build_vllm_data.py",
        "what": "vLLM releases covered by sched-reader; flag data read from each PyPI wheel",
        "releases": releases,
    }


def dumps(obj: Any) -> str:
    """Deterministic compact JSON (sorted keys, ASCII, trailing newline)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True) + "\n"


def write_json(path: Path, obj: Any) -> int:
    text = dumps(obj)
    path.write_text(text)
    return len(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, required=True, help="path to shared/vllm")
    ap.add_argument("--out", type=Path, required=True, help="output folder")
    ap.add_argument("--check", action="store_true",
                    help="build in memory and fail if the files in --out differ (for CI)")
    args = ap.parse_args(argv)

    facts = yaml.safe_load((args.shared / "facts.yaml").read_text())
    commits = json.loads((args.shared / "source_commits.json").read_text())
    versions = sorted((p.stem for p in (args.shared / "args").glob("*.json")), key=vkey)
    if versions != sorted(facts["_meta"]["versions"], key=vkey):
        raise SystemExit("args/*.json and facts.yaml _meta.versions disagree")

    check_eras_against_facts(facts)
    for era in SCHEDULER_ERAS:
        era["read_from"] = facts["scheduler_defaults"]["eras"][era["facts_index"]]["read_from"]
    records, per_release = build_flags(args.shared, versions)
    for rid, rec in enumerate(records):
        rec["id"] = rid
    fact_tables = build_facts(facts, versions, commits, records, per_release)

    outputs = {
        "index.json": build_index(versions, commits, per_release),
        "records.json": {"schema": SCHEMA, "records": records,
                         "note": "distinct flag records; the releases that hold each id are in "
                                 "flags.json and each release's source_url is in index.json"},
        "flags.json": {"schema": SCHEMA, "releases": per_release},
        "facts.json": {"schema": SCHEMA, **fact_tables},
    }
    if args.check:
        stale = [name for name, obj in outputs.items()
                 if not (args.out / name).exists() or (args.out / name).read_text() != dumps(obj)]
        if stale:
            print("out of date: " + ", ".join(stale) + " (re-run without --check)")
            return 1
        print("up to date")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    sizes = {name: write_json(args.out / name, obj) for name, obj in outputs.items()}
    total = sum(sizes.values())
    print(f"{len(versions)} releases, {len(records)} distinct flag records, "
          f"{sum(len(r) for r in per_release.values())} flag rows; "
          + ", ".join(f"{k} {v / 1024:.0f} KiB" for k, v in sizes.items())
          + f"; total {total / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
