"""Errors that stop a command, with the exit-code contract.

Exit codes (documented in README "Exit codes"):
  0  no finding at or above the fail threshold
  1  at least one finding at or above the threshold (default: error)
  2  could not complete: usage error, unreadable or invalid input, unknown GPU/model/version
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


class SchedReaderError(Exception):
    """A user-facing error: one line naming file, line and key, with an optional hint.

    Raised anywhere in the pipeline; the CLI prints ``str(err)`` and exits with ``exit_code``.
    """

    exit_code = EXIT_ERROR

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        key: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.key = key
        self.hint = hint
        self.others: list[SchedReaderError] = []  # further errors of the same input (see ``combine``)

    def location(self) -> str:
        """``file:line`` (or just ``file``), empty when unknown."""
        if self.file is None:
            return ""
        return f"{self.file}:{self.line}" if self.line else self.file

    def __str__(self) -> str:
        parts = []
        loc = self.location()
        if loc:
            parts.append(f"{loc}:")
        if self.key and not self.message.startswith(self.key):
            parts.append(f"{self.key}:")
        parts.append(self.message)
        text = " ".join(parts)
        if self.hint:
            text += f" ({self.hint})"
        if self.others:
            listed = "; ".join(str(e) for e in self.others[:MAX_LISTED])
            more = f" and {len(self.others) - MAX_LISTED} more" if len(self.others) > MAX_LISTED else ""
            text += f" (and {len(self.others)} more: {listed}{more})"
        return text


MAX_LISTED = 20  # errors named in one message; a count stands for the rest


def combine(errors: list[SchedReaderError]) -> SchedReaderError:
    """One error for all the errors of an input, like a linter: the first (by file, line) carries the
    others in ``others`` and names them in its message, in file and line order, on one line."""
    if not errors:
        raise ValueError("no errors to combine")
    ordered = sorted(errors, key=lambda e: (e.file or "", e.line or 0))
    first, rest = ordered[0], ordered[1:]
    first.others = rest
    return first


class InputError(SchedReaderError):
    """The input file or command line cannot be read or is invalid."""


class UnknownGPUError(SchedReaderError):
    """A GPU name that the catalog cannot resolve."""


class UnknownModelError(SchedReaderError):
    """A model id that the catalog cannot resolve."""


class UnknownVersionError(SchedReaderError):
    """A vLLM version string that cannot be parsed."""
