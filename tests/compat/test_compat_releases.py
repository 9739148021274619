"""compat.releases: the known release list and version-string resolution.

Expected values are read by hand from shared/vllm/README.md (58 releases,
0.6.0..0.33.0; 0.9.0.1, 0.10.1.1 and .postN not included) and
shared/vllm/source_commits.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sched_reader.compat import releases as rl
from sched_reader.compat.releases import known_releases, newest, resolve_version
from sched_reader.errors import SchedReaderError, UnknownVersionError
from conftest import load_script

ROOT = Path(__file__).resolve().parents[2]


def test_release_list_matches_readme():
    rels = known_releases()
    assert len(rels) == 58
    assert rels[0] == "0.6.0" and rels[-1] == "0.33.0" == newest()
    # README's list has 0.14.0/.1 and no 0.14.2; 0.9.0.1 / 0.10.1.1 are not separate releases
    assert {"0.14.0", "0.14.1", "0.20.2", "0.27.1"} <= set(rels)
    assert "0.14.2" not in rels and "0.10.1.1" not in rels
    # sorted numerically, not as text (0.9.2 before 0.10.0)
    assert rels.index("0.9.2") + 1 == rels.index("0.10.0")


def test_release_info_names_commit_and_wheel():
    info = rl.release_info("0.6.0")
    # source_commits.json: upstream tag v0.6.0 = 32e7db25...
    assert info["commit"] == "32e7db25365415841ebc7c4215851743fbb1bad1"
    assert info["source_url"] == (
        "https://github.com/vllm-project/vllm/tree/32e7db25365415841ebc7c4215851743fbb1bad1")
    assert info["wheel"] == "vllm-0.6.0-cp38-abi3-manylinux1_x86_64.whl"
    # 0.30.0 has no git source: its facts come from the PyPI wheel
    late = rl.release_info("0.30.0")
    assert late["commit"] is None
    assert late["source_url"] == "https://pypi.org/project/vllm/0.30.0/"
    with pytest.raises(UnknownVersionError):
        rl.release_info("0.5.0")


@pytest.mark.parametrize("text", ["0.18.0", "v0.18.0", " 0.18.0 ", "vllm/vllm-openai:v0.18.0",
                                  "vllm==0.18.0"])
def test_exact_release(text):
    res = resolve_version(text)
    assert res.release == "0.18.0"
    assert res.exact is True
    assert res.warning is None and res.note is None
    assert res.requested == text


@pytest.mark.parametrize("text,base", [("0.10.1.1", "0.10.1"), ("0.9.0.1", "0.9.0"),
                                       ("0.6.3.post1", "0.6.3"), ("v0.6.3.post1", "0.6.3")])
def test_patch_and_post_builds_map_to_base_with_note(text, base):
    res = resolve_version(text)
    assert res.release == base
    assert res.exact is False
    assert res.warning is None
    assert res.note and base in res.note


@pytest.mark.parametrize("text,base,word", [("0.11.0rc2", "0.11.0", "release-candidate"),
                                            ("0.12.0.dev3+g1234abc", "0.12.0", "development"),
                                            ("v0.11.0rc1", "0.11.0", "release-candidate")])
def test_dev_and_rc_builds_warn(text, base, word):
    res = resolve_version(text)
    assert res.release == base
    assert res.exact is False
    assert res.warning and word in res.warning


@pytest.mark.parametrize("text", ["latest", "nightly", "", "LATEST", None])
def test_latest_words_use_newest_with_warning(text):
    res = resolve_version(text)
    assert res.release == "0.33.0"
    assert res.exact is False
    assert "newest" in res.warning


def test_between_known_releases_uses_nearest_older():
    # 0.14.2 and 0.15.2 were never sampled: 0.14.1 / 0.15.1 are the nearest older
    res = resolve_version("0.14.2")
    assert res.release == "0.14.1" and res.exact is False
    assert "0.14.1" in res.warning
    assert resolve_version("0.15.2").release == "0.15.1"
    # 0.10.3 is not a release either; nearest older is 0.10.2
    assert resolve_version("0.10.3").release == "0.10.2"


def test_newer_and_older_than_known():
    new = resolve_version("0.40.0")
    assert new.release == "0.33.0" and "newer" in new.warning
    assert resolve_version("1.2.0").release == "0.33.0"
    old = resolve_version("0.5.4")
    assert old.release == "0.6.0" and "older" in old.warning


def test_two_part_version_reads_as_dot_zero():
    res = resolve_version("0.10")
    assert res.release == "0.10.0"
    assert res.exact is False and res.note


@pytest.mark.parametrize("text", ["banana", "0.x.1", "1", "0.10.1-beta-garbage", "v"])
def test_garbage_raises_with_range_hint(text):
    with pytest.raises(UnknownVersionError) as exc:
        resolve_version(text)
    err = exc.value
    assert isinstance(err, SchedReaderError) and err.exit_code == 2
    assert "0.6.0" in err.hint and "0.33.0" in err.hint


def test_index_is_small_and_lazy():
    """Resolving a version only needs index.json; it stays small."""
    index = rl.DATA_DIR / "index.json"
    assert index.stat().st_size < 40_000
    data = json.loads(index.read_text())
    assert [r["version"] for r in data["releases"]] == known_releases()


# ---- the maintainer script (synthetic inputs; never reads /work/shared) ----------

def _load_builder():
    return load_script("tools/build_vllm_data.py")


def test_builder_version_ranges():
    b = _load_builder()
    versions = ["0.6.0", "0.9.2", "0.10.0", "0.10.1"]
    assert b.expand_range("0.9.2..0.10.1", versions) == ["0.9.2", "0.10.0", "0.10.1"]
    assert b.expand_range("0.10.0", versions) == ["0.10.0"]
    assert b.expand_range("0.7.0..0.8.0", versions) == []


def test_builder_dedupes_identical_records(tmp_path):
    b = _load_builder()
    (tmp_path / "args").mkdir()
    rec = {"flag": "--max-num-seqs", "aliases": [], "dest": "max_num_seqs", "type": "int",
           "default": None, "choices": None, "deprecated": None, "action": None, "nargs": None,
           "optional": False, "hidden": False, "config": None, "group": None,
           "source": "vllm.engine.arg_utils:EngineArgs.add_cli_args"}
    changed = dict(rec, default=256)
    serve = dict(rec, flag="--grpc", dest="grpc", type="bool", default=False,
                 action="store_true", source="vllm.entrypoints.cli.serve:ServeSubcommand.x")
    (tmp_path / "args" / "1.0.0.json").write_text(json.dumps([rec, serve]))
    (tmp_path / "args" / "1.1.0.json").write_text(json.dumps([rec]))
    (tmp_path / "args" / "1.2.0.json").write_text(json.dumps([changed]))
    records, per_release = b.build_flags(tmp_path, ["1.0.0", "1.1.0", "1.2.0"])
    assert len(records) == 3  # rec shared by 1.0.0 and 1.1.0
    assert per_release == {"1.0.0": [0, 1], "1.1.0": [0], "1.2.0": [2]}
    # empty fields are dropped; engine/serve groups come from the registering function
    assert "aliases" not in records[0] and "choices" not in records[0]
    assert records[0]["group"] == "engine" and records[1]["group"] == "serve"
    assert records[2]["default"] == 256


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2), st.integers(0, 45), st.integers(0, 6))
def test_resolution_never_picks_a_newer_release(major, minor, patch):
    text = f"{major}.{minor}.{patch}"
    res = resolve_version(text)
    rels = known_releases()
    key = (major, minor, patch)
    assert res.release in rels
    if text in rels:
        assert res.exact and res.release == text
    elif key < rl.version_key(rels[0]):
        assert res.release == rels[0] and res.warning
    else:
        assert rl.version_key(res.release) <= key and res.warning and not res.exact
