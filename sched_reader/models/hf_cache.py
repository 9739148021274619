"""Find a model's ``config.json`` where Hugging Face tools already stored it (no network, ever).

Looked up, in order (the ``huggingface_hub`` rules, https://huggingface.co/docs/huggingface_hub/guides/manage-cache):
``$HF_HUB_CACHE``, ``$HUGGINGFACE_HUB_CACHE``, ``$HF_HOME/hub``, ``$XDG_CACHE_HOME/huggingface/hub``,
``~/.cache/huggingface/hub``. Inside a cache, repo ``org/name`` lives in ``models--org--name/``; the
snapshot ``refs/main`` names is preferred, else the most recently modified ``snapshots/*/config.json``.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dirs() -> list[Path]:
    """The hub cache directories to search, most specific first (existing ones only)."""
    env = os.environ
    cands: list[str] = []
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if env.get(var):
            cands.append(env[var])
    if env.get("HF_HOME"):
        cands.append(os.path.join(env["HF_HOME"], "hub"))
    if env.get("XDG_CACHE_HOME"):
        cands.append(os.path.join(env["XDG_CACHE_HOME"], "huggingface", "hub"))
    cands.append(os.path.join(os.path.expanduser("~"), ".cache", "huggingface", "hub"))
    out: list[Path] = []
    for c in cands:
        p = Path(c)
        try:
            if p.is_dir() and p not in out:
                out.append(p)
        except OSError:
            continue
    return out


def _snapshot_config(repo_dir: Path) -> Path | None:
    try:
        ref = (repo_dir / "refs" / "main").read_text(encoding="utf-8").strip()
        cfg = repo_dir / "snapshots" / ref / "config.json"
        if cfg.is_file():
            return cfg
    except (OSError, UnicodeDecodeError):
        pass
    try:
        found = [p for p in (repo_dir / "snapshots").glob("*/config.json") if p.is_file()]
    except OSError:
        return None
    if not found:
        return None
    return max(found, key=lambda p: (p.stat().st_mtime, str(p)))


def find_cached_config(org: str | None, repo: str) -> Path | None:
    """``config.json`` of ``org/repo`` in a local HF hub cache, or None.

    Without ``org`` the repo name must be unique across the cache (``models--*--repo``). Matching is
    case-insensitive, as the Hub's repo ids are.
    """
    if not repo or "/" in repo or repo in (".", ".."):
        return None
    want = f"models--{org}--{repo}".lower() if org else None
    tail = f"--{repo}".lower()
    for cache in cache_dirs():
        try:
            entries = [e for e in cache.iterdir() if e.name.lower().startswith("models--")]
        except OSError:
            continue
        if want:
            hits = [e for e in entries if e.name.lower() == want]
        else:
            hits = [e for e in entries if e.name.lower().endswith(tail) and e.name.count("--") == 2]
            if len(hits) > 1:
                hits = []
        for e in hits:
            cfg = _snapshot_config(e)
            if cfg is not None:
                return cfg
    return None
