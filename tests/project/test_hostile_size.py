"""Work that grows with the input (unknown keys, shell words, quoted lines, YAML nodes, engines) is
near-linear or refused at a stated bound (issue 16: 40k unknown keys took 80 s, a 1 MB shell word
18-39 s, 100k compose services 155 s in config and 394 s in lint)."""

from __future__ import annotations

from hostile import M, bounded, one_line_error


def test_did_you_mean_runs_at_most_max_suggestions_times(run_cli, tmp_path, monkeypatch):
    from sched_reader.compat.argtable import ArgTable
    from sched_reader.limits import MAX_SUGGESTIONS

    calls = []
    real = ArgTable.did_you_mean
    monkeypatch.setattr(ArgTable, "did_you_mean", lambda self, flag, n=3: calls.append(flag) or real(self, flag, n))
    p = tmp_path / "c.yaml"
    p.write_text(f"model: {M}\n" + "".join(f"unknown-key-{i}: 1\n" for i in range(300)))
    code, out, err = run_cli("config", "--vllm", "0.19.0", str(p))
    assert code == 1 and "unknown flag --unknown-key-299" in out, err
    assert len(calls) <= MAX_SUGGESTIONS


def test_flag_history_of_an_unknown_flag_asks_no_release_table(monkeypatch):
    from sched_reader.compat import argtable

    argtable._every_option()
    monkeypatch.setattr(argtable.ArgTable, "for_release", lambda *a: (_ for _ in ()).throw(AssertionError))
    assert argtable.first_seen("--no-such-flag-anywhere-xyz") is None


def test_a_one_megabyte_shell_word_is_refused_fast(run_cli, tmp_path):
    p = tmp_path / "serve.sh"
    p.write_text(f"vllm serve {M} --served-model-name " + "a" * 1_000_000 + "\n")
    with bounded(10):
        one_line_error(*run_cli("config", str(p))[::2], f"{p}:1:", "65,536-character limit")


def test_an_unclosed_quote_over_5000_lines_is_linear(run_cli, tmp_path):
    p = tmp_path / "serve.sh"
    p.write_text(f"vllm serve {M} --served-model-name 'x\n" + "--max-num-seqs 8\n" * 5000)
    with bounded(10):
        code, _, err = run_cli("config", str(p))
    assert code in (0, 1, 2) and "internal error" not in err, err


def _compose(n: int) -> str:
    return "services:\n" + "".join(
        f"  s{i}:\n    image: vllm/vllm-openai:v0.10.0\n    command: --model {M}\n" for i in range(n))


def test_twenty_thousand_compose_services_refused_before_building_nodes(run_cli, tmp_path):
    p = tmp_path / "docker-compose.yml"
    p.write_text(_compose(20_000))
    with bounded(10):
        one_line_error(*run_cli("config", str(p))[::2], "docker-compose.yml:", "100,000 nodes")
    with bounded(10):
        code, out, err = run_cli("lint", str(p))
    assert code == 1 and "SR001" in out and "100,000 nodes" in out, out + err  # lint: a file finding


def test_more_engines_than_the_bound_refused(run_cli, tmp_path):
    from sched_reader.limits import MAX_ENGINES

    p = tmp_path / "docker-compose.yml"
    p.write_text(_compose(MAX_ENGINES + 1))
    with bounded(20):
        one_line_error(*run_cli("config", str(p))[::2], "docker-compose.yml:", f"{MAX_ENGINES}-engine limit")
