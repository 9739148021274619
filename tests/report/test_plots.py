"""Pictures: each plot renders (PNG and SVG) and is non-trivial (size, share of non-blank pixels); without
matplotlib, `--plot` is one clear error line saying how to install the extra."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EX = str(ROOT / "examples" / "llama3-8b-h100.yaml")
EX2 = str(ROOT / "examples" / "llama70b-fp8-tp4.yaml")


def _ink(png: Path) -> float:
    """Share of pixels that are not (near) white."""
    import matplotlib.image as mpimg
    import numpy as np

    img = mpimg.imread(png)
    rgb = img[..., :3]
    return float((rgb.min(axis=-1) < 0.9).mean()) if np.issubdtype(rgb.dtype, np.floating) else \
        float((rgb.min(axis=-1) < 230).mean())


def _check_png(path: Path, min_kb: int = 20, min_ink: float = 0.05) -> None:
    assert path.is_file() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > min_kb * 1024
    assert _ink(path) > min_ink


def test_diagnose_plot_memory_and_roofline(run_cli, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "d.png"
    code, _, err = run_cli("diagnose", "--plot", str(out), EX, EX2)
    assert code in (0, 1), err
    _check_png(out)
    import matplotlib.image as mpimg

    h, w = mpimg.imread(out).shape[:2]
    assert h > w * 0.5          # two engines: two rows of panels


def test_diagnose_plot_svg(run_cli, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "d.svg"
    code, _, err = run_cli("diagnose", "--plot", str(out), EX)
    assert code in (0, 1), err
    text = out.read_text()
    assert "<svg" in text and "roofline" in text and "KV cache" in text


def test_roofline_points_sit_under_the_roof(run_cli):
    """The operating points drawn are below the roof they are drawn under (achieved <= attainable)."""
    import json

    from sched_reader.report.plots import operating_point, roof_parameters

    code, out, _ = run_cli("diagnose", "--format", "json", EX, EX2)
    for e in json.loads(out)["engines"]:
        for phase in ("prefill", "decode"):
            ph = e["performance"]["roofline"][phase]
            peak, bw = roof_parameters(ph)
            x, y = operating_point(ph)
            assert y <= min(peak, bw * x) * 1.001, (e["name"], phase)


def test_simulate_plot_one_row_per_policy_and_timeseries_csv(run_cli, tmp_path):
    pytest.importorskip("matplotlib")
    out, ts = tmp_path / "s.png", tmp_path / "ts.csv"
    code, _, err = run_cli("simulate", "--compare", "continuous,vllm", "--num-prompts", "60", "--request-rate", "20",
                           "--plot", str(out), "--timeseries", str(ts), EX)
    assert code == 0, err
    _check_png(out)
    rows = list(csv.DictReader(ts.open()))
    assert {r["policy"] for r in rows} == {"continuous", "vllm"}
    t = [float(r["t_s"]) for r in rows if r["policy"] == "vllm"]
    assert t == sorted(t) and max(int(r["batch_size"]) for r in rows) >= 1
    assert all(0 <= int(r["kv_blocks"]) <= int(r["kv_blocks_total"]) for r in rows)


def test_frontier_plot_for_tune(tmp_path):
    pytest.importorskip("matplotlib")
    from sched_reader.report.plots import pareto_front, plot_frontier

    pts = [{"label": "a", "output_throughput": 1000, "p99_itl_ms": 20},
           {"label": "b", "output_throughput": 2000, "p99_itl_ms": 40},
           {"label": "c", "output_throughput": 1500, "p99_itl_ms": 50},     # beaten by b
           {"label": "d", "output_throughput": 3000, "p99_itl_ms": 90},
           {"label": "e", "output_throughput": 900, "p99_itl_ms": 25}]      # beaten by a
    assert pareto_front(pts, "output_throughput", "p99_itl_ms") == [0, 1, 3]
    out = tmp_path / "f.png"
    assert plot_frontier(pts, out) == [0, 1, 3]
    _check_png(out, min_kb=10, min_ink=0.02)


def test_without_matplotlib_plot_says_how_to_install(run_cli, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)       # find_spec -> None: "not installed"
    code, out, err = run_cli("diagnose", "--plot", str(tmp_path / "x.png"), EX)
    assert code == 2 and out == ""
    assert "pip install 'sched-reader[plot]'" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.png").exists()


def test_plot_rejects_an_unknown_format_before_any_work(run_cli, tmp_path):
    code, _, err = run_cli("simulate", "--plot", str(tmp_path / "x.jpg"), EX)
    assert code == 2 and ".png or .svg" in err


def test_tune_plot_draws_the_sweep_and_its_frontier(run_cli, tmp_path):
    """`tune --plot`: the image is written beside the normal output, and its frontier is the tune result's own
    (a point with lower throughput per GPU and higher p99 TPOT than another is never on it)."""
    pytest.importorskip("matplotlib")
    import json

    from sched_reader.report.plots import plot_tune

    out = tmp_path / "t.png"
    code, text, err = run_cli("tune", "--axis", "max-num-seqs=8,64,256", "--axis", "max-num-batched-tokens=2048",
                              "--axis", "gpu-memory-utilization=0.9", "--axis", "kv-cache-dtype=auto",
                              "--axis", "tensor-parallel-size=1", "--num-prompts", "200", "--executor", "serial",
                              "--goodput", "tpot:60", "--plot", str(out), "--format", "json", EX)
    assert code == 0, err
    _check_png(out, min_kb=10, min_ink=0.02)
    tune = json.loads(text)["tune"]
    front = plot_tune(tune, tmp_path / "again.svg")
    pts = [p for p in tune["points"] if p["starts"]]
    assert len(pts) == 3 and 1 <= len(front) <= 3
    y = [p["metrics"]["p99_tpot_ms"] for p in pts]
    x = [p["throughput_per_gpu"] for p in pts]
    for i in front:
        assert not any(x[j] >= x[i] and y[j] <= y[i] and (x[j], y[j]) != (x[i], y[i]) for j in range(3))


def test_tune_plot_rejects_a_bad_format_before_the_sweep(run_cli, tmp_path):
    code, out, err = run_cli("tune", "--plot", str(tmp_path / "t.gif"), EX)
    assert code == 2 and out == "" and ".png or .svg" in err
