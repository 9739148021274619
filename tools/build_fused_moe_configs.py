#!/usr/bin/env python3
"""Build sched_reader/models/data/fused_moe_tuned_configs.json from vLLM wheels.

vLLM's Triton fused-MoE kernel reads a tuned tile table from
``vllm/model_executor/layers/fused_moe/configs/E={E},N={N},device_name={dev}[,dtype=..][,block_shape=[..]].json``;
when the file is missing it logs "Using default MoE config. Performance might be sub-optimal!" and uses
``get_default_config`` (the old two-branch heuristic up to 0.16.0, the batch-aware one of vLLM PR #34846
from 0.17.0).  This tool records, per tuned-config file name, which sampled vLLM releases ship it, plus a
few facts read from each release's ``fused_moe.py`` (which default heuristic, whether H200-family names
fold to ``NVIDIA_H200``, whether ``block_shape`` is part of the name), and maps the GPU catalog's
``smi_names`` to the device-name token vLLM puts into the file name.

Only derived facts (file names, booleans) are written; no vLLM code is copied.

Inputs, per release, either
  * a wheel (``--wheel PATH``, repeatable): the listing and ``fused_moe.py`` are read from the zip, or
  * ``--listings DIR`` with ``DIR/<version>.full.txt`` = ``unzip -l <wheel>`` output (the wheel name is
    taken from its ``Archive:`` line) and, optionally, ``--src DIR`` with
    ``DIR/<version>/vllm/model_executor/layers/fused_moe/fused_moe.py`` extracted from the same wheel.

Usage (what built the committed file; each wheel ~0.5 GB, read then deleted):
    pip download vllm==X --no-deps -d /tmp/w_X && unzip -l /tmp/w_X/*.whl > listings/X.full.txt
    unzip -o /tmp/w_X/*.whl 'vllm/model_executor/layers/fused_moe/fused_moe.py' -d src/X
    tools/build_fused_moe_configs.py --listings listings --src src
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import zipfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "sched_reader", "models", "data", "fused_moe_tuned_configs.json")
GPUS = os.path.join(ROOT, "sched_reader", "models", "data", "gpus.yaml")

CONFIG_DIR = "vllm/model_executor/layers/fused_moe/configs/"
FUSED_MOE_PY = "vllm/model_executor/layers/fused_moe/fused_moe.py"
NAME_RE = re.compile(
    r"^E=(?P<E>\d+),N=(?P<N>\d+),device_name=(?P<dev>[^,]+?)"
    r"(?:,dtype=(?P<dtype>[A-Za-z0-9_]+))?(?:,block_shape=\[(?P<bs>[0-9, ]+)\])?\.json$")


def version_key(v: str) -> tuple:
    """Sort key for vLLM release strings such as 0.6.1.post2, 0.10.1.1, 0.9.0.1."""
    main, _, post = v.partition(".post")
    return tuple(int(p) for p in main.split(".")) + (0,) * (4 - len(main.split("."))) + (int(post or 0),)


def wheel_version(wheel_name: str) -> str:
    return os.path.basename(wheel_name).split("-")[1]


def source_facts(src: str | None) -> dict:
    """Booleans read from one release's fused_moe.py text (None when the source was not read)."""
    if src is None:
        return {}
    m = re.search(r"def get_default_config\(.*?(?=\ndef )", src, re.S)
    body = m.group(0) if m else ""
    if "tokens_per_expert" in body:
        default = "batch_aware_pr34846"
    elif re.search(r"M <= E", body):
        default = "two_branch_M_le_E"
    else:
        default = "unknown"
    return {
        "default_config": default,
        "h200_family_folds_to_NVIDIA_H200": '"H200" in device_name.split("_")' in src,
        "block_shape_in_file_name": "block_shape_selector" in src,
        "user_config_folder_env": "VLLM_TUNED_CONFIG_FOLDER" in src,
    }


def read_wheel(path: str) -> tuple[str, str, list[str], dict]:
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        src = z.read(FUSED_MOE_PY).decode() if FUSED_MOE_PY in names else None
    cfgs = sorted(n[len(CONFIG_DIR):] for n in names if n.startswith(CONFIG_DIR) and n.endswith(".json"))
    name = os.path.basename(path)
    return wheel_version(name), name, cfgs, source_facts(src)


def read_listing(path: str, src_root: str | None) -> tuple[str, str, list[str], dict]:
    wheel = None
    cfgs = []
    with open(path) as f:
        for line in f:
            if line.startswith("Archive:"):
                wheel = os.path.basename(line.split(None, 1)[1].strip())
            i = line.find(CONFIG_DIR)
            if i >= 0 and line.rstrip("\n").endswith(".json"):
                cfgs.append(line.rstrip("\n")[i + len(CONFIG_DIR):])
    if wheel is None:
        raise SystemExit(f"{path}: no 'Archive:' line (expected `unzip -l` output)")
    version = wheel_version(wheel)
    src = None
    if src_root:
        p = os.path.join(src_root, version, FUSED_MOE_PY)
        if os.path.exists(p):
            with open(p) as f:
                src = f.read()
    return version, wheel, sorted(cfgs), source_facts(src)


def runs(flags: list[bool], releases: list[str]) -> list[list[str]]:
    """Maximal runs of consecutive sampled releases where flags is True, as [first, last]."""
    out, start = [], None
    for i, on in enumerate(flags + [False]):
        if on and start is None:
            start = i
        elif not on and start is not None:
            out.append([releases[start], releases[i - 1]])
            start = None
    return out


# Device-name tokens seen outside the shipped file names (vLLM warnings quoting the file it looked for, or
# a vLLM PR adding a file after 0.19.1). Text-search ids are the code index's ids of the quoting file.
SEEN_ELSEWHERE = {
    "NVIDIA_H100_NVL": "vLLM log: 'Config file not found at .../fused_moe/configs/E=128,N=768,device_name="
                       "NVIDIA_H100_NVL.json' (public repo file, code-search id 67592774702)",
    "NVIDIA_A100_80GB_PCIe": "https://github.com/vllm-project/vllm/pull/55511 "
                             "(adds E=256,N=512,device_name=NVIDIA_A100_80GB_PCIe.json)",
    "NVIDIA_A100-PCIE-40GB": "https://github.com/vllm-project/vllm/pull/19049 "
                             "('Create E=128,N=768,device_name=NVIDIA_A100-PCIE-40GB.json')",
    "NVIDIA_GeForce_RTX_3090": "vLLM log: '.../fused_moe/configs/E=128,N=192,device_name=NVIDIA_GeForce_RTX_3090.json' "
                               "(code-search id 42514581982)",
    "NVIDIA_L4": "vLLM log: '.../fused_moe/configs/E=40,N=128,device_name=NVIDIA_L4.json' (code-search id 30262991089)",
    "NVIDIA_GeForce_RTX_5090": "vLLM log: '.../fused_moe/configs/E=128,N=512,device_name=NVIDIA_GeForce_RTX_5090,"
                               "dtype=int4_w4a16.json' (code-search id 57177462795)",
    "NVIDIA_GB10": "https://github.com/vllm-project/vllm/pull/52192 (E=512,N=2688,device_name=NVIDIA_GB10)",
}


def device_map(all_devices: set[str]) -> dict:
    """Catalog GPU name -> the device_name token vLLM would put in a config file name.

    vLLM (fused_moe.get_config_file_name) uses current_platform.get_device_name().replace(" ", "_");
    on CUDA that is the NVML / torch device name, which the catalog records first in smi_names.
    `confirmed` = that token appears in at least one shipped config file name.
    """
    with open(GPUS) as f:
        gpus = yaml.safe_load(f)["gpus"]
    out = {}
    for g in gpus:
        names = g.get("smi_names") or []
        if not names or g.get("vendor") not in ("NVIDIA", "AMD"):
            continue
        cands = [n.replace(" ", "_") for n in names if " " in n or n.startswith(("NVIDIA", "AMD"))]
        hit = [c for c in cands if c in all_devices]
        if not hit and g.get("vendor") != "NVIDIA":
            continue  # ROCm names come from vLLM's own device-id map, not rocm-smi: only confirmed ones
        token = hit[0] if hit else (cands[0] if cands else names[0].replace(" ", "_"))
        entry = {"device_name": token, "confirmed_by_shipped_file": bool(hit)}
        if token in SEEN_ELSEWHERE:
            entry["seen_elsewhere"] = SEEN_ELSEWHERE[token]
        out[g["name"]] = entry
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheel", action="append", default=[], help="a vLLM wheel (repeatable)")
    ap.add_argument("--listings", help="directory of <version>.full.txt `unzip -l` outputs")
    ap.add_argument("--src", help="directory of <version>/vllm/... trees extracted from the same wheels")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)

    per = {}
    for w in args.wheel:
        v, name, cfgs, facts = read_wheel(w)
        per[v] = (name, cfgs, facts)
    if args.listings:
        for fn in sorted(os.listdir(args.listings)):
            if fn.endswith(".full.txt"):
                v, name, cfgs, facts = read_listing(os.path.join(args.listings, fn), args.src)
                per.setdefault(v, (name, cfgs, facts))
    if not per:
        ap.error("no wheels or listings given")
    releases = sorted(per, key=version_key)
    all_files = sorted({c for v in releases for c in per[v][1]})
    unparsed = [c for c in all_files if not NAME_RE.match(c)]
    if unparsed:
        print("warning: file names not matching the E=..,N=..,device_name=.. pattern:", unparsed, file=sys.stderr)
    shipped = {v: set(per[v][1]) for v in releases}
    files = {c: runs([c in shipped[v] for v in releases], releases) for c in all_files}
    devices = sorted({m.group("dev") for c in all_files if (m := NAME_RE.match(c))})

    doc = {
        "_about": (
            "Which vLLM releases ship which tuned Triton fused-MoE config file "
            "(vllm/model_executor/layers/fused_moe/configs/). files[name] = runs [first, last] over the "
            "`releases` list (every release in the list between first and last ships the file). `releases` "
            "is every PyPI vllm release 0.6.0..0.19.1 (pip index versions vllm, 2026-12-02), each wheel read. "
            "catalog_device_names: gpus.yaml name -> the device_name token vLLM forms from that GPU's first "
            "smi_names entry; confirmed_by_shipped_file / seen_elsewhere say where the token was seen. "
            "Built by tools/build_fused_moe_configs.py "
            "from the wheels named in `wheels` (PyPI, pip download vllm==X --no-deps); only file names "
            "and booleans read from each release's fused_moe.py are recorded."),
        "lookup_rule": (
            "vLLM >= 0.6 (fused_moe.py try_get_optimal_moe_config / get_moe_configs / get_config_file_name): "
            "E, _, N = w2.shape (E = local experts on this rank, N = intermediate size per TP partition; "
            "int4_w4a16 doubles N because w2 is packed), name = f'E={E},N={N},device_name={dev}' + "
            "(',dtype=' + dtype if dtype) + (',block_shape=[bn,bk]' if block quant, no spaces), "
            "dev = current_platform.get_device_name().replace(' ', '_') (and, where "
            "h200_family_folds_to_NVIDIA_H200, any name with an 'H200' token -> 'NVIDIA_H200'). "
            "dtype: 'fp8_w8a8' (FP8 W8A8, per-tensor or block), 'int8_w8a8', 'int8_w8a16', 'int4_w4a16', "
            "None for bf16/fp16 (no dtype part). A found file maps batch-size keys to tiles; the key "
            "nearest to M (tokens in the step, min |key - M|) is used. No file -> get_default_config."),
        "wheels": {v: per[v][0] for v in releases},
        "releases": releases,
        "source_facts": {v: per[v][2] for v in releases if per[v][2]},
        "count_by_release": {v: len(per[v][1]) for v in releases},
        "device_names_in_files": devices,
        "catalog_device_names": device_map(set(devices)),
        "files": files,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"wrote {args.out}: {len(releases)} releases, {len(all_files)} file names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
