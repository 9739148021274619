"""What the CLI process does not pay for at start-up (cli/entry.py, data_model.py, simulator.metrics): each
test names a module or a call whose cost was measured and removed, and fails when it comes back."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import sched_reader
from sched_reader.data_model import DataModel

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import io, contextlib, sys
from sched_reader.cli.entry import main
try:
    with contextlib.redirect_stdout(io.StringIO()):
        main(sys.argv[1:])
except SystemExit:
    pass
print(sorted(m for m in ("importlib.metadata", "numpy.ma") if m in sys.modules))
print(type(sys.modules.get("pydantic.plugin._loader")).__name__)
"""


def _probe(*args: str, env: dict[str, str] | None = None) -> list[str]:
    import os

    e = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"} | (env or {})
    r = subprocess.run([sys.executable, "-c", _PROBE, *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=300, env=e)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()[-2:]


def test_diagnose_imports_neither_package_metadata_nor_numpy_ma():
    loaded, loader = _probe("diagnose", "examples/llama3-8b-h100.yaml")
    assert loaded == "[]"
    assert loader == "_LoaderStandIn"


def test_a_user_who_enables_pydantic_plugins_gets_the_real_loader():
    """PYDANTIC_DISABLE_PLUGINS set by the user to a plugin name (not "all"): pydantic's own loader runs."""
    loaded, loader = _probe("config", "examples/llama3-8b-h100.yaml", env={"PYDANTIC_DISABLE_PLUGINS": "x"})
    assert "importlib.metadata" in loaded
    assert loader == "module"


def test_the_stand_in_hands_over_when_plugins_are_enabled_during_the_run():
    code = ("import os, sys, sched_reader.cli.entry as e\n"
            "os.environ['PYDANTIC_DISABLE_PLUGINS'] = ''\n"
            "print(list(sys.modules['pydantic.plugin._loader'].get_plugins()))\n"
            "print(type(sys.modules['pydantic.plugin._loader']).__name__)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["[]", "module"]


def _all_models() -> list[type]:
    for mod in pkgutil.walk_packages(sched_reader.__path__, "sched_reader."):
        if mod.name.endswith(("__main__", ".entry")):
            continue
        importlib.import_module(mod.name)
    seen, todo = [], [DataModel]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.append(sub)
                todo.append(sub)
    return seen


def test_no_model_field_has_a_builtin_type_as_default_factory():
    """``Field(default_factory=list)`` makes pydantic parse list's text signature (tokenize + ast, ~1 ms)
    when the schema is built; data_model.new_list and new_dict are read from their code objects."""
    models = _all_models()
    assert len(models) > 40
    bad = [f"{m.__module__}.{m.__qualname__}.{name}" for m in models
           for name, info in m.model_fields.items() if info.default_factory in (list, dict, set, tuple)]
    assert bad == []


def test_model_annotations_are_types_not_strings():
    """A module that defines pydantic models does not use ``from __future__ import annotations``: pydantic
    would turn each string annotation into a ForwardRef, compile it and evaluate it (~330 in a ``diagnose``,
    ~1.3% of that process's instructions)."""
    bad = [f"{m.__module__}.{m.__qualname__}" for m in _all_models()
           if any(isinstance(a, str) for a in m.__dict__.get("__annotations__", {}).values())]
    assert bad == []


def _entry_env(env: dict[str, str]) -> list[str]:
    import os

    e = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")} | env
    code = ("import os, sys, sched_reader.cli.entry\n"
            "print(os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, env=e)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_the_cli_asks_openblas_for_one_thread_before_numpy_is_imported():
    assert _entry_env({}) == ["1", "False"]


def test_a_user_thread_setting_is_kept():
    assert _entry_env({"OPENBLAS_NUM_THREADS": "8"}) == ["8", "False"]
    assert _entry_env({"OMP_NUM_THREADS": "4"}) == ["None", "False"]


_YAML_PROBE = """
import re, sys, sched_reader.cli.entry, yaml
from sched_reader.cli.startup import _LazyPattern, _compile_caches
lazy = yaml.reader.Reader.NON_PRINTABLE
print(type(lazy).__name__, lazy._real is None)
print(any(isinstance(v, _LazyPattern) for c in _compile_caches() for v in c.values()))
try:
    yaml.load("a: \\x01", Loader=yaml.SafeLoader)
except yaml.YAMLError as err:
    print(str(err).splitlines()[0])
print(type(lazy._real).__name__)
"""


def test_the_cli_compiles_pyyamls_non_printable_check_only_when_the_pure_python_reader_runs():
    """``cli/startup.py``: the check (~56 M instructions to compile) is compiled by the first pure-Python
    read, which then rejects a control character as PyYAML always has; ``re``'s cache keeps no stand-in."""
    r = subprocess.run([sys.executable, "-c", _YAML_PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["_LazyPattern True", "False",
                                     "unacceptable character #x0001: special characters are not allowed",
                                     "Pattern"]


def test_the_deferred_non_printable_check_matches_as_pyyamls_own():
    import re

    import yaml

    from sched_reader.cli.startup import NON_PRINTABLE, _LazyPattern

    own = yaml.reader.Reader.NON_PRINTABLE
    assert NON_PRINTABLE == own.pattern       # the same text as the installed PyYAML compiles
    lazy = _LazyPattern(NON_PRINTABLE)
    for text in ["plain: text", "tab\there", "bell\x07", "nel\x85ok", "\ufffe", "\U0001F600 emoji", "\x7f"]:
        got, want = lazy.search(text), own.search(text)
        assert (got and (got.start(), got.group())) == (want and (want.start(), want.group())), text
    assert isinstance(lazy._real, re.Pattern)


_DC_PROBE = """
import dataclasses, inspect, sys
from pathlib import Path
from sched_reader.cli import startup
if sys.argv[1] == "cached":
    assert startup.cache_dataclass_code(Path(sys.argv[2]))
@dataclasses.dataclass(frozen=True, order=True)
class Point:
    '''A point.'''
    x: int
    y: float = 0.5
    tags: tuple = ()
@dataclasses.dataclass
class Box:
    p: Point
    n: int = 3
    items: list = dataclasses.field(default_factory=list)
    def __post_init__(self):
        self.n += 1
a, b = Point(1, 2.0), Point(1)
print(repr(a), a == Point(1, 2.0), a < b, hash(a) == hash(Point(1, 2.0)), Box(a), Box(a) == Box(a))
print(inspect.signature(Point), Point.__init__.__annotations__, Point.__eq__.__code__.co_filename)
try:
    a.x = 3
except dataclasses.FrozenInstanceError as err:
    print(type(err).__name__, err)
from typing import ForwardRef
ref = ForwardRef("dict[str, list[int]]")
print(ref.__forward_code__ == compile("dict[str, list[int]]", "<string>", "eval"), eval(ref.__forward_code__))
try:
    ForwardRef("1 +")
except SyntaxError as err:
    print(err)
print(len(startup._dc_new))
startup.save_dataclass_code()
"""


def _dc_run(*args: str, env: dict[str, str] | None = None) -> list[str]:
    import os

    e = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | (env or {})
    r = subprocess.run([sys.executable, "-c", _DC_PROBE, *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=120, env=e)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_dataclass_methods_from_the_code_cache_behave_as_freshly_compiled_ones(tmp_path):
    """``cli/startup.py``: the first run compiles the generated methods (and a ForwardRef's expression) and
    writes them; the next one reads them back (nothing compiled) and the classes print, compare, hash, freeze
    and sign as plain dataclasses; the ForwardRef holds the same code, and a bad one fails as before."""
    cache = tmp_path / "dc.bin"
    plain = _dc_run("plain")
    first = _dc_run("cached", str(cache))
    assert cache.exists()
    second = _dc_run("cached", str(cache))
    assert plain[:-1] == first[:-1] == second[:-1]
    assert plain[0] == "Point(x=1, y=2.0, tags=()) True False True Box(p=Point(x=1, y=2.0, tags=()), n=4, items=[]) True"
    assert plain[3:5] == ["True dict[str, list[int]]", "Forward reference must be an expression -- got '1 +'"]
    assert int(first[-1]) >= 9 and second[-1] == "0"  # __init__, __repr__, __eq__, 4 orderings ..., the ForwardRef


def test_the_dataclass_code_cache_is_not_written_when_bytecode_writing_is_off(tmp_path):
    cache = tmp_path / "dc.bin"
    _dc_run("cached", str(cache), env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert not cache.exists()


def test_a_dataclass_code_cache_from_another_interpreter_is_ignored(tmp_path):
    import marshal

    cache = tmp_path / "dc.bin"
    cache.write_bytes(b"\x00\x00\r\n" + marshal.dumps({"def __create_fn__():\n def f():\n  pass\n return f": 1}))
    out = _dc_run("cached", str(cache))
    assert int(out[-1]) >= 8
    assert cache.read_bytes()[:4] != b"\x00\x00\r\n"     # rewritten for this interpreter
