"""sched-reader's own file (``sched_reader: 1``): one engine plus the hardware, release and workload to
predict for. Format documented in ``OWN_FORMAT.md`` next to this module."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from sched_reader.errors import InputError
from sched_reader.readers.cmdline import read_script
from sched_reader.readers.raw import Hint, Origin, RawEngine, Setting
from sched_reader.readers.vllm_config import config_settings, load_config_file, _plain
from sched_reader.readers.yaml_tree import YamlDoc, YMap

FORMAT_VERSION = 1
TOP_KEYS = {"sched_reader", "name", "vllm_version", "hardware", "workload", "role", "serve", "args", "config",
            "model", "deploy"}
SOURCES = ("serve", "args", "config", "deploy")


def read_own(docs: list[YamlDoc], file: str, stem: str, base_dir: Path | None, *,
             read_path: Callable[[Path], list[RawEngine]]) -> list[RawEngine]:
    """The engine(s) of a sched-reader file; ``read_path`` reads the deploy file a ``deploy:`` key names."""
    root: YMap = docs[0].root
    if root.get("sched_reader") != FORMAT_VERSION:
        raise InputError(f"unsupported sched-reader file version {root.get('sched_reader')!r}", file=file,
                         line=root.kline("sched_reader"), key="sched_reader", hint="write 'sched_reader: 1'")
    for key in root:
        if key not in TOP_KEYS:
            raise InputError("unknown key in a sched-reader file", file=file, line=root.kline(key), key=str(key),
                             hint=f"known keys: {', '.join(sorted(TOP_KEYS))}")
    given = [k for k in SOURCES if k in root]
    if len(given) != 1:
        raise InputError(f"give exactly one of {', '.join(SOURCES)} (found {', '.join(given) or 'none'})",
                         file=file, line=root.line, hint="e.g. serve: \"vllm serve MODEL --max-model-len 8192\"")
    src = given[0]
    name = str(root.get("name", stem))
    if src == "serve":
        engines = _serve(root, file, name, base_dir)
    elif src == "args":
        engines = [_args(root, file, name)]
    elif src == "config":
        engines = [_config(root, file, name, base_dir)]
    else:
        engines = _deploy(root, file, base_dir, read_path)
    for e in engines:
        _hints(e, root, file)
    return engines


def _text(root: YMap, key: str, file: str) -> str:
    value = root[key]
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"'{key}' must be a non-empty string", file=file, line=root.kline(key), key=key)
    return value


def _resolve(root: YMap, key: str, file: str, base_dir: Path | None) -> Path:
    path = Path(_text(root, key, file))
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    if not path.is_file():
        raise InputError(f"file not found: {path}", file=file, line=root.kline(key), key=key,
                         hint="paths are relative to the sched-reader file's folder")
    return path


def _serve(root: YMap, file: str, name: str, base_dir: Path | None) -> list[RawEngine]:
    text = _text(root, "serve", file)
    if root.styles.get("serve") == ">":
        text = text.replace("\n", " ")
    engines = read_script(text, file, name=name, base_line=root.vline("serve") or 1, base_dir=base_dir)
    if len(engines) != 1:
        raise InputError(f"'serve' must hold one vLLM server command, found {len(engines)}", file=file,
                         line=root.kline("serve"), key="serve",
                         hint="e.g. serve: \"vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192\"")
    engines[0].name = name
    if "model" in root:
        raise InputError("'model' goes inside the serve command line", file=file, line=root.kline("model"), key="model")
    return engines


def _args(root: YMap, file: str, name: str) -> RawEngine:
    args = root["args"]
    if not isinstance(args, YMap):
        raise InputError("'args' must be a mapping of vLLM flag: value", file=file, line=root.kline("args"),
                         key="args", hint="e.g. args: {max-model-len: 8192, max-num-seqs: 64}")
    model, settings, notes = config_settings(args, file)
    e = RawEngine(name=name, file=file, line=root.kline("args"), model=model, settings=settings, notes=notes)
    _top_model(e, root, file)
    return e


def _config(root: YMap, file: str, name: str, base_dir: Path | None) -> RawEngine:
    path = _resolve(root, "config", file, base_dir)
    cfg = load_config_file(path, str(path))
    model, settings, notes = config_settings(cfg, str(path))
    e = RawEngine(name=name, file=file, line=root.kline("config"), model=model, settings=settings, notes=notes)
    e.notes.append(f"vLLM --config file {path}")
    _top_model(e, root, file)
    return e


def _top_model(e: RawEngine, root: YMap, file: str) -> None:
    if "model" in root:
        if e.model is not None:
            e.notes.append(f"model {e.model.value} from the args/config is replaced by model: {root['model']}")
        e.model = Setting(flag="--model", value=str(root["model"]), origin=Origin(
            file=file, line=root.kline("model"), source="sched-reader", key="model"))


def _deploy(root: YMap, file: str, base_dir: Path | None,
            read_path: Callable[[Path], list[RawEngine]]) -> list[RawEngine]:
    path = _resolve(root, "deploy", file, base_dir)
    if path.resolve() == Path(file).resolve():
        raise InputError("'deploy' points at this file itself", file=file, line=root.kline("deploy"), key="deploy")
    engines = read_path(path)
    for e in engines:
        e.notes.append(f"read from {path} (named by {file}:{root.kline('deploy')})")
    return engines


def _hints(e: RawEngine, root: YMap, file: str) -> None:
    def origin(m: YMap, key: str, path: str) -> Origin:
        return Origin(file=file, line=m.kline(key), source="sched-reader", key=path)

    if "vllm_version" in root:
        v = root["vllm_version"]
        # a float keeps its type so the spec builder can say "quote it" (YAML reads 0.10 as 0.1)
        e.vllm_version = Hint(value=v if isinstance(v, float) else str(v),
                              origin=origin(root, "vllm_version", "vllm_version"))
    hw = root.get("hardware")
    if hw is not None:
        if not isinstance(hw, YMap):
            raise InputError("'hardware' must be a mapping {gpu, count}", file=file, line=root.kline("hardware"),
                             key="hardware", hint="e.g. hardware: {gpu: h100-sxm5-80gb, count: 1}")
        for key in hw:
            if key not in ("gpu", "count"):
                raise InputError("unknown key under hardware", file=file, line=hw.kline(key), key=f"hardware.{key}",
                                 hint="hardware takes gpu and count")
        if "gpu" in hw:
            e.gpu_type = Hint(value=str(hw["gpu"]), origin=origin(hw, "gpu", "hardware.gpu"))
        if "count" in hw:
            count = hw["count"]
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise InputError("hardware.count must be a positive integer (GPUs per engine)", file=file,
                                 line=hw.kline("count"), key="hardware.count")
            e.gpu_count = Hint(value=count, origin=origin(hw, "count", "hardware.count"))
    if "workload" in root:
        wl = root["workload"]
        if not isinstance(wl, dict):
            raise InputError("'workload' must be a mapping", file=file, line=root.kline("workload"), key="workload")
        e.workload = _plain(wl)
    if "role" in root:
        e.role = str(root["role"])
