"""Helpers of the hostile-input tests (issue 16): exit 2 with one line, under a time and memory bound."""

from __future__ import annotations

import contextlib
import os
import resource
import signal

M = "meta-llama/Llama-3.1-8B-Instruct"
SERVE = ["--", "vllm", "serve", M]


@contextlib.contextmanager
def bounded(seconds: float = 10.0, extra_bytes: int = 1 << 30):
    """Fail (TimeoutError / MemoryError) instead of hanging or swapping: ``seconds`` of CPU time (the
    machine may be shared: wall time is noisy), 10x that of wall time (a blocked read uses no CPU), and
    an RLIMIT_AS of ``extra_bytes`` over the process's current size."""
    def alarm(*_):
        raise TimeoutError(f"took more than {seconds} s")

    old_prof = signal.signal(signal.SIGPROF, alarm)
    old_real = signal.signal(signal.SIGALRM, alarm)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as fh:
        vsz = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limit = vsz + extra_bytes
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, 10 * seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, old_prof)
        signal.signal(signal.SIGALRM, old_real)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def one_line_error(code: int, err: str, *needles: str) -> str:
    """Exit 2, one stderr line, no internal error and no Python exception name; returns the line."""
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith(("sched-reader: error: ", "Error: ")) or "Error: Invalid value" in err, line
    for bad in ("internal error", "Traceback", "cannot read this file", "ValueError", "RecursionError",
                "OverflowError", "UnicodeDecodeError", "ZeroDivisionError", "MemoryError", "OSError"):
        assert bad not in line, line
    for n in needles:
        assert n in line, (n, line)
    return line


def usage_error(code: int, err: str, *needles: str) -> None:
    """A click usage error (exit 2, ``Error: Invalid value for '--flag'``), never a traceback."""
    assert code == 2, err
    assert "Traceback" not in err and "internal error" not in err
    for n in needles:
        assert n in err, (n, err)
