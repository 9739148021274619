"""The process entry point: the ``sched-reader`` console script and ``python -m sched_reader``.

The cycle collector is off in the CLI process, from before the first import: a run makes almost no
reference cycles (about a thousand cyclic objects in a diagnose, a 20,000-request simulate, a tune or a
lint of 55 files; ``tests/cli/test_entry.py`` bounds them), so collecting only costs time: about 4% of
the instructions of a ``config`` or ``diagnose`` process, most of it while modules are imported. When the
command is done, ``gc.freeze()`` moves every object to the permanent generation, which the interpreter's
full collection at exit does not walk: another 3-4% (it would only find those few cycles, and the process
is ending). Memory is still freed by reference counting and atexit handlers still run. Code that imports
``sched_reader.cli.app`` (tests, a library caller) keeps its own collector settings.
"""

import gc

gc.disable()

from sched_reader.cli.app import main as run_cli  # noqa: E402 - after gc.disable(), on purpose


def main(argv: list[str] | None = None) -> None:
    """Run the CLI on ``argv`` (default ``sys.argv[1:]``); exits with the command's code."""
    try:
        run_cli(argv)
    finally:
        gc.freeze()
