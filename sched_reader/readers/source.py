"""Read a deploy file's text safely: existence, size, binary and encoding checks before any parsing.

Every failure is an ``InputError`` naming the file and a suggestion; nothing here raises anything else.
"""

from __future__ import annotations

from pathlib import Path

from sched_reader.errors import InputError

MAX_BYTES = 10 * 1024 * 1024  # 10 MiB: deploy files are a few KiB; anything larger is not one
_BINARY_PROBE = 8192          # bytes inspected for NUL characters


def read_text(path: str | Path, *, display: str | None = None) -> str:
    """Return the UTF-8 text of ``path`` (BOM removed, CRLF normalised to LF).

    ``display`` is the file name used in messages (defaults to ``str(path)``). The size is checked with
    ``stat`` before reading so a huge file is never loaded.
    """
    name = display if display is not None else str(path)
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError("file not found", file=name, hint="check the path and the current directory") from None
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror or exc}", file=name,
                         hint="check the path and its permissions") from None
    if p.is_dir():
        raise InputError("is a directory, not a deploy file", file=name,
                         hint="pass one file, e.g. values.yaml, serve.sh or docker-compose.yml")
    if not p.is_file():
        raise InputError("is not a regular file", file=name, hint="pass a deploy file saved on disk")
    if st.st_size > MAX_BYTES:
        raise InputError(f"file is {st.st_size} bytes, over the {MAX_BYTES} byte limit for a deploy file",
                         file=name, hint="pass the vLLM deploy file itself, not a log or an archive")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror or exc}", file=name,
                         hint="check the file's permissions") from None
    return decode(data, name)


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
