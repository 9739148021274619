"""The package imports one way only: each layer may import the layers below it, never one above.

The layers, lowest first (a module belongs to the first entry whose prefix matches it)::

    ground     errors, findings, severity, origin, versions, limits, data_model   what every layer shares
    readers    deploy files -> raw engines                  knows no vLLM release
    catalogs   GPU catalog and the package data loader      a leaf that compat may use
    compat     vLLM release queries: flags, defaults, matrix, start-up conditions (no findings, no output)
    models     model catalog, spec building, memory, KV cache, cost
    analyzers  rules, release checks, the analysis pipeline, diagnosis, simulator, lesson
    report     one module per output format
    cli        options -> runner -> exit code

The graph is read from the source with ``ast`` (imports inside functions included), so a lazy import
cannot hide an upward dependency; a table of module names that a module imports by name on demand
(``readers.detect.READERS``: each deploy form's reader) counts as that module's imports (``REGISTRIES``).
Function-level imports themselves are allowed only in the command
bodies of ``cli/cmd_*.py`` and in the process entry point (``LAZY_ENTRY``) (start-up speed); the second test
counts them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "sched_reader"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("ground", ("sched_reader.errors", "sched_reader.findings", "sched_reader.severity", "sched_reader.origin",
                "sched_reader.versions", "sched_reader.limits", "sched_reader.data_model")),
    ("readers", ("sched_reader.readers",)),
    ("catalogs", ("sched_reader.models.gpu_catalog", "sched_reader.models.gpu_spec", "sched_reader.models.gpu",
                  "sched_reader.models.data_files")),
    ("compat", ("sched_reader.compat",)),
    ("models", ("sched_reader.models",)),
    ("analyzers", ("sched_reader.analyzers",)),
    ("report", ("sched_reader.report",)),
    ("cli", ("sched_reader.cli", "sched_reader.__main__")),
]
# ``sched_reader`` itself (``__init__``: the version string) is below everything.
ROOT_MODULE = "sched_reader"

# Module-level tables of ``{key: (module name, function)}`` that a module imports from with importlib when
# a key is needed: their modules are that module's imports, checked like import statements.
REGISTRIES = {"sched_reader.readers.detect": "READERS"}

# Most lazy imports (``from ... import`` statements inside functions) a command body may hold: one runner
# per mode (``compat``: matrix/list, flag/diff, configs).
MAX_LAZY_PER_COMMAND = 3

# The process entry point imports the typer app only when its typer-free ``diagnose`` does not take the
# command line; that one (cli/fast_diagnose.py) imports its runners lazily, as a command body does.
LAZY_ENTRY = {"sched_reader/cli/entry.py": ("sched_reader.cli.app",),
              "sched_reader/cli/fast_diagnose.py": ("sched_reader.cli.runners.",)}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> int:
    if module == ROOT_MODULE:
        return -1
    for i, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return i
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")


def imports(path: Path) -> list[tuple[str, int, bool, str | None]]:
    """(imported module, line, inside a function?, enclosing function) for each sched_reader import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    inside: dict[int, str] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(fn):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    inside.setdefault(id(sub), fn.name)
    out = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # ``from sched_reader.compat import matrix`` imports the submodule
            targets = [f"{mod}.{a.name}" if _is_module(f"{mod}.{a.name}") else mod for a in node.names]
        for t in targets:
            if t == ROOT_MODULE or t.startswith(ROOT_MODULE + "."):
                out.append((t, node.lineno, id(node) in inside, inside.get(id(node))))
    return out + registry_imports(tree, me)


def registry_imports(tree: ast.Module, me: str) -> list[tuple[str, int, bool, None]]:
    """The modules named in ``me``'s registry table (``REGISTRIES``), as module-level imports."""
    name = REGISTRIES.get(me)
    if name is None:
        return []
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and target.id == name and node.value is not None:
            table = ast.literal_eval(node.value)
            return [(module, node.lineno, False, None) for module, _function in table.values()]
    raise AssertionError(f"{me} has no module-level table {name} (REGISTRIES in {__file__})")


def _is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    return (PKG.parent / rel).with_suffix(".py").is_file() or (PKG.parent / rel / "__init__.py").is_file()


SOURCES = sorted(PKG.rglob("*.py"))


def test_every_module_has_a_layer():
    for p in SOURCES:
        layer_of(module_name(p))


def test_no_import_goes_up_a_layer():
    upward = []
    for p in SOURCES:
        me = module_name(p)
        for target, line, _, _ in imports(p):
            if layer_of(target) > layer_of(me):
                upward.append(f"{p.relative_to(PKG.parent)}:{line}: {LAYERS[layer_of(me)][0]} {me} imports "
                              f"{LAYERS[layer_of(target)][0]} {target}")
    assert not upward, "imports that go up a layer:\n" + "\n".join(upward)


def test_function_level_imports_only_in_command_bodies():
    stray, per_command = [], {}
    for p in SOURCES:
        rel = p.relative_to(PKG.parent)
        is_command_file = p.parent.name == "cli" and p.name.startswith("cmd_")
        for target, line, in_function, fn in imports(p):
            if not in_function:
                continue
            if str(rel) in LAZY_ENTRY and target.startswith(LAZY_ENTRY[str(rel)]):
                continue
            if is_command_file:
                per_command.setdefault(f"{rel}:{fn}", []).append(target)
            else:
                stray.append(f"{rel}:{line}: {target}")
    assert not stray, "function-level imports outside a command body:\n" + "\n".join(stray)
    too_many = {k: v for k, v in per_command.items() if len(v) > MAX_LAZY_PER_COMMAND}
    assert not too_many, too_many
    runners_only = {k: v for k, v in per_command.items()
                    if any(not t.startswith("sched_reader.cli.runners") for t in v)}
    assert not runners_only, f"a command body imports its runner (sched_reader.cli.runners.*) only: {runners_only}"


def test_registry_tables_name_real_modules_and_functions():
    """Every (module, function) in a registry table exists, so a lazily imported reader cannot be misspelt."""
    import importlib

    for me, name in REGISTRIES.items():
        table = getattr(importlib.import_module(me), name)
        assert table, f"{me}.{name} is empty"
        for key, (module, function) in table.items():
            assert _is_module(module), f"{me}.{name}[{key!r}]: no module {module}"
            assert callable(getattr(importlib.import_module(module), function, None)), (
                f"{me}.{name}[{key!r}]: {module} has no function {function}")


@pytest.mark.parametrize("layer", [name for name, _ in LAYERS])
def test_each_layer_is_named_once(layer):
    assert [name for name, _ in LAYERS].count(layer) == 1
