"""compat.argtable: per-release flag tables, vLLM-style flag matching, value coercion.

Expected facts were read by hand from shared/vllm/args/<ver>.json and
facts.yaml ``cli_flag_history`` (not computed from the package's data).
"""

from __future__ import annotations

import json
import math

import pytest

from sched_reader.compat import argtable as at
from sched_reader.compat.argtable import ArgTable, coerce, flag_history
from sched_reader.compat.releases import DATA_DIR, known_releases


@pytest.fixture(scope="module")
def t018():
    return ArgTable.for_release("0.18.0")


@pytest.fixture(scope="module")
def t060():
    return ArgTable.for_release("0.6.0")


# ---- the generated data ------------------------------------------------------

def test_data_files_are_compact_and_sourced():
    total = sum(p.stat().st_size for p in DATA_DIR.glob("*.json"))
    assert total < 3_000_000
    index = json.loads((DATA_DIR / "index.json").read_text())
    for rel in index["releases"]:
        assert rel["source_url"].startswith(("https://github.com/vllm-project/vllm/tree/",
                                             "https://pypi.org/project/vllm/"))
        assert rel["wheel"].startswith(f"vllm-{rel['version']}-")


def test_flag_counts_per_release():
    # args/<ver>.json lengths: 0.6.0 has 110 flags, 0.8.5 138, 0.18.0 227, 0.33.0 321
    assert len(ArgTable.for_release("0.6.0").flags()) == 110
    assert len(ArgTable.for_release("0.8.5").flags()) == 138
    assert len(ArgTable.for_release("0.18.0").flags()) == 227
    assert len(ArgTable.for_release("0.33.0").flags()) == 321


def test_for_release_accepts_version_text_and_caches():
    assert ArgTable.for_release("v0.18.0") is ArgTable.for_release("0.18.0")
    assert ArgTable.for_release("0.10.1.1").release == "0.10.1"


# ---- presence across releases ----------------------------------------------------------

def test_use_v2_block_manager_known_in_060_not_in_018(t060, t018):
    m = t060.lookup("--use-v2-block-manager")
    assert m is not None and m.record.dest == "use_v2_block_manager"
    assert t018.lookup("--use-v2-block-manager") is None
    # cli_flag_history: present 0.6.0..0.9.2, gone from 0.10.0
    assert at.first_seen("--use-v2-block-manager") == "0.6.0"
    assert at.last_seen("--use-v2-block-manager") == "0.9.2"
    assert at.removed_in("--use-v2-block-manager") == "0.10.0"


def test_num_scheduler_steps_in_085_not_018(t018):
    assert ArgTable.for_release("0.8.5").lookup("--num-scheduler-steps") is not None
    assert t018.lookup("--num-scheduler-steps") is None
    assert at.last_seen("--num-scheduler-steps") == "0.10.0"


def test_speculative_config_added_082_and_legacy_removed_083():
    assert at.first_seen("--speculative-config") == "0.8.2"
    assert at.last_seen("--speculative-model") == "0.8.2"
    assert at.removed_in("--speculative-model") == "0.8.3"
    hist = dict(flag_history("--speculative-config"))
    assert hist["0.8.1"] is None
    assert hist["0.8.2"].type == "str" and hist["0.8.3"].type == "json"
    assert len(hist) == len(known_releases())


def test_max_num_partial_prefills_absent_from_0270():
    assert ArgTable.for_release("0.26.0").lookup("--max-num-partial-prefills") is not None
    assert ArgTable.for_release("0.27.0").lookup("--max-num-partial-prefills") is None


def test_gpu_memory_utilization_default_by_release():
    assert ArgTable.for_release("0.19.1").record_for_dest("gpu_memory_utilization").default == 0.9
    assert ArgTable.for_release("0.33.0").record_for_dest("gpu_memory_utilization").default == 0.92
    assert ArgTable.for_release("0.20.0").record_for_dest("gpu_memory_utilization").default == 0.92


def test_record_fields_060_block_size_and_quantization(t060):
    bs = t060.record_for_dest("block_size")
    assert bs.flag == "--block-size" and bs.default == 16 and bs.choices == (8, 16, 32)
    q = t060.lookup("-q")
    assert q.record.flag == "--quantization" and q.via == "alias"
    assert "awq" in q.record.valid_values and q.record.group == "engine"


def test_config_defaults_and_groups(t018):
    mns = t018.record_for_dest("max_num_seqs")
    # CLI default None; SchedulerConfig.max_num_seqs = 128 (README spot check)
    assert mns.default is None and mns.has_config_default and mns.config_default == 128
    assert mns.config == "SchedulerConfig.max_num_seqs" and mns.config_group == "SchedulerConfig"
    assert t018.record_for_dest("middleware").group == "frontend"
    assert t018.record_for_dest("grpc").group == "serve"
    assert t018.record_for_dest("model_tag").positional


# ---- matching like vLLM's parser ----------------------------------------------------------

def test_underscores_are_dashes(t018):
    m = t018.lookup("--max_num_seqs")
    assert m.record.flag == "--max-num-seqs" and m.via == "underscore" and not m.negated
    assert t018.lookup("--max-num-seqs").via == "exact"
    # a --config key without dashes
    assert t018.lookup("max_num_seqs").record.dest == "max_num_seqs"
    assert t018.lookup("--max-num-seqs=64").record.dest == "max_num_seqs"


def test_unambiguous_prefix(t018):
    m = t018.lookup("--max-num-batched-token")
    assert m.record.flag == "--max-num-batched-tokens"
    assert m.via == "prefix" and m.canonical == "--max-num-batched-tokens"
    assert t018.lookup("--max_num_batched_tok").record.dest == "max_num_batched_tokens"


def test_ambiguous_prefix_lists_candidates(t018):
    m = t018.lookup("--max-num")
    assert m.record is None and m.is_ambiguous
    assert {"--max-num-seqs", "--max-num-batched-tokens"} <= set(m.ambiguous)


def test_negative_flags(t018, t060):
    m = t018.lookup("--no-enable-prefix-caching")
    assert m.record.dest == "enable_prefix_caching" and m.negated and m.via == "negative"
    assert t018.lookup("--no-enable-prefix").negated  # prefix of a negative
    # 0.6.0: --enable-prefix-caching is store_true, no --no- form
    assert t060.lookup("--no-enable-prefix-caching") is None


def test_short_aliases(t018, t060):
    assert t018.lookup("-tp").record.dest == "tensor_parallel_size"
    assert t018.lookup("-tp").via == "alias"
    assert t060.lookup("-pp").record.dest == "pipeline_parallel_size"
    # -sc for --speculative-config from 0.19.0 only
    assert t018.lookup("-sc") is None
    assert ArgTable.for_release("0.19.0").lookup("-sc").record.dest == "speculative_config"
    # --device-memory-utilization alias from 0.31.0
    assert ArgTable.for_release("0.31.0").lookup(
        "--device-memory-utilization").record.dest == "gpu_memory_utilization"
    assert ArgTable.for_release("0.30.0").lookup("--device-memory-utilization") is None


def test_optimization_flag_forms():
    # 0.8.5: -O is an alias of --compilation-config; -O3 is -O with value 3
    m = ArgTable.for_release("0.8.5").lookup("-O3")
    assert m.record.flag == "--compilation-config"
    # 0.18.0: the parser rewrites -O3 to --optimization-level 3
    assert ArgTable.for_release("0.18.0").lookup("-O3").record.flag == "--optimization-level"


def test_dotted_json_keys(t018):
    m = t018.lookup("--compilation-config.cudagraph_mode")
    assert m.record.dest == "compilation_config" and m.subkey == "cudagraph_mode"
    # a dotted name on a non-JSON flag is not a sub-key
    assert t018.lookup("--max-num-seqs.x") is None
    # one-dash alias with a key, and the list-append marker
    assert t018.lookup("-cc.mode").subkey == "mode"
    assert t018.lookup("--compilation-config.custom_ops+").subkey == "custom_ops"
    # 0.8.5 predates dotted JSON arguments (PR #18208, first in 0.9.0)
    assert ArgTable.for_release("0.8.5").lookup("--compilation-config.level") is None


def test_unknown_flag_and_suggestions(t018):
    assert t018.lookup("--max-num-sequences") is None
    assert t018.did_you_mean("--max-num-seq")[0] == "--max-num-seqs"
    assert t018.did_you_mean("--gpu-memory-utilisation") == ["--gpu-memory-utilization"]
    assert len(t018.did_you_mean("--tensor-paralel-size")) <= 3
    assert t018.did_you_mean("--zzzzzzzzzzzzzz") == []


def test_renamed_to():
    # 0.11.1..0.12.0 deprecate --cuda-graph-sizes for --cudagraph-capture-sizes (same config field)
    assert at.renamed_to("--cuda-graph-sizes") == "--cudagraph-capture-sizes"
    assert at.renamed_to("--use-v2-block-manager") is None
    assert at.renamed_to("--not-a-flag") is None


# ---- coercion ------------------------------------------------------------------

def test_coerce_numbers(t018):
    mns = t018.record_for_dest("max_num_seqs")
    assert coerce(mns, "64") == 64 and coerce(mns, 64) == 64
    for bad in ("abc", "4.5", 4.5, True, None):
        with pytest.raises(ValueError, match="--max-num-seqs"):
            coerce(mns, bad)
    with pytest.raises(ValueError, match="negative"):
        coerce(mns, -1)
    gmu = t018.record_for_dest("gpu_memory_utilization")
    assert math.isclose(coerce(gmu, "0.85"), 0.85)
    for bad in ("nan", "inf", float("nan"), "-0.5"):
        with pytest.raises(ValueError):
            coerce(gmu, bad)


def test_coerce_human_readable_max_model_len(t018):
    mml = t018.record_for_dest("max_model_len")
    assert coerce(mml, "32k") == 32000
    assert coerce(mml, "32K") == 32768
    assert coerce(mml, "auto") == -1
    with pytest.raises(ValueError):
        coerce(mml, "-7")


def test_coerce_choices_list_them(t018):
    kv = t018.record_for_dest("kv_cache_dtype")
    assert coerce(kv, "fp8") == "fp8"
    with pytest.raises(ValueError) as exc:
        coerce(kv, "fp4")
    assert "fp8_e5m2" in str(exc.value) and "auto" in str(exc.value)
    bs = ArgTable.for_release("0.6.0").record_for_dest("block_size")
    assert coerce(bs, "32") == 32
    with pytest.raises(ValueError, match="8, 16, 32"):
        coerce(bs, 48)
    # 0.12.0 --quantization has no argparse choices; vLLM still rejects unknown methods
    q = ArgTable.for_release("0.12.0").record_for_dest("quantization")
    assert coerce(q, "awq") == "awq"
    with pytest.raises(ValueError, match="compressed-tensors"):
        coerce(q, "awqq")


def test_coerce_booleans(t018):
    eager = t018.record_for_dest("enforce_eager")
    assert coerce(eager, True) is True and coerce(eager, "false") is False
    assert coerce(eager, "yes") is True and coerce(eager, None) is True
    with pytest.raises(ValueError, match="true or false"):
        coerce(eager, "maybe")


def test_coerce_json(t018):
    sc = t018.record_for_dest("speculative_config")
    as_dict = {"method": "ngram", "num_speculative_tokens": 3}
    assert coerce(sc, as_dict) is as_dict
    assert coerce(sc, '{"method": "eagle", "num_speculative_tokens": 2}') == {
        "method": "eagle", "num_speculative_tokens": 2}
    with pytest.raises(ValueError, match="JSON"):
        coerce(sc, "{method: eagle")


def test_coerce_lists(t018):
    sizes = t018.record_for_dest("cudagraph_capture_sizes")
    assert coerce(sizes, "1 2 4") == [1, 2, 4]
    assert coerce(sizes, [8, "16"]) == [8, 16]
    with pytest.raises(ValueError):
        coerce(sizes, "1 two")


@pytest.mark.parametrize("release", ["0.6.0", "0.10.1", "0.33.0"])
def test_every_option_string_finds_its_own_record(release):
    table = ArgTable.for_release(release)
    for rec in table.records():
        for opt in rec.option_strings:
            m = table.lookup(opt)
            assert m is not None and m.record is rec, opt
            assert m.negated == (opt == rec.negative_flag)
            if opt.startswith("--") and "-" in opt[2:]:
                u = table.lookup("--" + opt[2:].replace("-", "_"))
                assert u.record is rec and u.via in ("underscore", "negative", "alias")
