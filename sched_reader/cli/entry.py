"""The process entry point: the ``sched-reader`` console script and ``python -m sched_reader``.

The cycle collector is off in the CLI process, from before the first import: a run makes almost no
reference cycles (about a thousand cyclic objects in a diagnose, a 20,000-request simulate, a tune or a
lint of 55 files; ``tests/cli/test_entry.py`` bounds them), so collecting only costs time: about 4% of
the instructions of a ``config`` or ``diagnose`` process, most of it while modules are imported.
Memory is still freed by reference counting. Code that imports ``sched_reader.cli.app`` (tests, a
library caller) keeps its own collector settings.
"""

import gc

gc.disable()

from sched_reader.cli.app import main  # noqa: E402 - after gc.disable(), on purpose

__all__ = ["main"]
