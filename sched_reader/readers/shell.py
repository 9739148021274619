"""Shell scripts as data: split a script into simple commands with the 1-based line of every word.

Handles what deploy scripts use: ``\\`` continuations, comments, quotes (a quoted string may span lines),
``;`` ``&&`` ``||`` ``|`` ``&`` separators, redirections, here-documents (``cat > f.yaml << EOF``), and
``VAR=value`` / ``export VAR=value`` assignments substituted into later ``$VAR`` / ``${VAR}`` /
``${VAR:-default}``. Nothing is ever executed: ``$(...)``, backticks, ``$1`` and unassigned variables stay
unresolved and are reported, never guessed. Word splitting is done by :mod:`shlex`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from sched_reader.errors import InputError

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_ASSIGN = re.compile(rf"^({_NAME})=(.*)$", re.S)
_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_FD_REDIRECT = re.compile(r"(?:(?<=[\s;&|])|^)\d+(?=[<>])")
_SENTINEL = re.compile("\ue000(\\d+)\ue001")
SEPARATORS = {";", "&&", "||", "|", "&", "|&", ";;", "(", ")"}
REDIRECTS = {">", ">>", "<", "<<", "<<<", ">&", "&>", "<&", ">|", "&>>", "<>"}
_WRAPPERS = {"exec", "nohup", "sudo", "time", "command", "nice", "stdbuf"}


@dataclass(frozen=True)
class Tok:
    """One word of a command line. ``line`` is 1-based in the file; ``unresolved`` lists the ``$...``
    texts inside this word that could not be resolved (the word is then not usable as a value)."""

    text: str
    line: int | None
    unresolved: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass
class Var:
    """A shell variable known at some point of the script. ``value`` None: assigned from something
    that cannot be resolved (``reason`` says what)."""

    value: str | None
    line: int | None
    exported: bool = False
    reason: str = ""
    source: str = "shell"  # "shell" (assigned in the script) | "env" (container / service environment)


@dataclass
class Command:
    """A simple command: its words (assignment prefixes removed into ``env``), and the environment the
    command runs with (exported variables plus ``VAR=x cmd`` prefixes)."""

    tokens: list[Tok]
    line: int | None
    env: dict[str, Var] = field(default_factory=dict)


@dataclass
class Script:
    """A parsed script: its commands in order, and the files its here-documents write."""

    commands: list[Command]
    heredoc_files: dict[str, tuple[str, int]] = field(default_factory=dict)  # path -> (text, first line)
    variables: dict[str, Var] = field(default_factory=dict)                 # at the end of the script


# ----------------------------------------------------------------------------------------------- scanning
def _scan(line: str, quote: str | None) -> tuple[str, str, str | None, bool]:
    """Scan one physical line starting in quote state ``quote``.

    Returns (code without comment, mask of the code with quoted characters replaced by ``x``, quote
    state at the end of the line, whether the line ends in a ``\\`` continuation outside single quotes).
    """
    mask = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if quote == "'":
            if c == "'":
                quote = None
                mask.append(c)
            else:
                mask.append("x")
        elif quote == '"':
            if c == "\\":
                if i + 1 == n:
                    return line[:i], "".join(mask), quote, True
                mask.append("xx")
                i += 2
                continue
            if c == '"':
                quote = None
                mask.append(c)
            else:
                mask.append("x")
        else:
            if c == "\\":
                if i + 1 == n:
                    return line[:i], "".join(mask), None, True
                mask.append("xx")
                i += 2
                continue
            if c in "'\"":
                quote = c
                mask.append(c)
            elif c == "#" and (i == 0 or line[i - 1] in " \t;&|()"):
                return line[:i], "".join(mask), None, False
            else:
                mask.append(c)
        i += 1
    return line, "".join(mask), quote, False


# ---------------------------------------------------------------------------------------------- expansion
class _Expander:
    """Quote-aware ``$VAR`` expansion; unresolved expansions become sentinels kept in ``self.originals``."""

    def __init__(self, lookup, originals: list[str], notes: list[str]) -> None:
        self.lookup = lookup          # name -> (value | None, reason)
        self.originals = originals
        self.notes = notes

    def _sentinel(self, original: str, reason: str) -> str:
        self.originals.append(f"{original}\x1f{reason}")
        return f"\ue000{len(self.originals) - 1}\ue001"

    @staticmethod
    def _quote(value: str, in_double: bool) -> str:
        if in_double:
            return re.sub(r'(["\\$`])', r"\\\1", value)
        words = value.split()
        return " ".join(shlex.quote(w) for w in words)

    def expand(self, text: str) -> str:
        out: list[str] = []
        quote: str | None = None
        i, n = 0, len(text)
        while i < n:
            c = text[i]
            if quote == "'":
                if c == "'":
                    quote = None
                out.append(c)
                i += 1
                continue
            if c == "\\" and i + 1 < n:
                out.append(text[i : i + 2])
                i += 2
                continue
            if c == "'" and quote is None:
                quote = "'"
                out.append(c)
                i += 1
                continue
            if c == '"':
                quote = None if quote == '"' else '"'
                out.append(c)
                i += 1
                continue
            if c == "`":
                j = text.find("`", i + 1)
                j = n - 1 if j < 0 else j
                out.append(self._sentinel(text[i : j + 1], "command substitution is never run"))
                i = j + 1
                continue
            if c == "$" and i + 1 < n:
                consumed, repl = self._dollar(text, i, quote == '"')
                if consumed:
                    out.append(repl)
                    i += consumed
                    continue
            out.append(c)
            i += 1
        return "".join(out)

    def _dollar(self, text: str, i: int, in_double: bool) -> tuple[int, str]:
        rest = text[i + 1 :]
        if rest.startswith("("):
            depth, j = 0, i + 1
            while j < len(text):
                if text[j] == "(":
                    depth += 1
                elif text[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            return j + 1 - i, self._sentinel(text[i : j + 1], "command substitution is never run")
        if rest.startswith("{"):
            j = text.find("}", i)
            if j < 0:
                return 0, ""
            body = text[i + 2 : j]
            original = text[i : j + 1]
            m = re.fullmatch(rf"({_NAME})(?:(:?[-=+?])(.*))?", body, re.S)
            if not m:
                return j + 1 - i, self._sentinel(original, "unsupported parameter expansion")
            name, op, word = m.group(1), m.group(2), m.group(3) or ""
            value, reason = self.lookup(name)
            if op in (":-", "-", ":=", "="):
                if value is None or (op.startswith(":") and value == ""):
                    if reason.startswith("not assigned"):
                        self.notes.append(f"{original}: {name} is not assigned here, its default "
                                          f"{word!r} was used")
                        return j + 1 - i, self._quote(word, in_double)
                    return j + 1 - i, self._sentinel(original, reason)
            elif op in (":+", "+"):
                if value is None and not reason.startswith("not assigned"):
                    return j + 1 - i, self._sentinel(original, reason)
                return j + 1 - i, self._quote(word if value else "", in_double)
            elif op:
                return j + 1 - i, self._sentinel(original, "unsupported parameter expansion")
            if value is None:
                return j + 1 - i, self._sentinel(original, reason)
            return j + 1 - i, self._quote(value, in_double)
        m = re.match(_NAME, rest)
        if m:
            name = m.group(0)
            value, reason = self.lookup(name)
            if value is None:
                return 1 + len(name), self._sentinel("$" + name, reason)
            return 1 + len(name), self._quote(value, in_double)
        if rest[:1] and rest[0] in "0123456789@*#?$!-":
            return 2, self._sentinel(text[i : i + 2], "a script argument or special parameter, known only at run time")
        return 0, ""


# --------------------------------------------------------------------------------------------- tokenizing
# shlex grows each word one character at a time (quadratic in the word's length: a 1 MB word took
# 18-39 s), and an open quote re-lexes the growing text once per line it spans: both are bounded.
MAX_SHELL_LINE = 64 * 1024  # characters in one physical line of a script (real ones are < 4 KiB)
_MAX_QUOTED_LINES = 200     # lines one quoted string may span before it is split on spaces instead


def _words(segments: list[tuple[int, str]], originals: list[str], notes: list[str]) -> list[Tok]:
    """shlex-split each physical segment; segments with an open quote are merged with the next ones."""
    toks: list[Tok] = []
    i = 0
    while i < len(segments):
        line, text = segments[i]
        j = i
        while True:
            try:
                lex = shlex.shlex(text, posix=True, punctuation_chars=";&|<>()")
                lex.whitespace_split = True
                lex.commenters = ""
                words = list(lex)
                break
            except ValueError:
                if j + 1 >= len(segments) or j - i >= _MAX_QUOTED_LINES:
                    words = text.split()  # unbalanced quote at the end: fall back to plain splitting
                    break
                j += 1
                text = text + "\n" + segments[j][1]
        for w in words:
            unresolved = tuple(originals[int(k)].split("\x1f")[0] for k in _SENTINEL.findall(w))
            reasons = tuple(originals[int(k)].split("\x1f")[1] for k in _SENTINEL.findall(w))
            plain = _SENTINEL.sub(lambda m: originals[int(m.group(1))].split("\x1f")[0], w)
            tok_notes = tuple(f"{u}: {r}" for u, r in zip(unresolved, reasons))
            toks.append(Tok(plain, line, unresolved, tok_notes))
        if notes:
            # attach expansion notes (defaults used) to the first word of the segment group
            if toks:
                last = toks[-1]
                toks[-1] = Tok(last.text, last.line, last.unresolved, last.notes + tuple(notes))
            notes.clear()
        i = j + 1
    return toks


def _split_commands(toks: list[Tok]) -> list[tuple[list[Tok], list[tuple[str, str]]]]:
    """Split words at separators; redirections (operator + target) are removed and returned aside."""
    out: list[tuple[list[Tok], list[tuple[str, str]]]] = [([], [])]
    pending: str | None = None
    for t in toks:
        if pending is not None:
            out[-1][1].append((pending, t.text))
            pending = None
            continue
        if t.text in SEPARATORS and not t.unresolved:
            out.append(([], []))
        elif t.text in REDIRECTS:
            pending = t.text
        else:
            out[-1][0].append(t)
    return [c for c in out if c[0]]


def unresolved_reason(tok: Tok) -> str:
    """A one-line reason why ``tok`` could not be resolved (for an ``Unresolved`` item)."""
    return "; ".join(tok.notes[: len(tok.unresolved)]) or "not resolvable"


# -------------------------------------------------------------------------------------------------- parse
def parse_script(text: str, *, base_line: int = 1, env: dict[str, Var] | None = None) -> Script:
    """Parse ``text`` (a script, or a ``sh -c`` string) into simple commands.

    ``base_line`` is the file line of the first line of ``text``; ``env`` holds variables the script
    inherits (a container's ``env``), used for ``$VAR`` substitution and passed to every command.
    """
    variables: dict[str, Var] = dict(env or {})
    lines = text.split("\n")
    for n, physical in enumerate(lines):
        if len(physical) > MAX_SHELL_LINE:
            raise InputError(f"a shell line of {len(physical):,} characters is over the {MAX_SHELL_LINE:,}-character "
                             "limit", line=base_line + n, hint="a vLLM command line is a few KiB; is this a data file?")
    commands: list[Command] = []
    heredoc_files: dict[str, tuple[str, int]] = {}

    def lookup(name: str) -> tuple[str | None, str]:
        var = variables.get(name)
        if var is None:
            return None, f"not assigned in this file (${name} is set only at run time)"
        if var.value is None:
            return None, var.reason or f"{name} has no static value"
        return var.value, ""

    i = 0
    while i < len(lines):
        quote: str | None = None
        segs: list[tuple[int, str]] = []
        masks: list[str] = []
        while i < len(lines):
            code, mask, quote, cont = _scan(lines[i], quote)
            segs.append((base_line + i, code))
            masks.append(mask)
            i += 1
            if quote is None and not cont:
                break
        # here-documents: bodies follow this logical line
        heredocs = [m for mask in masks for m in _HEREDOC.finditer(mask)]
        bodies: list[tuple[str, int, bool]] = []
        for m in heredocs:
            strip_tabs, quoted, delim = m.group(1) == "-", bool(m.group(2)), m.group(3)
            body_start = i
            body: list[str] = []
            while i < len(lines):
                candidate = lines[i].lstrip("\t") if strip_tabs else lines[i]
                i += 1
                if candidate == delim:
                    break
                body.append(candidate)
            bodies.append(("\n".join(body), base_line + body_start, quoted))
        # drop fd numbers of redirections (2>&1) so they do not look like arguments
        segs = [(ln, _strip_fd(code, mask)) for (ln, code), mask in zip(segs, masks)]
        originals: list[str] = []
        exp_notes: list[str] = []
        expander = _Expander(lookup, originals, exp_notes)
        expanded = expander.expand("\n".join(code for _, code in segs)).split("\n")
        toks = _words([(ln, t) for (ln, _), t in zip(segs, expanded)], originals, exp_notes)
        for cmd_toks, redirects in _split_commands(toks):
            _handle(cmd_toks, redirects, variables, commands, heredoc_files, bodies)
    return Script(commands=commands, heredoc_files=heredoc_files, variables=variables)


def _strip_fd(code: str, mask: str) -> str:
    spans = [m.span() for m in _FD_REDIRECT.finditer(mask[: len(code)])]
    for a, b in reversed(spans):
        code = code[:a] + code[b:]
    return code


def _assign(tok: Tok) -> tuple[str, Var] | None:
    m = _ASSIGN.match(tok.text)
    if not m:
        return None
    if tok.unresolved:
        return m.group(1), Var(None, tok.line, reason=f"assigned from {', '.join(tok.unresolved)} "
                                                        f"at line {tok.line}, known only at run time")
    return m.group(1), Var(m.group(2), tok.line)


def _handle(toks: list[Tok], redirects: list[tuple[str, str]], variables: dict[str, Var], commands: list[Command],
            heredoc_files: dict[str, tuple[str, int]], bodies: list[tuple[str, int, bool]]) -> None:
    prefix: dict[str, Var] = {}
    k = 0
    while k < len(toks):
        a = _assign(toks[k])
        if a is None:
            break
        prefix[a[0]] = a[1]
        k += 1
    rest = toks[k:]
    if not rest:
        variables.update(prefix)  # plain assignments: shell variables for later lines
        return
    head = rest[0].text
    if head in ("export", "declare", "typeset", "local", "readonly"):
        exported = head == "export" or any(t.text.startswith("-") and "x" in t.text for t in rest[1:])
        for t in rest[1:]:
            if t.text.startswith("-"):
                continue
            a = _assign(t)
            if a is not None:
                a[1].exported = exported
                variables[a[0]] = a[1]
            elif t.text in variables and exported:
                variables[t.text].exported = True
        return
    if head == "unset":
        for t in rest[1:]:
            variables.pop(t.text, None)
        return
    if head in ("cat", "tee") and bodies:
        target = _heredoc_target(toks, redirects)
        body, first, _quoted = bodies.pop(0)
        if target:
            heredoc_files[target] = (body, first)
        return
    env = {name: v for name, v in variables.items() if v.exported or v.source == "env"}
    env.update(prefix)
    while rest and rest[0].text in _WRAPPERS:
        rest = rest[1:]
    if rest:
        commands.append(Command(tokens=rest, line=rest[0].line, env=env))


def _heredoc_target(toks: list[Tok], redirects: list[tuple[str, str]]) -> str | None:
    """The file a ``cat > FILE << EOF`` / ``tee FILE << EOF`` writes."""
    for op, target in redirects:
        if op in (">", ">>", ">|"):
            return target
    for t in toks[1:]:
        if not t.text.startswith("-"):
            return t.text
    return None
