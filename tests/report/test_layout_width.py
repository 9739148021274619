"""Text that fits: COLUMNS=80 and piped (100 columns) runs of every command on examples/ produce no line
longer than the width, wrapped lines hang under their value (never back to column 0), the simulate
table keeps its labels, the compat matrix has a narrow layout, and each diagnose block answers first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sched_reader.report.layout import cell_width, hanging_indent, table_lines, wrap_line

ROOT = Path(__file__).resolve().parents[2]
EX = [str(ROOT / "examples" / "llama3-8b-h100.yaml"), str(ROOT / "examples" / "llama70b-fp8-tp4.yaml")]

COMMANDS = [
    ["config", *EX],
    ["diagnose", *EX],
    ["diagnose", "--explain", EX[0]],
    ["simulate", "--compare", "naive,static,continuous,chunked,vllm", "--num-prompts", "40", EX[0]],
    ["compat", "--vllm", "0.18.0"],
    ["compat", *EX],
    ["compat", "--flag", "--max-num-seqs"],
    ["compat", "--diff", "0.17.1", "0.18.0"],
    ["compat", "--list"],
    ["lint", str(ROOT / "examples")],
    ["lesson"],
    ["lesson", "--explain"],
    ["diagnose", str(ROOT / "examples" / "deploy" / "multi-model-server__docker-compose-vllm.yml")],
    ["rules"],
    ["rule", "SR201"],
    ["explain-log", str(ROOT / "tests" / "data" / "logs" / "issue-club3090-295-qwen36-27b-int4-2x3090.log")],
]


def test_help_shows_metavars_not_python_types(run_cli):
    """`--help` names values FILE, NAME, N, ..., never `<list[str]>` / `<int range>` / `<str>`."""
    import re as _re

    for cmd in ("config", "diagnose", "simulate", "compat", "lint", "lesson", "rules", "rule", "explain-log"):
        code, out, _ = run_cli(cmd, "--help")
        assert code == 0
        bad = _re.findall(r"<(?:list\[[^>]*\]|int range|float range|str|int|float|path)>", out)
        assert not bad, (cmd, bad)


def test_one_positional_name_and_one_fail_on_default(run_cli):
    for cmd in ("config", "diagnose", "simulate", "compat"):
        code, out, _ = run_cli(cmd, "--help")
        assert f"sched-reader {cmd} [OPTIONS] [FILE]..." in out, cmd
    for cmd in ("config", "diagnose", "lint"):
        code, out, _ = run_cli(cmd, "--help")
        flat = " ".join(out.split())
        assert "--fail-on" in flat and ("default: error" in flat or "default error" in flat), cmd


def test_bad_format_is_one_clean_line_with_a_suggestion(run_cli):
    code, out, err = run_cli("lint", "--format", "sarf", str(ROOT / "examples"))
    assert code == 2 and out == ""
    assert err.strip() == ("sched-reader: error: --format: 'sarf' is not one of auto, text, json, sarif, github, "
                           "junit (did you mean 'sarif'?) (see `sched-reader lint --help`)")
    assert "Value error" not in err


def test_wrap_line_hangs_under_the_value_and_keeps_every_word():
    line = ("  bottleneck   kv_cache_blocks: PagedAttention's KV budget binds first: 430,288 tokens hold 112 "
            "sequences of ~3,814 tokens, below --max-num-seqs 256; extra requests wait or are preempted")
    out = wrap_line(line, 60)
    assert all(cell_width(x) <= 60 for x in out) and len(out) >= 3
    assert all(x.startswith(" " * 15) and x[15] != " " for x in out[1:])    # under "kv_cache_blocks"
    assert " ".join(x.strip() for x in out).split() == line.split()
    # no label: two columns past the line's own indent
    assert hanging_indent("    change --kv-cache-dtype auto -> fp8: 1 byte per element", 80) == 6
    # a finding: under the rule id, after the severity column
    assert hanging_indent("  INFO    SR205 v0.yaml:6 chunked prefill", 80) == 10
    assert hanging_indent("  WARNING SR202 v0.yaml:6 PagedAttention's KV budget", 80) == 4


def test_wrap_line_cuts_a_word_longer_than_the_line():
    out = wrap_line("source: " + "x" * 150, 50)
    assert all(cell_width(x) <= 50 for x in out) and "".join(x.strip() for x in out[1:]).count("x") >= 100


def test_emoji_count_two_cells():
    assert cell_width("✅ ok") == 5 and cell_width("推理") == 4


def test_table_lines_wraps_one_column_or_gives_up():
    rows = [["a", "1", "a long cell " * 6], ["b", "22", "short"]]
    lines = table_lines(["k", "n", "text"], rows, 40)
    assert lines is not None and all(cell_width(x) <= 40 for x in lines)
    assert table_lines(["k", "n", "text"], [["x" * 30, "y" * 30, "z"]], 40) is None


@pytest.mark.parametrize("width", [80, None])
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(x if "/" not in x else Path(x).name for x in a))
def test_every_command_fits_the_width(run_cli, monkeypatch, argv, width):
    if width is None:
        monkeypatch.delenv("COLUMNS", raising=False)   # piped (capsys is not a TTY): 100 columns
    else:
        monkeypatch.setenv("COLUMNS", str(width))
    code, out, err = run_cli(*argv)
    assert code in (0, 1), err
    limit = width or 100
    long = [ln for ln in out.splitlines() if cell_width(ln) > limit]
    assert not long, long[:3]
    assert out.strip()


def test_wrapped_lines_never_fall_back_to_column_zero(run_cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli("diagnose", *EX)
    lines = out.splitlines()
    for prev, ln in zip(lines, lines[1:]):
        if ln and not ln.startswith(" ") and not ln.startswith(("engine ", "summary of ")):
            # a new block (summary rows) may start at column 0; a continuation never does
            assert prev == "" or prev.startswith(("summary of", "engine", "-")) or ln.split()[0] in (
                "llama3-8b-h100", "llama70b-fp8-tp4", "llama3-8b-h100:", "llama70b-fp8-tp4:"), (prev, ln)


def test_each_diagnose_block_opens_with_its_verdict_and_runs_end_with_a_summary(run_cli):
    code, out, _ = run_cli("diagnose", *EX)
    lines = out.splitlines()
    starts = [i for i, ln in enumerate(lines) if re.match(r"engine \S+  \(", ln)]
    assert len(starts) == 2
    for i in starts:
        assert lines[i + 1].startswith("  verdict      ")
    tail = out[out.index("summary of 2 engines"):]
    assert "llama3-8b-h100" in tail and "llama70b-fp8-tp4" in tail and "first change" in tail


def test_simulate_table_keeps_its_labels_at_80_columns(run_cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli("simulate", "--compare", "naive,static,continuous,chunked,vllm", "--num-prompts", "30",
                           EX[0])
    assert code == 0
    labels = ["max-num-seqs", "token budget", "request throughput", "output throughput", "mean TTFT", "p99 ITL",
              "peak KV use", "preemptions"]
    for lab in labels:
        rows = [ln for ln in out.splitlines() if ln.startswith(lab + " ")]
        assert len(rows) == 2, lab              # the five policies split into two groups, labels repeated
    heads = [ln for ln in out.splitlines() if ln.startswith("metric ")]
    assert set(" ".join(heads).split()) >= {"NAIVE", "STATIC", "CONTINUOUS", "CHUNKED", "VLLM"}


def test_compat_matrix_narrow_and_wide(run_cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    _, narrow, _ = run_cli("compat", "--vllm", "0.18.0")
    assert "┌" not in narrow and re.search(r"^SD\s+❌ LoRA", narrow, re.M)
    monkeypatch.setenv("COLUMNS", "250")
    _, wide, _ = run_cli("compat", "--vllm", "0.18.0")
    assert "┌" in wide


def test_roofline_words_agree_with_their_numbers(run_cli):
    """'memory-bound' quotes a term below its ridge, 'compute-bound' one above (issue: '245.0 vs 184.6')."""
    code, out, _ = run_cli("diagnose", *EX, "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct",
                           "--max-num-seqs", "512")
    lines = [ln for ln in out.splitlines() if re.match(r"  (prefill|decode)\s+\w+-bound", ln)]
    assert len(lines) >= 6
    for ln in lines:
        m = re.search(r"(\w+)-bound: .* at ([\d,.]+) FLOP/B, (below|above) its ridge ([\d,.]+) FLOP/B", ln)
        assert m, ln
        a, r = float(m.group(2).replace(",", "")), float(m.group(4).replace(",", ""))
        assert (m.group(1) == "memory") == (a < r) == (m.group(3) == "below"), ln
