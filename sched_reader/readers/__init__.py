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

from sched_reader.readers.cmdline import read_argv
from sched_reader.readers.detect import guard, read_file, read_text_as
from sched_reader.readers.raw import Hint, Origin, RawEngine, Setting, Unresolved
from sched_reader.readers.source import decode

__all__ = ["read_path", "read_command_line", "read_text", "RawEngine", "Setting", "Origin", "Hint", "Unresolved"]


def read_path(path: str | Path) -> list[RawEngine]:
    """Read every vLLM engine in the deploy file at ``path``; the form is detected from the content.

    Raises ``InputError`` (exit code 2, with file/line/key and a hint) for a missing, empty, binary,
    oversized or malformed file, and for a file with no vLLM engine in it.
    """
    return read_file(path)


def read_text(text: str, file: str = "<text>") -> list[RawEngine]:
    """Like ``read_path`` for text already in memory (``file`` is used in origins and messages)."""
    text = decode(text.encode("utf-8", "surrogatepass"), file)
    return guard(lambda: read_text_as(text, file, None), file)


def read_command_line(argv: list[str], file: str = "<command line>") -> list[RawEngine]:
    """One engine from argv given after sched-reader's ``--``: ``["vllm", "serve", "MODEL", ...]``,
    ``["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "X", ...]`` or bare flags."""
    return guard(lambda: read_argv([str(a) for a in argv], file), file)
