"""Write the JSON caches of the model/GPU/quantization catalogs and the fallback fractions (run after
editing their YAML).

Usage: python tools/build_catalog_cache.py [--check]
``--check`` exits 1 when a cache is missing or stale (tests/models/test_catalog_cache.py runs the same check).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_reader.models.data_files import digest, parse_yaml  # noqa: E402

DATA = ROOT / "sched_reader" / "models" / "data"
NAMES = ("models", "gpus", "quantization", "fallback_efficiency", "rocm_kernel_paths")


def render(name: str) -> str:
    text = (DATA / f"{name}.yaml").read_text(encoding="utf-8")
    doc = {"yaml_sha256": digest(text), "data": parse_yaml(text)}
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str) + "\n"


def main(argv: list[str]) -> int:
    stale = []
    for name in NAMES:
        out = DATA / f"{name}.cache.json"
        want = render(name)
        if "--check" in argv:
            if not out.exists() or out.read_text(encoding="utf-8") != want:
                stale.append(out.name)
        else:
            out.write_text(want, encoding="utf-8")
    if stale:
        print("stale catalog caches: " + ", ".join(stale) + " (run python tools/build_catalog_cache.py)")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
