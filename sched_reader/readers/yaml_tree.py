"""YAML with line numbers: ``yaml.safe_load`` semantics, built from ``yaml.compose`` nodes.

Mappings become ``YMap`` (a ``dict``) and sequences ``YList`` (a ``list``); both remember the 1-based line
of each key / item and the scalar style of each value, so readers can point at ``file:line``. Nothing is
ever evaluated: only the safe YAML tags are constructed. Alias expansion is counted so an alias bomb
("billion laughs") is rejected instead of exhausting memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from sched_reader.errors import InputError
from sched_reader.limits import MAX_NESTING, clip

MAX_YAML_EVENTS = 100_000   # parser events (~nodes): a 5 KB deploy file has ~300, a 1 MB rendered chart ~60k
MAX_SCALAR_CHARS = 1 << 20  # characters in one YAML value (a 1 MiB command line is far beyond any real one)

_MERGE_TAG = "tag:yaml.org,2002:merge"
_COLLECTION_TAGS = {"tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"}
# libyaml's parser when PyYAML was built with it (same safe constructor, ~10x faster), else pure Python
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
ALIAS_EXPANSION_LIMIT = 10_000  # node visits beyond the document's own nodes (aliases re-expanded)


class YMap(dict):
    """A YAML mapping. ``line``: line of its first key; ``key_lines[k]``: line of key ``k``;
    ``value_lines[k]``: first content line of the value (the line after ``|``/``>`` for block scalars);
    ``styles[k]``: scalar style of the value (``"|"``, ``">"``, ``"'"``, ``'"'``, ``""`` plain, None)."""

    line: int | None = None
    key_lines: dict
    value_lines: dict
    styles: dict

    def kline(self, key: Any) -> int | None:
        """Line of ``key`` (or of the mapping itself when the key is absent)."""
        return self.key_lines.get(key, self.line)

    def vline(self, key: Any) -> int | None:
        return self.value_lines.get(key, self.kline(key))


class YList(list):
    """A YAML sequence. ``line``: line of its first item; ``item_lines[i]``: first content line of item i;
    ``styles[i]``: scalar style of item i."""

    line: int | None = None
    item_lines: list
    styles: list

    def iline(self, i: int) -> int | None:
        return self.item_lines[i] if 0 <= i < len(self.item_lines) else self.line


@dataclass
class YamlDoc:
    """One YAML document: its root value and the 1-based line where it starts."""

    root: Any
    line: int
    duplicates: list[tuple[str, int]] = field(default_factory=list)  # (key, line) overridden by a later key


def _content_line(node: Node) -> int:
    """1-based first line of a node's content (block scalars start on the line after the indicator)."""
    line = node.start_mark.line + 1
    if isinstance(node, ScalarNode) and node.style in ("|", ">"):
        line += 1
    return line


def _style(node: Node) -> str | None:
    return (node.style or "") if isinstance(node, ScalarNode) else None


class _Builder:
    def __init__(self, loader: yaml.SafeLoader, file: str, unique_nodes: int) -> None:
        self.loader = loader
        self.file = file
        self.visits = 0
        self.limit = unique_nodes + ALIAS_EXPANSION_LIMIT
        self.stack: set[int] = set()
        self.duplicates: list[tuple[str, int]] = []

    def build(self, node: Node) -> Any:
        self.visits += 1
        if self.visits > self.limit:
            raise InputError(
                f"YAML aliases expand to more than {ALIAS_EXPANSION_LIMIT} extra nodes (an alias bomb?)",
                file=self.file, line=node.start_mark.line + 1,
                hint="deploy files do not need deeply nested anchors/aliases; expand them by hand")
        if isinstance(node, ScalarNode):
            if len(node.value) > MAX_SCALAR_CHARS:
                raise InputError(f"a YAML value of {len(node.value):,} characters is over the "
                                 f"{MAX_SCALAR_CHARS:,}-character limit", file=self.file,
                                 line=node.start_mark.line + 1, hint="deploy file values are short")
            try:
                return self.loader.construct_object(node, deep=True)
            except yaml.constructor.ConstructorError as exc:
                raise _yaml_error(exc, self.file) from None
            except (ValueError, OverflowError) as exc:  # `!!int x`, an int over 4,300 digits
                raise InputError(f"invalid {node.tag.rsplit(':', 1)[-1]} value {clip(node.value)} ({exc})"
                                 if len(str(exc)) < 80 else
                                 f"invalid {node.tag.rsplit(':', 1)[-1]} value {clip(node.value)}",
                                 file=self.file, line=node.start_mark.line + 1,
                                 hint="write a plain number or quote the text") from None
        if id(node) in self.stack:
            raise InputError("recursive YAML alias (a node contains itself)", file=self.file,
                             line=node.start_mark.line + 1, hint="remove the self-referencing alias")
        if node.tag not in _COLLECTION_TAGS:
            raise InputError(f"unsupported YAML tag {node.tag!r} (only plain YAML data is read)", file=self.file,
                             line=node.start_mark.line + 1, hint="remove the tag; nothing in a deploy file is evaluated")
        if len(self.stack) >= MAX_NESTING:
            raise InputError(f"YAML nested more than {MAX_NESTING} levels deep", file=self.file,
                             line=node.start_mark.line + 1, hint="deploy files are only a few levels deep")
        self.stack.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                return self._seq(node)
            if isinstance(node, MappingNode):
                return self._map(node)
        finally:
            self.stack.discard(id(node))
        raise InputError("unsupported YAML node", file=self.file, line=node.start_mark.line + 1)

    def _seq(self, node: SequenceNode) -> YList:
        out = YList(self.build(item) for item in node.value)
        out.line = node.start_mark.line + 1
        out.item_lines = [_content_line(item) for item in node.value]
        out.styles = [_style(item) for item in node.value]
        return out

    def _map(self, node: MappingNode) -> YMap:
        out = YMap()
        out.line = node.start_mark.line + 1
        out.key_lines, out.value_lines, out.styles = {}, {}, {}
        merges: list[YMap] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merged = self.build(value_node)
                items = merged if isinstance(merged, list) else [merged]
                for m in items:
                    if not isinstance(m, YMap):
                        raise InputError("a YAML merge key '<<' needs a mapping or a list of mappings",
                                         file=self.file, line=key_node.start_mark.line + 1, key="<<")
                    merges.append(m)
                continue
            key = self.build(key_node)
            try:
                hash(key)
            except TypeError:
                raise InputError("a YAML mapping key must be a scalar, not a list or mapping",
                                 file=self.file, line=key_node.start_mark.line + 1,
                                 hint="quote the key or restructure the mapping") from None
            if key in out:
                self.duplicates.append((str(key), out.key_lines[key]))
            out[key] = self.build(value_node)
            out.key_lines[key] = key_node.start_mark.line + 1
            out.value_lines[key] = _content_line(value_node)
            out.styles[key] = _style(value_node)
        for m in merges:  # explicit keys win; earlier merge sources win over later ones
            for k, v in m.items():
                if k not in out:
                    out[k] = v
                    out.key_lines[k] = m.key_lines.get(k, m.line)
                    out.value_lines[k] = m.value_lines.get(k, m.line)
                    out.styles[k] = m.styles.get(k)
        return out


def _count_nodes(node: Node, seen: set[int]) -> None:
    todo = [node]
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, SequenceNode):
            todo.extend(n.value)
        elif isinstance(n, MappingNode):
            for k, v in n.value:
                todo.extend((k, v))


def _yaml_error(exc: yaml.YAMLError, file: str, text: str | None = None) -> InputError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    if line is None and text is not None and getattr(exc, "position", None) is not None:
        line = text[: exc.position].count("\n") + 1  # yaml.reader.ReaderError (bad character)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    msg = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    return InputError(msg, file=file, line=line, hint="fix the YAML syntax at that line (indentation, quotes, ':')")


def _check_size(text: str, file: str) -> None:
    """Refuse YAML of more than ``MAX_YAML_EVENTS`` parser events before building any node.

    Building nodes costs ~10x more than scanning events, and 100k compose services (10 MB) took
    40 s to build; a scan that stops at the bound answers in about a second.
    """
    if text.count("\n") < MAX_YAML_EVENTS // 4 and len(text) < 64 * 1024:
        return  # too small to hold that many events (each event takes a line or at least 4 bytes)
    scanner = _LOADER(text)
    try:
        n = 0
        while scanner.check_event():
            event = scanner.get_event()
            n += 1
            if n > MAX_YAML_EVENTS:
                raise InputError(f"YAML of more than {MAX_YAML_EVENTS:,} nodes", file=file,
                                 line=event.start_mark.line + 1,
                                 hint="a deploy file has hundreds of nodes; split a generated bundle into files")
    finally:
        scanner.dispose()


def load_documents(text: str, file: str) -> list[YamlDoc]:
    """Parse every YAML document in ``text``. Raises ``InputError`` with the line of any YAML error."""
    docs: list[YamlDoc] = []
    loader = None
    try:
        _check_size(text, file)
        loader = _LOADER(text)
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            seen: set[int] = set()
            _count_nodes(node, seen)
            builder = _Builder(loader, file, len(seen))
            root = builder.build(node)
            docs.append(YamlDoc(root=root, line=node.start_mark.line + 1, duplicates=builder.duplicates))
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, file, text) from None
    except RecursionError:
        raise InputError("YAML nested too deeply", file=file, hint="deploy files are only a few levels deep") from None
    finally:
        if loader is not None:
            loader.dispose()
    return docs
