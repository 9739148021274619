"""Read the package's YAML catalogs fast: a JSON copy is used when it matches the YAML byte for byte.

The YAML files under ``sched_reader/models/data/`` are the sources people edit (with comments and
sources). ``tools/build_catalog_cache.py`` writes ``<name>.cache.json`` beside each, holding the parsed
data and the SHA-256 of the YAML text; parsing JSON is ~40x faster than YAML, which keeps a one-file
CLI run short. A missing or stale cache is ignored (the YAML is parsed), so it can never serve old data.
The files are read by path beside this module, as the other data files of the package are
(``importlib.resources`` would import its zip readers, ``zipfile`` among them, on every run).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "data"


def yaml_text(name: str) -> str:
    """The text of ``<name>.yaml`` in the data package."""
    return (DATA_DIR / f"{name}.yaml").read_text(encoding="utf-8")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse_yaml(text: str) -> Any:
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@lru_cache(maxsize=None)
def load(name: str) -> Any:
    """Parsed ``<name>.yaml``, from its JSON cache when the cache is current."""
    text = yaml_text(name)
    cache = DATA_DIR / f"{name}.cache.json"
    try:
        doc = json.loads(cache.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        doc = None
    if isinstance(doc, dict) and doc.get("yaml_sha256") == digest(text):
        return doc["data"]
    return parse_yaml(text)
