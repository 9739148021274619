"""Deploy-file readers: turn every real form of vLLM deploy config into ``list[RawEngine]``.

Readers know no vLLM flag tables. They record each flag exactly as written, with its origin (file,
1-based line, source kind, key as written), in precedence order (later settings override earlier ones).
Normalization against a vLLM release is done by ``sched_reader.models.spec_builder``.

Public API::

    read_path(path) -> list[RawEngine]
    read_command_line(argv, file="<command line>") -> list[RawEngine]
    read_text(text, file) -> list[RawEngine]        # same detection as read_path, for in-memory text
"""

from __future__ import annotations

from pathlib import Path

from sched_reader.readers.raw import Hint, Origin, RawEngine, Setting, Unresolved

__all__ = ["read_path", "read_command_line", "read_text", "RawEngine", "Setting", "Origin", "Hint", "Unresolved"]


def read_path(path: str | Path) -> list[RawEngine]:
    """Read every vLLM engine in the deploy file at ``path``; the form is detected from the content.

    Raises ``InputError`` (exit code 2, with file/line/key and a hint) for a missing, empty, binary,
    oversized or malformed file, and for a file with no vLLM engine in it.
    """
    from sched_reader.readers.detect import read_text_as
    from sched_reader.readers.source import read_text as _read

    file = str(path)
    text = _read(path, display=file)
    return _guard(lambda: read_text_as(text, file, Path(path)), file)


def read_text(text: str, file: str = "<text>") -> list[RawEngine]:
    """Like ``read_path`` for text already in memory (``file`` is used in origins and messages)."""
    from sched_reader.readers.detect import read_text_as
    from sched_reader.readers.source import decode

    text = decode(text.encode("utf-8", "surrogatepass"), file)
    return _guard(lambda: read_text_as(text, file, None), file)


def read_command_line(argv: list[str], file: str = "<command line>") -> list[RawEngine]:
    """One engine from argv given after sched-reader's ``--``: ``["vllm", "serve", "MODEL", ...]``,
    ``["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "X", ...]`` or bare flags."""
    from sched_reader.readers.cmdline import read_argv

    return _guard(lambda: read_argv([str(a) for a in argv], file), file)


def _guard(fn, file: str) -> list[RawEngine]:
    """Run a reader; an unexpected Python error on hostile input becomes an ``InputError``, never a traceback."""
    from sched_reader.errors import InputError, SchedReaderError

    from sched_reader.limits import MAX_ENGINES

    try:
        engines = fn()
        if len(engines) > MAX_ENGINES:
            raise InputError(f"{len(engines):,} vLLM engines in one file, over the {MAX_ENGINES:,}-engine limit",
                             file=file, line=engines[MAX_ENGINES].line,
                             hint="each engine is analyzed on its own; split the file")
        return engines
    except SchedReaderError as err:
        if err.file is None:  # raised below the reader that knows the file (e.g. the shell tokenizer)
            err.file = file
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError, UnicodeError) as exc:
        raise InputError(f"cannot read this file: {type(exc).__name__}: {exc}", file=file,
                         hint="the file has a shape sched-reader does not understand; please report it") from None
