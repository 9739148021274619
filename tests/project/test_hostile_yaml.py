"""YAML values that Python or PyYAML cannot construct or nest (issue 16): one line with file:line.

Each case failed before its fix (internal error, a Python exception name, a hang or memory exhaustion)."""

from __future__ import annotations


from hostile import M, SERVE, one_line_error


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


def test_every_bad_value_of_a_file_in_one_run(run_cli, tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("model: meta-llama/Llama-3.1-8B-Instruct\nmax-num-seqs: abc\nmax-model-len: xyz\n"
                 "tensor-parallel-size: 99999\n")
    # in a deploy file each bad value is an SR103 error finding of its engine (main's policy since the
    # readers merge: never an input error that hides the rest); every one of them in one run, in file order
    code, out, _ = run_cli("lint", str(p))
    assert code == 1 and [ln.split(" ")[0] for ln in out.splitlines() if "SR103" in ln] == [
        f"{p}:2:", f"{p}:3:", f"{p}:4:"]
    assert "4,096" in out  # the tensor-parallel bound of limits.MAX_PARALLEL


def test_every_bad_value_of_a_command_line_in_one_error(run_cli):
    # a command line after `--` is the user's own typing: an input error, listing every bad value
    code, _, err = run_cli("config", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct",
                           "--max-num-seqs", "abc", "--max-model-len", "xyz")
    line = one_line_error(code, err, "--max-num-seqs", "(and 1 more:", "--max-model-len")
    assert line.index("--max-num-seqs") < line.index("--max-model-len")


def test_every_bad_trace_line_in_one_run(run_cli, tmp_path):
    (tmp_path / "t.jsonl").write_text('{"prompt_len": 0, "output_len": 5}\n{"prompt_len": 5, "output_len": 5}\n'
                                      '{"prompt_len": 5}\n')
    (tmp_path / "w.yaml").write_text("trace: t.jsonl\n")
    one_line_error(*run_cli("simulate", "--workload", str(tmp_path / "w.yaml"), *SERVE)[::2],
                   "t.jsonl:1:", "(and 1 more:", "t.jsonl:3:")
