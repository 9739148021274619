"""compat.history: `compat --diff` as a changelog and `compat --flag` history, pinned to the release data.

Facts used (from sched_reader/compat/data): ``renamed_to('--cuda-graph-sizes')`` is
``--cudagraph-capture-sizes`` (old flag last in 0.12.0, new flag first in 0.11.1);
gpu_memory_utilization default 0.9 until 0.19.1, 0.92 from 0.20.0 (facts.json); the default
engine is V0 until 0.7.3 and V1 from 0.8.0, V0 removed in 0.11.0; `vllm serve` max_num_seqs on an
H100 is 256 (V0) and 1024 (V1, 0.8.0+) while the argparse default is 256 / None / 128; the 0.8.5
matrix has a Prompt Adapter row that 0.11.0 drops.
"""

from __future__ import annotations

import json

import pytest

from sched_reader.compat import matrix
from sched_reader.compat.argtable import first_seen, last_seen, renamed_to
from sched_reader.report.compat_changes import render_flag, render_release_diff
from sched_reader.compat.defaults import scheduler_defaults
from sched_reader.compat.history import (ASSUMED_MAX_MODEL_LEN, diff_releases, flag_spans, serve_context,
                                         suggest_flags)
from sched_reader.errors import SchedReaderError


def test_rename_facts_the_tests_rely_on():
    assert renamed_to("--cuda-graph-sizes") == "--cudagraph-capture-sizes"
    assert last_seen("--cuda-graph-sizes") == "0.12.0"
    assert first_seen("--cudagraph-capture-sizes") == "0.11.1"


# ---- renames -------------------------------------------------------------------------------------

def test_rename_is_listed_once_under_renamed():
    d = diff_releases("0.12.0", "0.13.0")
    assert d.renamed == [("--cuda-graph-sizes", "--cudagraph-capture-sizes", "0.13.0")]
    assert "--cuda-graph-sizes" not in d.removed
    assert "--cudagraph-capture-sizes" not in d.added
    text = render_release_diff("0.12.0", "0.13.0", "text")
    section = text.split("Flags renamed (1):\n", 1)[1].splitlines()[0]
    assert section.strip() == "--cuda-graph-sizes -> --cudagraph-capture-sizes (0.13.0)"


def test_rename_across_a_wider_span_and_backwards():
    assert ("--cuda-graph-sizes", "--cudagraph-capture-sizes", "0.13.0") in diff_releases("0.11.0", "0.13.0").renamed
    back = diff_releases("0.13.0", "0.11.0")
    assert back.renamed == [("--cudagraph-capture-sizes", "--cuda-graph-sizes", "0.13.0")]
    assert "--cuda-graph-sizes" not in back.added and "--cudagraph-capture-sizes" not in back.removed


def test_successor_added_while_old_name_remains_is_annotated():
    d = diff_releases("0.11.0", "0.12.0")
    assert d.renamed == [] and "--cudagraph-capture-sizes" in d.added
    assert "new name of --cuda-graph-sizes" in d.added_notes["--cudagraph-capture-sizes"]
    assert "old name of --cudagraph-capture-sizes" in diff_releases("0.13.0", "0.12.0").added_notes["--cuda-graph-sizes"]


# ---- defaults ------------------------------------------------------------------------------------

def test_gmu_default_change_is_a_serve_default_with_its_release():
    d = diff_releases("0.19.1", "0.20.0")
    (gmu,) = [c for c in d.defaults if c.flag == "--gpu-memory-utilization"]
    assert (gmu.old, gmu.new, gmu.level, gmu.steps) == (0.9, 0.92, "serve", [("0.20.0", 0.92)])
    assert "TOTAL memory" in gmu.note and "instance" in gmu.note
    text = render_release_diff("0.19.1", "0.20.0", "text")
    assert "--gpu-memory-utilization: 0.9 -> 0.92 (0.20.0)" in text
    assert "H100 SXM5 80GB" in text and f"max_model_len {ASSUMED_MAX_MODEL_LEN}" in text


def test_effective_defaults_replace_argparse_noise():
    d = diff_releases("0.7.3", "0.11.1")
    by_flag = {c.flag: c for c in d.defaults}
    mns = by_flag["--max-num-seqs"]
    # argparse says 256 -> 128; `vllm serve` on an H100 resolves 256 (V0) then 1024 (V1)
    assert (mns.level, mns.old, mns.new, mns.steps) == ("serve", 256, 1024, [("0.8.0", 1024)])
    assert by_flag["default engine"].old == "V0" and by_flag["default engine"].steps == [("0.8.0", "V1")]
    assert by_flag["engines available"].new == "V1"
    assert ("0.11.0", "V1") in by_flag["engines available"].steps
    assert by_flag["--enable-prefix-caching"].new is True
    # --block-size 16 -> None at argparse level, 16 tokens effective in both: not listed
    wide = diff_releases("0.6.0", "0.33.0")
    assert not [c for c in wide.defaults if c.flag == "--block-size"]
    assert not [c for c in wide.defaults if c.level == "argparse" and c.flag == "--max-num-seqs"]
    # None <-> '' / [] is not a default change
    assert not [c for c in diff_releases("0.8.5", "0.11.0").defaults if c.flag in ("--config", "--reasoning-parser")]


def test_serve_defaults_follow_the_gpu():
    a100 = serve_context("A100 SXM4 80GB")
    d = diff_releases("0.7.3", "0.8.0", a100)
    mnbt = next(c for c in d.defaults if c.flag == "--max-num-batched-tokens")
    want = scheduler_defaults("0.8.0", a100.gpu_name, a100.gpu_total_gib,
                              max_model_len=ASSUMED_MAX_MODEL_LEN)["max_num_batched_tokens"][0]
    assert mnbt.new == want == 2048
    assert not [c for c in diff_releases("0.7.3", "0.8.0").defaults if c.flag == "--max-num-batched-tokens"]


def test_async_scheduling_note_from_release_facts():
    d = diff_releases("0.13.0", "0.14.0")
    (asy,) = [c for c in d.defaults if c.flag == "--async-scheduling"]
    assert (asy.old, asy.new) == (False, True) and asy.note.startswith("None = auto")


# ---- matrix --------------------------------------------------------------------------------------

def test_removed_matrix_row_is_one_line():
    old, new = matrix.for_release("0.8.5"), matrix.for_release("0.11.0")
    assert "prompt_adapter" in old.feature_keys and "prompt_adapter" not in new.feature_keys
    d = diff_releases("0.8.5", "0.11.0")
    rows = d.matrix_of("row", "removed")
    pa = next(m for m in rows if m.key == "prompt_adapter")
    cells = sum(1 for c in old.feature_keys if old.pair("prompt_adapter", c)) + \
        sum(1 for h in old.hardware_keys if old.on_hardware("prompt_adapter", h))
    assert pa.cells == cells
    assert not [m for m in d.matrix_of("cell") if "prompt_adapter" in (m.key, m.column)]
    assert "tpu" in [m.key for m in d.matrix_of("column", "added")]
    assert not [m for m in d.matrix_of("cell") if m.column == "hw:tpu"]
    text = render_release_diff("0.8.5", "0.11.0", "text")
    pa_lines = [ln for ln in text.splitlines() if "Prompt Adapter" in ln]
    assert pa_lines == [f"  feature Prompt Adapter (prompt_adapter) removed from the matrix ({cells} cells)"]
    assert len(d.matrix) < 20  # was 88 cell lines


# ---- output shape --------------------------------------------------------------------------------

def test_summary_first_and_formats_agree():
    text = render_release_diff("0.19.1", "0.20.0", "text")
    doc = json.loads(render_release_diff("0.19.1", "0.20.0", "json"))
    md = render_release_diff("0.19.1", "0.20.0", "markdown")
    first = text.splitlines()[0]
    s = doc["summary"]
    assert first.startswith(f"vLLM 0.19.1 -> 0.20.0: {s['added']} added, {s['removed']} removed, "
                            f"{s['renamed']} renamed, {s['defaults_changed']} defaults changed, "
                            f"{s['matrix_changes']} matrix changes")
    assert md.splitlines()[0] == "## " + first
    assert s["defaults_changed"] == len(doc["defaults_changed"]) == 1
    assert doc["defaults_changed"][0]["changed_in"] == [{"release": "0.20.0", "value": 0.92}]
    assert doc["serve_context"]["gpu"] == "H100 SXM5 80GB" and doc["serve_context"]["gpu_assumed"] is True
    for title in ("Flags added (8)", "Serve defaults changed (1)", "Choices changed (4)"):
        assert title in text and f"### {title}" in md
    assert render_release_diff("0.8.5", "0.11.0", "text") == render_release_diff("0.8.5", "0.11.0", "text")


def test_same_release_is_empty():
    d = diff_releases("0.18.0", "0.18.0")
    assert d.is_empty() and d.summary_line().startswith("vLLM 0.18.0 -> 0.18.0: 0 added")


# ---- --flag ----------------------------------------------------------------------------------------

def test_flag_spans_carry_the_serve_default():
    spans = [s for s in flag_spans("--max-num-seqs", serve_context(None)) if s.present]
    by_first = {s.first: s for s in spans}
    assert by_first["0.6.0"].default == 256 and by_first["0.6.0"].serve_default == 256
    assert by_first["0.8.0"].serve_default == 1024
    assert by_first["0.11.1"].default == 128 and by_first["0.11.1"].serve_default == 1024
    text = render_flag("--max-num-seqs", "text")
    assert "default 128 (was None); `vllm serve` default 1024" in text
    assert "`vllm serve` default 1024 (was 256)" in text and "H100 SXM5 80GB" in text
    doc = json.loads(render_flag("max_num_seqs", "json"))
    assert {"release": "0.8.0", "serve": {"old": 256, "new": 1024}} in doc["default_changes"]
    assert {"release": "0.11.1", "argparse": {"old": None, "new": 128}} in doc["default_changes"]


def test_flag_without_serve_default():
    doc = json.loads(render_flag("--swap-space", "json"))
    assert doc["serve_context"] is None and all(s["serve_default"] is None for s in doc["spans"])
    assert "`vllm serve` default" not in render_flag("--swap-space", "text")


def test_unknown_flag_suggests():
    assert suggest_flags("--max-num-seq")[0] == "--max-num-seqs"
    with pytest.raises(SchedReaderError) as err:
        render_flag("--max-num-seq", "text")
    assert "did you mean --max-num-seqs" in str(err.value)
