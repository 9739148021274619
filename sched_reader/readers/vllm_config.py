"""vLLM ``--config`` YAML files: a flat mapping whose keys are long flag names without ``--``.

Keys are recorded as ``--<key>`` exactly as written (dashes or underscores); values keep their YAML type
(``false`` stays ``False``, a JSON string stays a string, a mapping stays a dict) because how vLLM turns
them into arguments depends on the release (facts.yaml ``config_file``) and is applied by the spec
builder. ``model:`` is the model (used by ``vllm serve`` only when no positional model is given).
"""

from __future__ import annotations

import re
from pathlib import Path

from sched_reader.errors import InputError
from sched_reader.readers.raw import Origin, RawEngine, Setting
from sched_reader.readers.source import read_text
from sched_reader.readers.yaml_tree import YamlDoc, YMap, load_documents

_FLAG_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")


def looks_like_vllm_config(root: object) -> bool:
    """A mapping whose keys all look like long flag names (``max-model-len``, ``tensor_parallel_size``)."""
    return isinstance(root, dict) and bool(root) and all(
        isinstance(k, str) and _FLAG_KEY.match(k) for k in root)


def config_settings(root: YMap, file: str, *, line_offset: int = 0) -> tuple[Setting | None, list[Setting], list[str]]:
    """(model, settings, notes) of a vLLM config mapping. ``line_offset`` shifts YAML lines (a config
    written by a here-document inside a script starts at a later line of that script)."""
    model: Setting | None = None
    settings: list[Setting] = []
    notes: list[str] = []
    for key, value in root.items():
        line = root.kline(key)
        line = None if line is None else line + line_offset
        origin = Origin(file=file, line=line, source="config-file", key=str(key))
        if not isinstance(key, str) or not _FLAG_KEY.match(key):
            raise InputError("a vLLM --config key must be a long flag name such as max-model-len",
                             file=file, line=line, key=str(key),
                             hint="write the flag without the leading dashes, e.g. 'max-num-seqs: 256'")
        if key == "model":
            model = Setting(flag="--model", value=value, origin=origin)
            continue
        if value is None:
            notes.append(f"{file}:{line}: '{key}:' has no value (YAML null); recorded as a bare flag")
        settings.append(Setting(flag="--" + key, value=_plain(value), origin=origin))
    return model, settings, notes


def _plain(value: object) -> object:
    """YMap/YList -> plain dict/list (verbatim values)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def read_vllm_config(docs: list[YamlDoc], file: str, name: str) -> list[RawEngine]:
    """One engine from a vLLM ``--config`` YAML file."""
    root = docs[0].root
    model, settings, notes = config_settings(root, file)
    for key, line in docs[0].duplicates:
        notes.append(f"{file}:{line}: key '{key}' is set again later in the file; YAML keeps the later value")
    notes.insert(0, "vLLM --config file: the command line that uses it may override these values")
    return [RawEngine(name=name, file=file, line=root.line, model=model, settings=settings, notes=notes)]


def load_config_file(path: Path, display: str) -> YMap:
    """Read a ``--config`` file named by a command line; InputError if it is not a YAML mapping."""
    text = read_text(path, display=display)
    docs = load_documents(text, display)
    if not docs or not isinstance(docs[0].root, dict):
        raise InputError("a vLLM --config file must be a YAML mapping of flag: value", file=display,
                         hint="e.g. 'max-model-len: 8192'")
    return docs[0].root
