"""The JSON caches of the catalogs are current, and a stale cache is never served."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sched_reader.models import data_files

ROOT = Path(__file__).resolve().parents[2]


def test_caches_match_their_yaml():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "build_catalog_cache.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def test_stale_cache_falls_back_to_yaml(monkeypatch):
    data_files.load.cache_clear()
    monkeypatch.setattr(data_files, "digest", lambda text: "not-the-cache-digest")
    try:
        gpus = data_files.load("gpus")
        assert gpus == data_files.parse_yaml(data_files.yaml_text("gpus"))
    finally:
        data_files.load.cache_clear()
