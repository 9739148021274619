"""The process entry point: the ``sched-reader`` console script and ``python -m sched_reader``.

The cycle collector is off in the CLI process, from before the first import: a run makes almost no
reference cycles (about a thousand cyclic objects in a diagnose, a 20,000-request simulate, a tune or a
lint of 55 files; ``tests/cli/test_entry.py`` bounds them), so collecting only costs time: about 4% of
the instructions of a ``config`` or ``diagnose`` process, most of it while modules are imported. When the
command is done, ``gc.freeze()`` moves every object to the permanent generation, which the interpreter's
full collection at exit does not walk: another 3-4% (it would only find those few cycles, and the process
is ending). Memory is still freed by reference counting and atexit handlers still run. Code that imports
``sched_reader.cli.app`` (tests, a library caller) keeps its own collector settings.

Pydantic's plugin scan is off in the CLI (``sched_reader/cli/__init__.py``), but pydantic still imports
its plugin loader (``pydantic.plugin._loader``) when it builds the first validator, and that module
imports ``importlib.metadata`` (with ``email``, ``zipfile``, ``csv`` ...) at its top: about 3% of a
``diagnose`` process's instructions, for a scan that is not made. The CLI process therefore starts with
a stand-in for that module whose ``get_plugins`` gives what the real one gives when plugins are disabled
(none); should plugins be enabled after all (``PYDANTIC_DISABLE_PLUGINS`` changed during the run), it
loads the real loader and hands over to it. Only the process entry point does this, never a library import.

PyYAML is imported with its non-printable-character check compiled on first use, and the methods dataclasses
generate are compiled once and kept beside the bytecode (``cli/startup.py``: ~4% and ~12% of a ``diagnose``
process's instructions).

A plain ``diagnose FILE...`` command line is run without importing typer (``cli/fast_diagnose.py``, ~7%
of that process's instructions); any other goes to the typer app.

numpy's OpenBLAS starts a thread per core when numpy is imported (a pool of 64 threads on a 64-core
host) and those threads spin for a while after each BLAS call. sched-reader makes no BLAS call (its
arrays are small and its dot products are on int64, which numpy computes itself), so the CLI process asks
OpenBLAS for one thread, unless the user set ``OPENBLAS_NUM_THREADS`` or ``OMP_NUM_THREADS``: ~3% of a
``diagnose`` process's instructions on a 2-core machine, more wall time where there are more cores.
"""

import gc

gc.disable()

import os  # noqa: E402
import sys  # noqa: E402
import types  # noqa: E402

_LOADER = "pydantic.plugin._loader"
_PLUGINS_OFF = ("__all__", "1", "true")   # the values pydantic's get_plugins reads as "no plugins"


def _real_loader() -> types.ModuleType:
    """Replace the stand-in by pydantic's own plugin loader and return it."""
    import importlib

    if isinstance(sys.modules.get(_LOADER), _LoaderStandIn):
        del sys.modules[_LOADER]
    return importlib.import_module(_LOADER)


class _LoaderStandIn(types.ModuleType):
    """``pydantic.plugin._loader`` while plugins are disabled: no plugins, nothing imported."""

    @staticmethod
    def get_plugins(*args, **kwargs):  # noqa: ANN002, ANN003, ANN205 - pydantic's signature, forwarded
        if os.environ.get("PYDANTIC_DISABLE_PLUGINS") in _PLUGINS_OFF:
            return ()
        return _real_loader().get_plugins(*args, **kwargs)

    def __getattr__(self, name: str):  # noqa: ANN204 - anything else pydantic may ask: the real module's
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(_real_loader(), name)


def _skip_plugin_loader_import() -> None:
    """Put the stand-in in place when the plugin scan is disabled and pydantic has not loaded its loader."""
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") in _PLUGINS_OFF and _LOADER not in sys.modules:
        sys.modules[_LOADER] = _LoaderStandIn(_LOADER)


if "OPENBLAS_NUM_THREADS" not in os.environ and "OMP_NUM_THREADS" not in os.environ:
    os.environ["OPENBLAS_NUM_THREADS"] = "1"   # before numpy is imported (see the module docstring)
_skip_plugin_loader_import()   # the package (sched_reader/cli/__init__.py) has set PYDANTIC_DISABLE_PLUGINS

from sched_reader.cli import startup  # noqa: E402

startup.import_yaml()
startup.cache_dataclass_code()   # before the first sched-reader dataclass is defined

from sched_reader.cli import fast_diagnose  # noqa: E402 - after gc.disable(), on purpose


def main(argv: list[str] | None = None) -> None:
    """Run the CLI on ``argv`` (default ``sys.argv[1:]``); exits with the command's code.

    A plain ``diagnose FILE...`` runs without typer (``cli/fast_diagnose.py``); everything else through the
    typer app, imported only then."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        code = fast_diagnose.run(args)
        if code is None:
            from sched_reader.cli.app import main as run_cli

            run_cli(args)
        sys.exit(code)
    finally:
        startup.save_dataclass_code()
        gc.freeze()
