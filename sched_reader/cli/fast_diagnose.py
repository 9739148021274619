"""``sched-reader diagnose FILE...`` without typer: the most common command line, run by the entry point.

typer (0.29) costs ~7% of a ``diagnose`` process's instructions: its import (click vendored as
``typer._click``) and a pydantic ``TypeAdapter`` built per option when it parses the ~28 options. A command
line made only of deploy files (plus, optionally, ``--format text|json``, ``-f text|json``, ``--explain``,
``--effects``/``--no-effects`` and a command line after ``--``) needs none of that: :func:`parse` reads it
into the runner's keyword arguments, with every other option at its declared default, and :func:`run` calls
the same runner through the same guard (``plumbing.run_guarded``) as ``cmd_diagnose.diagnose``. Anything
else (another option, a value in another case, ``--help``, no file) returns None and typer parses it as
always. ``tests/cli/test_fast_diagnose.py`` checks that both paths hand the runner the same arguments and
that a process prints the same bytes and exits with the same code either way.
"""

from __future__ import annotations

import sys
from typing import Any

from sched_reader.cli.fail_on import FailOn
from sched_reader.cli.plumbing import COMMAND_LINE, _click_exits, bench_overrides, run_guarded

# option -> (runner keyword, value) for the flags this path takes
_FLAGS = {"--explain": ("explain", True), "--effects": ("effects", True), "--no-effects": ("effects", False)}
_FORMAT = ("--format", "-f")
_FORMATS = ("text", "json")   # as typed: another spelling (JSON, Json) goes to typer, which accepts it


def parse(head: list[str], tail: list[str] | None) -> dict[str, Any] | None:
    """The runner's keyword arguments for ``diagnose`` words ``head`` (the command line after ``--`` is
    ``tail``), or None when typer must parse them. Options are at cmd_diagnose's defaults unless given."""
    if not head or head[0] != "diagnose":
        return None
    files: list[str] = []
    kw: dict[str, Any] = {"fmt": "text", "explain": False, "effects": True}
    words = iter(head[1:])
    for word in words:
        if not word.startswith("-"):
            files.append(word)
        elif word in _FLAGS:
            key, value = _FLAGS[word]
            kw[key] = value
        elif word in _FORMAT:
            value = next(words, None)
            if value not in _FORMATS:
                return None
            kw["fmt"] = value
        else:
            return None
    if not files and tail is None:
        return None   # typer's usage and the runner's "no input" message
    return {"files": files or None, **kw}


def run(args: list[str]) -> int | None:
    """Run ``args`` (``sys.argv[1:]``) when :func:`parse` takes them: the exit code; else None."""
    head, tail = args, None
    if "--" in args:
        i = args.index("--")
        head, tail = args[:i], args[i + 1:]
    kw = parse(head, tail)
    if kw is None:
        return None
    token = COMMAND_LINE.set(tail)
    try:
        return run_guarded(lambda: _body(kw))
    except SystemExit as stop:          # plumbing.fail: the message is written, the code is the exit code
        return stop.code
    except _click_exits() as stop:      # the same, should a module on the way have loaded typer
        return stop.exit_code
    finally:
        COMMAND_LINE.reset(token)


def _body(kw: dict[str, Any]) -> int:
    """``cmd_diagnose.diagnose``'s body with these arguments and every other option at its default."""
    from sched_reader.cli.runners import diagnose as runner
    from sched_reader.cli.runners.profile import activate_profile

    activate_profile(None)
    return runner.run(kw["files"], gpu=None, vllm=None, model_config=None, model=None, fmt=kw["fmt"],
                      explain=kw["explain"], overrides=bench_overrides(), plot=None, sets=None,
                      effects=kw["effects"], fail_on=FailOn.error, echo=_echo)


def _echo(text: str) -> None:
    """``typer.echo(text, nl=False)`` for the JSON report: click writes the text and flushes; it would strip
    ANSI escapes from a stream that is not a terminal, and JSON text has none (json escapes every control
    character)."""
    sys.stdout.write(text)
    sys.stdout.flush()
