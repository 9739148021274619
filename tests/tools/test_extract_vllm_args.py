"""tools/extract_vllm_args.py: argparse parser -> args/<version>.json records.

Self-contained: a hand-built parser that copies vLLM's registration patterns
stands in for vLLM (not installed here); the records then go through
tools/build_vllm_data.py's loader and the package's FlagRecord/ArgTable.
Never reads /work/shared.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import load_script

ROOT = Path(__file__).resolve().parents[2]

ENGINE = "vllm.engine.arg_utils:EngineArgs.add_cli_args"
ASYNC = "vllm.engine.arg_utils:AsyncEngineArgs.add_cli_args"
FRONTEND = ("vllm.entrypoints.openai.cli_args:BaseFrontendArgs.add_cli_args "
            "(all fields of FrontendArgs)")
MAKE = "vllm.entrypoints.openai.cli_args:make_arg_parser"


def _load(name: str):
    return load_script(f"tools/{name}.py")


@pytest.fixture(scope="module")
def ex():
    return _load("extract_vllm_args")


# ---- copies of vLLM's converter helpers (vllm/engine/arg_utils.py) -------------------------------

def parse_type(return_type):
    def _parse_type(val):
        return return_type(val)
    return _parse_type


def optional_type(return_type):
    def _optional_type(val):
        if val == "" or val == "None":
            return None
        return parse_type(return_type)(val)
    return _optional_type


def nullable_str(val):
    return None if not val or val == "None" else val


class LoRAParserAction(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, list(values or []))


@dataclasses.dataclass
class SchedulerConfig:  # a config object as an argparse default (vLLM's default_factory)
    max_num_seqs: int | None = None


def _vllm_like_parser():
    """Mimics `vllm serve`: serve extras, frontend group, engine config groups."""
    top = argparse.ArgumentParser(prog="vllm")
    sub = top.add_subparsers(dest="subparser")
    p = sub.add_parser("serve")
    deprecated = []
    # make_arg_parser extras (0.10+ layout)
    p.add_argument("model_tag", type=str, nargs="?", help="The model tag to serve")
    p.add_argument("--headless", action="store_true", default=False, help="Headless mode.")
    p.add_argument("--api-server-count", "-asc", type=int, default=None, help="API servers.")
    p.add_argument("--config", help="Read CLI options from a config file.")
    # FrontendArgs.add_cli_args
    fe = p.add_argument_group(title="Frontend", description="frontend")
    fe.add_argument("--port", type=int, default=8000, help="Port number.")
    fe.add_argument("--api-key", type=optional_type(str), nargs="+", default=None, help="Keys.")
    fe.add_argument("--allowed-origins", type=json.loads, default=["*"], help="Origins.")
    fe.add_argument("--lora-modules", type=optional_type(str), action=LoRAParserAction,
                    nargs="+", default=None, help="LoRA modules.")
    fe.add_argument("--middleware", type=str, action="append", default=[], help="ASGI.")
    # EngineArgs.add_cli_args (get_kwargs era: one group per config class)
    model = p.add_argument_group(title="ModelConfig")
    model.add_argument("--tokenizer", type=nullable_str, default=None, help="Tokenizer.")
    model.add_argument("--hidden-knob", type=int, default=3, help=argparse.SUPPRESS)
    model.add_argument("-q", "--quantization", type=optional_type(str), default=None,
                       help="Quantization method.")
    par = p.add_argument_group(title="ParallelConfig")
    par.add_argument("-tp", "--tensor-parallel-size", type=int, default=1, help="TP size.")
    cache = p.add_argument_group(title="CacheConfig")
    cache.add_argument("--enable-prefix-caching", action=argparse.BooleanOptionalAction,
                       default=None, help="Prefix caching.")
    cache.add_argument("--kv-cache-dtype", type=str, choices=["auto", "fp8", "fp8_e5m2"],
                       default="auto", help="KV cache dtype.")
    cache.add_argument("--calculate-kv-scales", action=argparse.BooleanOptionalAction,
                       default=False,
                       help="Compute scales.\n\nDeprecated: This option is deprecated and "
                            "will be removed in v0.19.")
    sched = p.add_argument_group(title="SchedulerConfig")
    sched.add_argument("--max-num-seqs", type=optional_type(int), default=None,
                       help="Max sequences.")
    sched.add_argument("--scheduler-obj", type=str, default=SchedulerConfig(), help="obj")
    vc = p.add_argument_group(title="VllmConfig")
    vc.add_argument("--speculative-config", "-sc", type=optional_type(parse_type(json.loads)),
                    default=None, help="Speculative decoding configuration.")
    deprecated.append(vc.add_argument("--old-knob", type=float, default=0.5, help="Old knob."))
    # AsyncEngineArgs.add_cli_args
    p.add_argument("--enable-log-requests", action=argparse.BooleanOptionalAction,
                   default=False, help="Log requests.")
    sources = {"model_tag": MAKE, "--headless": MAKE, "--api-server-count": MAKE,
               "--config": MAKE, "--enable-log-requests": ASYNC}
    for flag in ("--port", "--api-key", "--allowed-origins", "--lora-modules", "--middleware"):
        sources[flag] = FRONTEND
    for flag in ("--tokenizer", "--hidden-knob", "--quantization", "--tensor-parallel-size",
                 "--enable-prefix-caching", "--kv-cache-dtype", "--calculate-kv-scales",
                 "--max-num-seqs", "--scheduler-obj", "--speculative-config", "--old-knob"):
        sources[flag] = ENGINE
    engine_defaults = {"tokenizer": None, "hidden_knob": 3, "quantization": None,
                       "tensor_parallel_size": 1, "enable_prefix_caching": None,
                       "kv_cache_dtype": "auto", "calculate_kv_scales": False,
                       "max_num_seqs": None, "scheduler_obj": SchedulerConfig(),
                       "speculative_config": None, "old_knob": 0.5,
                       "enable_log_requests": False,
                       "port": 1234}  # not an engine flag: must not leak into --port
    return p, sources, engine_defaults, deprecated


@pytest.fixture(scope="module")
def records(ex):
    parser, sources, engine_defaults, deprecated = _vllm_like_parser()
    extra = {"--max-num-seqs": {"config_default": 128},
             "--quantization": {"valid_values": ["awq", "fp8", "gptq"]}}
    return ex.records_from_parser(parser, engine_defaults, sources=sources,
                                  deprecated_actions=deprecated, extra=extra)


def by_flag(records):
    return {r["flag"]: r for r in records}


BASE_KEYS = {"flag", "aliases", "dest", "type", "default", "choices", "deprecated", "action",
             "nargs", "optional", "hidden", "config", "group", "source"}


def test_every_record_has_the_args_json_fields(records):
    assert [r["flag"] for r in records][:4] == ["model_tag", "--headless", "--api-server-count",
                                               "--config"]  # registration order, no --help
    assert len(records) == 21
    for r in records:
        assert BASE_KEYS <= set(r), r["flag"]
        assert set(r) - BASE_KEYS <= {"engine_default", "config_default", "negative_flag",
                                      "valid_values", "enum_values", "positional"}
    json.dumps(records)  # plain JSON


def test_serve_extras_and_positional(records):
    r = by_flag(records)
    assert r["model_tag"] == {
        "flag": "model_tag", "aliases": [], "dest": "model_tag", "type": "str", "default": None,
        "choices": None, "deprecated": None, "action": None, "nargs": "?", "optional": False,
        "hidden": False, "config": None, "group": None, "source": MAKE, "positional": True}
    assert r["--headless"] == {
        "flag": "--headless", "aliases": [], "dest": "headless", "type": "bool", "default": False,
        "choices": None, "deprecated": None, "action": "store_true", "nargs": None,
        "optional": False, "hidden": False, "config": None, "group": None, "source": MAKE}
    assert r["--api-server-count"]["aliases"] == ["-asc"]
    assert r["--api-server-count"]["type"] == "int"
    assert r["--config"]["type"] == "str" and r["--config"]["default"] is None


def test_engine_flags(records):
    r = by_flag(records)
    assert r["--tensor-parallel-size"] == {
        "flag": "--tensor-parallel-size", "aliases": ["-tp"], "dest": "tensor_parallel_size",
        "type": "int", "default": 1, "choices": None, "deprecated": None, "action": None,
        "nargs": None, "optional": False, "hidden": False,
        "config": "ParallelConfig.tensor_parallel_size", "group": "ParallelConfig",
        "source": ENGINE, "engine_default": 1}
    epc = r["--enable-prefix-caching"]
    assert (epc["type"], epc["action"], epc["negative_flag"], epc["aliases"], epc["default"]) == (
        "bool", "BooleanOptionalAction", "--no-enable-prefix-caching", [], None)
    assert "engine_default" in epc and epc["engine_default"] is None
    assert r["--kv-cache-dtype"]["choices"] == ["auto", "fp8", "fp8_e5m2"]
    assert r["--kv-cache-dtype"]["type"] == "str"
    mns = r["--max-num-seqs"]
    assert (mns["type"], mns["optional"], mns["config"], mns["config_default"]) == (
        "int", True, "SchedulerConfig.max_num_seqs", 128)
    assert r["--tokenizer"]["type"] == "str" and r["--tokenizer"]["optional"] is True
    q = r["--quantization"]
    assert (q["aliases"], q["choices"], q["valid_values"]) == (["-q"], None, ["awq", "fp8", "gptq"])
    # non-JSON defaults become {"factory": ...}
    assert r["--scheduler-obj"]["default"] == {"factory": "SchedulerConfig"}
    assert r["--scheduler-obj"]["engine_default"] == {"factory": "SchedulerConfig"}
    assert r["--enable-log-requests"]["source"] == ASYNC
    assert r["--enable-log-requests"]["engine_default"] is False


def test_json_typed_flags(records):
    r = by_flag(records)
    sc = r["--speculative-config"]
    assert (sc["type"], sc["optional"], sc["aliases"], sc["config"], sc["group"]) == (
        "json", True, ["-sc"], "VllmConfig.speculative_config", "VllmConfig")
    assert r["--allowed-origins"]["type"] == "json"
    assert r["--allowed-origins"]["default"] == ["*"]


def test_hidden_and_deprecated(records):
    r = by_flag(records)
    assert r["--hidden-knob"]["hidden"] is True and r["--hidden-knob"]["deprecated"] is None
    assert r["--calculate-kv-scales"]["deprecated"] == (
        "Deprecated: This option is deprecated and will be removed in v0.19.")
    assert r["--old-knob"]["deprecated"] == "deprecated=True"
    assert r["--port"]["deprecated"] is None


def test_frontend_flags(records):
    r = by_flag(records)
    port = r["--port"]
    assert (port["group"], port["source"], port["default"]) == ("Frontend", FRONTEND, 8000)
    assert "engine_default" not in port  # only engine-sourced records get one
    assert port["config"] is None  # "Frontend" is no *Config title; vLLM side maps it
    assert (r["--api-key"]["type"], r["--api-key"]["nargs"], r["--api-key"]["optional"]) == (
        "list[str]", "+", True)
    lora = r["--lora-modules"]
    assert (lora["action"], lora["type"], lora["nargs"], lora["optional"]) == (
        "LoRAParserAction", "str", "+", True)
    mw = r["--middleware"]
    assert (mw["action"], mw["type"], mw["default"]) == ("append", "str", [])


def test_configs_override_and_default_source(ex):
    p = argparse.ArgumentParser()
    g = p.add_argument_group("CacheConfig")
    g.add_argument("--kv-cache-dtype", default="auto")
    g.add_argument("--other", default=1, type=int)
    recs = ex.records_from_parser(p, {"kv_cache_dtype": "auto"},
                                  configs={"--kv-cache-dtype": "CacheConfig.cache_dtype"})
    r = by_flag(recs)
    assert r["--kv-cache-dtype"]["config"] == "CacheConfig.cache_dtype"
    assert r["--other"]["config"] == "CacheConfig.other"
    assert r["--kv-cache-dtype"]["source"] == MAKE
    # without `sources`, every dest found in engine_defaults gets engine_default
    assert r["--kv-cache-dtype"]["engine_default"] == "auto"
    assert "engine_default" not in r["--other"]


def test_optional_choices_drop_appended_none(ex):
    p = argparse.ArgumentParser()
    p.add_argument("--mamba-ssu-algorithm", type=optional_type(str), default=None,
                   choices=["auto", "simple", "None"])
    (rec,) = ex.records_from_parser(p, {})
    assert (rec["choices"], rec["optional"]) == (["auto", "simple"], True)


def test_extract_sets_help_argv_while_importing_vllm(ex, monkeypatch):
    seen = []
    monkeypatch.setattr(ex, "_extract", lambda: seen.append(list(sys.argv)) or ("0", []))
    before = list(sys.argv)
    ex.extract()
    assert seen[0][1:] == ["--help"] and sys.argv == before


def test_helpers(ex):
    assert ex.converter_name(optional_type(parse_type(json.loads))) == ("json", True)
    assert ex.converter_name(parse_type(int)) == ("int", False)
    assert ex.converter_name(nullable_str) == ("str", True)

    def union_dict_and_str(val):
        return val

    def parse_reasoning_parser(val):
        return val

    assert ex.converter_name(union_dict_and_str) == ("dict|str", False)
    assert ex.converter_name(parse_reasoning_parser) == ("parse_reasoning_parser", False)
    assert ex.normalize_version("0.34.0+cu128") == "0.34.0"
    assert ex.normalize_version("v0.34.1rc1") == "0.34.1"
    assert ex.jsonable(float("inf")) == {"expr": "inf"}
    assert ex.jsonable({"a": (1, 2)}) == {"a": [1, 2]}


def test_output_passes_build_vllm_data_loader(ex, records, tmp_path):
    """args/<v>.json written by the tool -> build_flags -> FlagRecord/ArgTable."""
    builder = _load("build_vllm_data")
    (tmp_path / "args").mkdir()
    (tmp_path / "args" / "9.9.0.json").write_text(ex.dumps_records(records), encoding="utf-8")
    assert json.loads((tmp_path / "args" / "9.9.0.json").read_text()) == records

    table, per_release = builder.build_flags(tmp_path, ["9.9.0"])
    assert len(per_release["9.9.0"]) == len(records)
    compact = {t["flag"]: t for t in table}
    assert compact["--tensor-parallel-size"]["group"] == "engine"
    assert compact["--tensor-parallel-size"]["config_group"] == "ParallelConfig"
    assert compact["--port"]["group"] == "frontend"
    assert compact["model_tag"]["positional"] is True
    assert compact["--max-num-seqs"]["config_default"] == 128
    assert compact["--enable-prefix-caching"]["negative_flag"] == "--no-enable-prefix-caching"

    from sched_reader.compat.argtable import ArgTable, FlagRecord

    flag_records = [FlagRecord.from_json(dict(t, id=i)) for i, t in enumerate(table)]
    arg_table = ArgTable("9.9.0", flag_records)
    assert arg_table.lookup("-tp").record.flag == "--tensor-parallel-size"
    neg = arg_table.lookup("--no-enable-prefix-caching")
    assert neg.record.dest == "enable_prefix_caching" and neg.negated
    assert arg_table.lookup("--max_num_seqs").record.config_default == 128
    assert arg_table.record_for_flag("--speculative-config").type == "json"


def test_module_imports_without_vllm():
    code = ("import sys, importlib.util; "
            "spec = importlib.util.spec_from_file_location('x', 'tools/extract_vllm_args.py'); "
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); "
            "assert callable(m.records_from_parser); print('vllm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_real_vllm_when_installed(ex):
    """Smoke test against an installed vLLM (skipped unless vllm is importable)."""
    pytest.importorskip("vllm")
    version, recs = ex.extract()
    r = by_flag(recs)
    assert "--max-num-seqs" in r and r["model_tag"].get("positional") is True
    assert r["--tensor-parallel-size"]["source"] == ENGINE
    assert "-tp" in r["--tensor-parallel-size"]["aliases"]
    assert ex.normalize_version(version)
