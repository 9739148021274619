"""Run a per-file function over many files on several worker processes, in input order.

The lint of one file is independent of the others (pure function of the file and the options), so a
process pool gives a near-linear speed-up on a multi-core CI runner. Workers are forked after the
parent has loaded the catalogs (flag tables, model and GPU catalogs), so they start warm and never
load a catalog again; each worker keeps its own per-model / per-release caches across the files it
is given (files are handed out in chunks).

``jobs``: ``0`` = one per available CPU (at most ``MAX_AUTO_JOBS``); ``1`` = in this process. Runs of
fewer than ``MIN_PARALLEL_FILES`` files stay in this process (starting workers would cost more).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Sequence

MIN_PARALLEL_FILES = 24
MAX_AUTO_JOBS = 8


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def effective_jobs(jobs: int, n_items: int) -> int:
    """Worker processes to use for ``n_items`` files (1 means in-process)."""
    if jobs < 0:
        raise ValueError("jobs must be >= 0")
    want = min(available_cpus(), MAX_AUTO_JOBS) if jobs == 0 else jobs
    if n_items < MIN_PARALLEL_FILES:
        return 1
    return max(1, min(want, n_items))


def map_ordered(fn: Callable[[Any], Any], items: Sequence[Any], jobs: int, *,
                initializer: Callable[..., None] | None = None, initargs: tuple = (),
                progress: Callable[[int], None] | None = None) -> list[Any]:
    """``[fn(x) for x in items]``, on ``effective_jobs(jobs, len(items))`` processes.

    ``fn`` and ``initializer`` must be module-level functions (picklable). ``progress(n)`` is called in
    this process after each result with the number done so far.
    """
    n_jobs = effective_jobs(jobs, len(items))
    out: list[Any] = []
    if n_jobs > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        chunk = max(1, min(16, len(items) // (n_jobs * 6)))
        try:
            with ProcessPoolExecutor(max_workers=n_jobs, mp_context=ctx, initializer=initializer,
                                     initargs=initargs) as pool:
                for r in pool.map(fn, items, chunksize=chunk):
                    out.append(r)
                    if progress is not None:
                        progress(len(out))
            return out
        except (OSError, BrokenProcessPool):
            pass  # no worker processes here (a sandbox without /dev/shm, a killed worker): finish in-process
    if initializer is not None:
        initializer(*initargs)
    for x in items[len(out):]:
        out.append(fn(x))
        if progress is not None:
            progress(len(out))
    return out
