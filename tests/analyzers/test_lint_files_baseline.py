"""Globs, .gitignore, the parallel runner and fingerprints: the pieces of the lint gate, unit by unit."""

from __future__ import annotations

from pathlib import Path

import pytest

from sched_reader.analyzers import lint_parallel
from sched_reader.analyzers.baseline import fingerprints
from sched_reader.analyzers.lint_files import FileFilter, GitIgnore, matches_glob, walk
from sched_reader.findings import Finding


@pytest.mark.parametrize("path,glob,hit", [
    ("build/a.yaml", "build", True),            # a bare name matches a directory at any depth ...
    ("x/build/a.yaml", "build", True),
    ("builder/a.yaml", "build", False),         # ... as a whole segment only
    ("deploy/a.yaml", "deploy/**", True),
    ("x/deploy/a.yaml", "deploy/**", False),    # a glob with a slash is anchored at the config's directory
    ("x/deploy/a.yaml", "**/deploy/**", True),
    ("a.tmpl.yaml", "*.tmpl.yaml", True),
    ("x/y/a.tmpl.yaml", "*.tmpl.yaml", True),
    ("a.yaml", "?.yaml", True),
    ("ab.yaml", "?.yaml", False),
    ("v1/a.yaml", "v[0-9]/*.yaml", True),
    ("deploy/a.yaml", "/deploy", True),
    ("legacy/sub/x.sh", "legacy/*", True),      # a matched directory excludes what is below it
])
def test_glob_semantics(path, glob, hit):
    assert matches_glob(path, glob) is hit


def test_gitignore_rules(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("# comment\n*.gen.yaml\n!keep.gen.yaml\n/top.yaml\nout/\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("local.sh\n")
    gi = GitIgnore(tmp_path)
    assert gi.ignored(tmp_path / "a.gen.yaml", False) and gi.ignored(tmp_path / "sub" / "b.gen.yaml", False)
    assert not gi.ignored(tmp_path / "keep.gen.yaml", False)  # negation
    assert gi.ignored(tmp_path / "top.yaml", False) and not gi.ignored(tmp_path / "sub" / "top.yaml", False)
    assert gi.ignored(tmp_path / "out", True) and not gi.ignored(tmp_path / "out", False)  # dir-only pattern
    assert gi.ignored(tmp_path / "sub" / "local.sh", False) and not gi.ignored(tmp_path / "local.sh", False)


def test_walk_reports_what_it_excluded(tmp_path):
    for name in ("a.yaml", "b.sh", "c.txt", ".hidden/d.yaml", "build/e.yaml", "keep/f.yml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x: 1\n")
    files, skipped = walk(str(tmp_path), FileFilter(root=str(tmp_path), excludes=("build",)))
    assert [Path(f).relative_to(tmp_path).as_posix() for f in files] == ["a.yaml", "b.sh", "keep/f.yml"]
    assert [(Path(p).name, why) for p, why in skipped] == [("build", "excluded by 'build'")]


def _square(x: int) -> int:
    return x * x


def test_parallel_map_keeps_input_order_and_reports_progress(monkeypatch):
    monkeypatch.setattr(lint_parallel, "available_cpus", lambda: 2)
    seen: list[int] = []
    items = list(range(60))
    assert lint_parallel.effective_jobs(0, len(items)) == 2
    assert lint_parallel.effective_jobs(0, 5) == 1  # small runs stay in-process
    out = lint_parallel.map_ordered(_square, items, 0, progress=seen.append)
    assert out == [x * x for x in items] and seen == list(range(1, 61))


def test_fingerprints_ignore_line_numbers_but_count_repeats(tmp_path):
    f = tmp_path / "a.sh"
    f.write_text("vllm serve m --x\n\nvllm serve m --x\n")
    a = Finding(rule="SR101", severity="error", message="unknown flag --x", file=str(f), line=1, key="--x")
    b = a.model_copy(update={"line": 3})
    fa = fingerprints([a, b])
    assert fa[a] != fa[b]  # same content twice in a file: two findings, first and second occurrence
    f.write_text("# new first line\nvllm serve m --x\n\nvllm serve m --x\n")
    moved = fingerprints([a.model_copy(update={"line": 2}), b.model_copy(update={"line": 4})])
    assert sorted(moved.values()) == sorted(fa.values())


def test_parallel_map_falls_back_to_one_process_when_workers_cannot_start(monkeypatch):
    import concurrent.futures

    class NoPool:
        def __init__(self, *a, **k):
            raise OSError("no /dev/shm")

    monkeypatch.setattr(lint_parallel, "available_cpus", lambda: 2)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", NoPool)
    assert lint_parallel.map_ordered(_square, list(range(40)), 2) == [x * x for x in range(40)]
