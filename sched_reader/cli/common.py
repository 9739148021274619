"""Options and plumbing shared by every analysis command (kept light: no heavy imports here).

A command line after ``--`` (``sched-reader diagnose -- vllm serve MODEL ...``) is split off in
``app.main`` before typer parses anything, and kept in ``COMMAND_LINE``; when the app is driven
directly (``typer.testing.CliRunner``), click passes those words as positional arguments, and
``split_inputs`` recognizes them by their first word.
"""

from __future__ import annotations

import contextvars
import sys
from enum import Enum
from pathlib import Path
from typing import Callable, NoReturn, TypeVar

import typer

from sched_reader.errors import EXIT_ERROR, SchedReaderError

COMMAND_LINE: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("command_line", default=None)

_LAUNCHERS = ("vllm", "python", "python3", "docker", "podman")


class Dataset(str, Enum):
    """``vllm bench serve --dataset-name`` shapes sched-reader can generate."""

    random = "random"
    sharegpt = "sharegpt"


class OutputFormat(str, Enum):
    """Output formats of the analysis commands."""

    text = "text"
    json = "json"


GpuOption = typer.Option(
    None, "--gpu", "--gpu-spec", help="GPU to assume, e.g. H100, A100-40GB, L40S, 'NVIDIA H100 80GB HBM3', 'RTX 5000 32GB', or a FILE: a GPU spec (YAML/JSON: memory_gib, hbm_bandwidth_tb_s, tflops, interconnect) or the CSV of `nvidia-smi --query-gpu=name,memory.total --format=csv` (default: from the file, else H100 SXM5 80GB)."
)
VllmOption = typer.Option(
    None, "--vllm", help="vLLM release to check against, e.g. 0.19.0 (default: from the image tag, else the newest known)."
)
ModelConfigOption = typer.Option(
    None, "--model-config", help="A local HF config.json (or its directory) for a model sched-reader does not ship."
)
FormatOption = typer.Option(OutputFormat.text, "--format", "-f", help="Output format.", case_sensitive=False)
ProfileOption = typer.Option(
    None, "--profile", metavar="PROFILE.yaml",
    help="A calibration profile from `sched-reader calibrate` (its fitted terms apply to the speed predictions).")


def activate_profile(path: str | None) -> None:
    """Load ``--profile FILE`` (exit 2 on a bad file) and make it the one the cost model applies."""
    from sched_reader.models.calibration_profile import load_profile, use_profile

    use_profile(load_profile(path) if path else None)


def split_inputs(files: list[str] | None) -> tuple[list[str], list[str] | None]:
    """Separate deploy files from a command line (the words after ``--``)."""
    files = list(files or [])
    tail = COMMAND_LINE.get()
    if tail is not None:
        return files, tail
    for i, word in enumerate(files):
        base = Path(word).name
        if base in _LAUNCHERS and not Path(word).exists():
            return files[:i], files[i:]
        if word.startswith("--"):
            return files[:i], files[i:]
    return files, None


T = TypeVar("T")


def run_guarded(fn: Callable[[], T]) -> T:
    """Run a command body; a ``SchedReaderError`` becomes one line on stderr and exit code 2."""
    try:
        return _with_profile_reset(fn)
    except SchedReaderError as err:
        fail(str(err), err.exit_code)
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as Unix tools do
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(0) from None
    except (typer.Exit, typer.Abort, SystemExit):
        raise
    except Exception as err:  # noqa: BLE001 - last line of defence: never a traceback
        fail(
            f"internal error: {type(err).__name__}: {err} (please report this with the input that caused it)",
            EXIT_ERROR,
        )


def _with_profile_reset(fn: Callable[[], T]) -> T:
    """A ``--profile`` lasts for one command only."""
    try:
        return fn()
    finally:
        if "sched_reader.models.calibration_profile" in sys.modules:
            sys.modules["sched_reader.models.calibration_profile"].use_profile(None)


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    """Print ``sched-reader: error: MESSAGE`` on stderr and exit with ``code``."""
    sys.stderr.write(f"sched-reader: error: {message}\n")
    raise typer.Exit(code)
