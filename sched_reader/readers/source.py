"""Read a deploy file's text safely: existence, size, binary and encoding checks before any parsing.

Every failure is an ``InputError`` naming the file and a suggestion; nothing here raises anything else.
"""

from __future__ import annotations

from pathlib import Path

from sched_reader.errors import InputError
from sched_reader.limits import MAX_FILE_BYTES, read_regular_file

MAX_BYTES = MAX_FILE_BYTES  # 10 MiB: deploy files are a few KiB; anything larger is not one
_BINARY_PROBE = 8192          # bytes inspected for NUL characters


def read_text(path: str | Path, *, display: str | None = None) -> str:
    """Return the UTF-8 text of ``path`` (BOM removed, CRLF normalised to LF).

    ``display`` is the file name used in messages (defaults to ``str(path)``). Only a regular file of at
    most ``MAX_BYTES`` is read (``sched_reader.limits.read_regular_file``): a device, FIFO or symlink
    loop is refused before a byte is read.
    """
    name = display if display is not None else str(path)
    return decode(read_regular_file(path, display=name, max_bytes=MAX_BYTES, what="deploy file"), name)


def decode(data: bytes, name: str) -> str:
    """Decode file bytes as UTF-8 text; reject empty and binary content with an ``InputError``."""
    if len(data) > MAX_BYTES:
        raise InputError(f"input is {len(data)} bytes, over the {MAX_BYTES} byte limit", file=name,
                         hint="pass the vLLM deploy file itself")
    if b"\x00" in data[:_BINARY_PROBE]:
        raise InputError("looks like a binary file (contains NUL bytes)", file=name,
                         hint="pass a text deploy file: YAML, shell script or compose file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"not valid UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                         file=name, line=line, hint="save the file as UTF-8") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise InputError("file is empty", file=name,
                         hint="a deploy file needs a vLLM command line, a vLLM --config mapping or a manifest")
    return text
