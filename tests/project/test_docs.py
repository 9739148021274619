"""Docs that cannot drift: every command in a `doc-check` block of README.md and the skill document runs
as written from the repository root (against the shipped examples/), and the output they quote is what
the tool prints (tools/doc_check.py; `--update` rewrites it). The skill document loads as an agent skill."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SKILL = ROOT / "outputs" / "skill-vllm-scheduler-reader.md"


def _doc_check():
    return load_script("tools/doc_check.py")


dc = _doc_check()


@pytest.mark.parametrize("doc", [README, SKILL], ids=["README", "skill"])
def test_doc_commands_run_and_quote_the_tool(doc):
    cmds = dc.parse(doc)
    assert len(cmds) >= 6                               # the marked blocks are found
    assert any(c.expected for c in cmds)                # and some quote output
    assert dc.check([doc]) == []


def test_a_drifted_figure_is_caught(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_text("```text doc-check\n$ sched-reader diagnose examples/llama3-8b-h100.yaml\n...\n"
                   "  KV cache     452,353 tokens in 28,272 blocks of 16 (131,072 bytes/token); max concurrency at\n"
                   "```\n")
    [problem] = dc.check([doc])
    assert "452,353" in problem and "d.md:2" in problem


def test_a_command_that_cannot_run_is_caught(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_text("```bash doc-check\nsched-reader diagnose deploy/missing.yaml   # not shipped\n```\n")
    [problem] = dc.check([doc])
    assert "exited 2" in problem


def test_unmarked_blocks_are_left_alone(tmp_path):
    """Other sections (added later, not marked) do not break the check."""
    doc = tmp_path / "d.md"
    doc.write_text("```bash\nsched-reader diagnose nowhere.yaml\n```\n\n```text\n$ sched-reader lesson\nnot it\n```\n")
    assert dc.parse(doc) == [] and dc.check([doc]) == []


def test_update_rewrites_expected_output(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_text("```text doc-check\n$ sched-reader compat --list\nstale line\n```\n")
    assert dc.update([doc]) == 1
    assert dc.check([doc]) == [] and "stale line" not in doc.read_text()


def test_skill_document_has_front_matter_and_states_its_release():
    text = SKILL.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["name"] == "vllm-scheduler-reader" and len(meta["description"]) > 80
    assert "0.18.0" in meta["description"]
    checklist = text[text.index("## 6. Checklist"):]
    cmds = [ln for ln in checklist.splitlines() if ln.startswith("sched-reader ")]
    assert cmds and all("--vllm 0.18.0" in c for c in cmds)


def test_docs_reference_only_shipped_files():
    """Every examples/ path a doc mentions exists."""
    import re

    for doc in (README, SKILL):
        for path in set(re.findall(r"examples/[\w./-]+\w", doc.read_text(encoding="utf-8"))):
            assert (ROOT / path).exists(), f"{doc.name}: {path}"
