"""YAML values that Python or PyYAML cannot construct or nest (issue 16): one line with file:line.

Each case failed before its fix (internal error, a Python exception name, a hang or memory exhaustion)."""

from __future__ import annotations


from hostile import M, one_line_error


BIG = "9" * 5000


def test_max_num_seqs_of_5000_digits_in_yaml(run_cli, tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(f"model: {M}\nmax_num_seqs: {BIG}\n")
    one_line_error(*run_cli("config", str(p))[::2], f"{p}:2:", "5,000 characters")


def test_int_tag_on_text_has_a_line(run_cli, tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(f"model: {M}\nmax_num_seqs: !!int x\n")
    one_line_error(*run_cli("config", str(p))[::2], f"{p}:2:", "invalid int value 'x'")


def test_block_yaml_nested_200_deep_names_the_bound(run_cli, tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("model: m\nx:\n" + "".join("  " * i + "- \n" for i in range(1, 200)))
    one_line_error(*run_cli("config", str(p))[::2], "nested more than 64 levels")
