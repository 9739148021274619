"""Which vLLM releases sched-reader knows, and how a version string maps onto one.

Only ``data/releases/index.json`` (about 20 KiB) is read here, once, on first use,
so resolving a version is cheap; flag tables and facts load elsewhere on demand.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sched_reader.errors import UnknownVersionError
from sched_reader.limits import clip
from sched_reader.versions import version_key

DATA_DIR = Path(__file__).resolve().parent / "data" / "releases"

_LATEST_WORDS = {"", "latest", "nightly", "main", "master", "head", "newest"}

# 0.11.0, v0.11.0, 0.10.1.1, 0.6.3.post1, 0.11.0rc2, 0.12.0.dev3+g1234, 0.6.3+cu118, 0.10
_VERSION_RE = re.compile(
    r"""^(?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<patch>\d+))?(?:\.(?P<extra>\d+))?
        (?:[.-]?post(?P<post>\d*))?
        (?:[.-]?(?P<pre>rc|a|b|alpha|beta|c)[.-]?(?P<pre_n>\d*))?
        (?:[.-]?post(?P<post2>\d*))?
        (?:[.-]?dev(?P<dev>\d*))?
        (?:\+(?P<local>[0-9a-z.\-_]+))?$""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class ResolvedVersion:
    """A version string mapped onto a release sched-reader has data for.

    ``exact`` is True only when ``requested`` names that release itself (a ``v``
    prefix or surrounding blanks aside). ``note`` is informational (a patch
    build whose flags equal its base release); ``warning`` means the data may
    not match what the requested build really does.
    """

    release: str
    requested: str
    exact: bool
    warning: str | None = None
    note: str | None = None



@functools.lru_cache(maxsize=1)
def _index() -> dict[str, Any]:
    with open(DATA_DIR / "index.json", encoding="utf-8") as fh:
        return json.load(fh)


def known_releases() -> list[str]:
    """Every release with data, oldest first (e.g. ``['0.6.0', ..., '0.33.0']``)."""
    return list(_sorted_releases())


@functools.lru_cache(maxsize=1)
def _sorted_releases() -> tuple[str, ...]:
    """Sorted once: a flag's history asks for this list per unknown flag (40k flags: 8 s unsorted)."""
    return tuple(sorted((r["version"] for r in _index()["releases"]), key=version_key))


def newest() -> str:
    """The newest release with data."""
    return known_releases()[-1]


def oldest() -> str:
    """The oldest release with data."""
    return known_releases()[0]


def release_info(version: str) -> dict[str, Any]:
    """Index entry of an exact release: commit, wheel, source_url, num_flags."""
    for entry in _index()["releases"]:
        if entry["version"] == version:
            return dict(entry)
    raise UnknownVersionError(
        f"no data for vLLM {version!r}",
        hint=f"known releases: {oldest()} .. {newest()}; resolve the text with resolve_version()",
    )


def _range_hint() -> str:
    return (f"sched-reader knows vLLM {oldest()} .. {newest()}; give a release such as "
            f"'{newest()}', 'v0.10.1', '0.10.1.1', '0.11.0rc2' or 'latest'")


def _strip_wrappers(text: str) -> str:
    """Drop image/package wrappers: ``vllm/vllm-openai:v0.9.2``, ``vllm==0.9.2``, ``v0.9.2``."""
    s = text.strip().strip("'\"").strip()
    if ":" in s:  # container image tag
        s = s.rsplit(":", 1)[1]
    for prefix in ("vllm==", "vllm===", "vllm "):
        if s.lower().startswith(prefix):
            s = s[len(prefix):]
    s = s.strip()
    if s[:1] in ("v", "V") and s[1:2].isdigit():
        s = s[1:]
    return s.lower()


def _nearest_older(key: tuple[int, ...], releases: list[str]) -> str:
    older = [r for r in releases if version_key(r) <= key]
    return older[-1]


_MAX_VERSION_CHARS = 64  # the longest real version string (a local build tag) is ~40 characters


def resolve_version(text: str | None) -> ResolvedVersion:
    """Map a version as users write it onto a known release.

    Rules: an exact release (``0.18.0``, ``v0.18.0``) -> itself; ``.postN`` and
    4-part patch builds (``0.10.1.1``) -> the base release with a note; rc/dev
    builds -> that release with a warning; ``latest``/``nightly``/empty -> the
    newest known with a warning; an unknown release inside the known range ->
    the nearest older one with a warning; newer than the newest / older than the
    oldest -> the newest / oldest with a warning. Anything else raises
    UnknownVersionError with the known range as hint.
    """
    requested = "" if text is None else str(text)
    releases = known_releases()
    newest_r, oldest_r = releases[-1], releases[0]
    s = _strip_wrappers(requested)

    if s in _LATEST_WORDS:
        shown = requested.strip() or "no version"
        return ResolvedVersion(
            newest_r, requested, False,
            warning=f"{shown!r} is not a release number; using the newest known vLLM "
                    f"{newest_r}. Pin a version for a reproducible answer.",
        )

    m = _VERSION_RE.match(s) if len(s) <= _MAX_VERSION_CHARS else None
    if not m:
        raise UnknownVersionError(f"cannot read vLLM version {clip(requested)}", hint=_range_hint())

    base_parts = [int(m["major"]), int(m["minor"]), int(m["patch"] or 0)]
    base = ".".join(str(p) for p in base_parts)
    key = tuple(base_parts)
    notes: list[str] = []
    warnings: list[str] = []
    exact = True

    if m["patch"] is None:
        exact = False
        notes.append(f"{requested.strip()!r} read as {base}")
    if m["extra"] is not None:
        exact = False
        notes.append(f"{requested.strip()} is a patch build of {base}; using {base}'s flag data")
    if m["post"] is not None or m["post2"] is not None:
        exact = False
        notes.append(f"{requested.strip()} is a post-release of {base}; using {base}'s flag data")
    if m["local"] is not None and m["dev"] is None:
        exact = False
        notes.append(f"local build tag '+{m['local']}' ignored; using {base}")
    if m["pre"] is not None or m["dev"] is not None:
        exact = False
        kind = "development" if m["dev"] is not None else "release-candidate"
        warnings.append(
            f"{requested.strip()} is a {kind} build; its flags may differ from the "
            f"{base} release whose data is used")

    if key > version_key(newest_r):
        warnings.append(f"vLLM {base} is newer than the newest release sched-reader knows "
                        f"({newest_r}); using {newest_r}. Flags added since are unknown.")
        release = newest_r
        exact = False
    elif key < version_key(oldest_r):
        warnings.append(f"vLLM {base} is older than the oldest release sched-reader knows "
                        f"({oldest_r}); using {oldest_r}. Results may be wrong.")
        release = oldest_r
        exact = False
    elif base in releases:
        release = base
    else:
        release = _nearest_older(key, releases)
        exact = False
        warnings.append(f"no data for vLLM {base}; using the nearest older release {release}")

    return ResolvedVersion(
        release=release,
        requested=requested,
        exact=exact,
        warning="; ".join(warnings) or None,
        note="; ".join(notes) or None,
    )
