"""YAML read from whoever wrote it, within limits, and written back in block style.

:func:`load_yaml` is the one way tripleo-flow reads YAML it did not write.  It
composes the document from libyaml's events itself, so that before any Python
object is built it can refuse, with the line at fault, a document of more than
``max_nodes`` nodes once aliases are expanded (a "billion laughs" is counted,
never expanded), nested deeper than ``max_depth``, or with an alias inside its
own anchor.  Both limits are ``[limits] yaml_max_nodes`` / ``yaml_max_depth``.
Pure: text in, Python objects out, and back.
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Iterator
from typing import Any

import yaml
from yaml import events
from yaml.composer import ComposerError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.representer import SafeRepresenter

from tripleo_flow import exceptions
from tripleo_flow.common.yaml_build import builds as _builds

#: Defaults of ``[limits] yaml_max_nodes`` and ``yaml_max_depth``.
DEFAULT_MAX_NODES = 1_000_000
DEFAULT_MAX_DEPTH = 100

_CLoader: type[yaml.SafeLoader] | None = getattr(yaml, "CSafeLoader", None)
_SEQ_TAG = "tag:yaml.org,2002:seq"
#: libyaml's composer recurses in C: only documents surely shallower than this
#: are given to it (it crashes the process somewhere past 20,000 levels).
_C_SAFE_DEPTH = 5000
#: Indentation and block indicators opening a line: each nested block level
#: takes at least one of these characters (or a line at the same indentation).
_LINE_PREFIX = re.compile(r"^[ \t?:-]*", re.M)
#: Half of a UTF-16 pair on its own: a str can hold one, no UTF-8 text can.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_MAP_TAG = "tag:yaml.org,2002:map"


class _BlockDumper(yaml.SafeDumper):
    """Block style, no anchors, multi-line strings as literal blocks."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: SafeRepresenter, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        # Literal blocks cannot keep trailing spaces on a line; fall back to quotes.
        if not any(line != line.rstrip(" ") for line in value.splitlines()):
            return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_BlockDumper.add_representer(str, _represent_str)

#: :class:`_BlockDumper` on libyaml's emitter, when PyYAML has it: about five times
#: faster than the pure-Python one (a THT 18.0.0 stack's outputs, 1 MB of YAML: 0.12 s
#: instead of 0.63 s of CPU, byte for byte the same text), and a literal block it cannot
#: write holds the string in double quotes, where the Python emitter breaks a line at a
#: NEL (U+0085) in it.  It takes UTF-8 only: text with a lone surrogate goes to the other.
_FastDumper: type[SafeRepresenter] = _BlockDumper
if hasattr(yaml, "CSafeDumper"):
    class _CBlockDumper(yaml.CSafeDumper):
        ignore_aliases = _BlockDumper.ignore_aliases

    _CBlockDumper.add_representer(str, _represent_str)
    _FastDumper = _CBlockDumper


def load_yaml(data: bytes | str, path: str, *, max_nodes: int = DEFAULT_MAX_NODES,
              max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Parse YAML ``data`` read from ``path``, within the limits.

    :param max_nodes: most nodes after alias expansion (``[limits] yaml_max_nodes``).
    :param max_depth: deepest nesting of lists and mappings (``[limits] yaml_max_depth``).
    :raises InvalidTemplate: naming ``path`` and the line of the problem: bad
        YAML, not UTF-8, over a limit, or a recursive alias.
    """
    return _read(data, path, max_nodes, max_depth, True)


def check_yaml(data: bytes | str, path: str, *, max_nodes: int = DEFAULT_MAX_NODES,
               max_depth: int = DEFAULT_MAX_DEPTH) -> None:
    """Raise what :func:`load_yaml` raises for ``data``, building its Python objects
    only when building could fail (:func:`~tripleo_flow.common.yaml_build.builds`)."""
    _read(data, path, max_nodes, max_depth, False)


def _read(data: bytes | str, path: str, max_nodes: int, max_depth: int, build: bool) -> Any:
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise exceptions.InvalidTemplate(path, f"not UTF-8 text ({exc.reason})") from exc
    else:
        text = data
    try:
        return _parse(text, max_nodes, max_depth, build)
    except yaml.YAMLError as exc:
        raise exceptions.InvalidTemplate(path, describe_yaml_error(exc)) from exc


def parse_yaml(text: str, *, max_nodes: int = DEFAULT_MAX_NODES,
               max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Parse ``text`` with libyaml, falling back to PyYAML's own parser.

    libyaml (fast) rejects a few documents PyYAML's pure-Python parser accepts,
    such as ``{get_attr:[Server, name]}`` found in real TripleO templates; a
    document is invalid only when both reject it.  Limits as :func:`load_yaml`.

    :raises yaml.YAMLError: from the pure-Python parser, or :class:`YamlRefused`
        (a YAMLError too) for a limit, a recursive alias or a lone surrogate.
    """
    return _parse(text, max_nodes, max_depth, True)


def check_yaml_text(text: str, *, max_nodes: int = DEFAULT_MAX_NODES,
                    max_depth: int = DEFAULT_MAX_DEPTH) -> None:
    """Raise what :func:`parse_yaml` raises for ``text``; as :func:`check_yaml`."""
    _parse(text, max_nodes, max_depth, False)


def _parse(text: str, max_nodes: int, max_depth: int, build: bool) -> Any:
    surrogate = _LONE_SURROGATE.search(text)
    if surrogate is not None:
        line = text.count("\n", 0, surrogate.start())
        column = surrogate.start() - (text.rfind("\n", 0, surrogate.start()) + 1)
        raise _refuse("holds a lone surrogate, which is not Unicode text",
                      yaml.Mark("<text>", surrogate.start(), line, column, None, 0))
    if _CLoader is not None:
        try:
            return _load(_CLoader, text, max_nodes, max_depth, build)
        except YamlRefused:
            raise  # the document parsed: the same answer from either parser
        except yaml.YAMLError:
            pass
    return _load(yaml.SafeLoader, text, max_nodes, max_depth, build)


def _load(loader_class: type[yaml.SafeLoader], text: str, max_nodes: int,
          max_depth: int, build: bool = True) -> Any:
    loader = loader_class(text)
    try:
        if loader_class is _CLoader and _surely_shallow(text):
            node = loader.get_single_node()  # libyaml's composer: fast
            if node is not None and not _within(node, max_nodes, max_depth):
                # find the line at fault (and never build the document)
                _compose(loader_class(text), max_nodes, max_depth)
                raise _refuse("over [limits] yaml_max_nodes or yaml_max_depth", node.start_mark)
        else:
            node = _compose(loader, max_nodes, max_depth)
        if node is None or (not build and max_depth <= DEFAULT_MAX_DEPTH
                            and _builds(loader, node)):
            return None
        try:
            return loader.construct_document(node)
        except RecursionError:  # only with a max_depth in the hundreds
            raise _refuse("nested too deeply to build", node.start_mark) from None
        except ValueError as exc:  # Python's own limit on int("...") (4300 digits)
            if "integer string conversion" not in str(exc):
                raise _unreadable(loader, node, exc) from None
            raise _refuse(f"holds an integer of more than {sys.get_int_max_str_digits()} "
                          "digits, too long to read as a number (quote it to keep it as "
                          "text)", _long_number(node) or node.start_mark) from None
        except (KeyError, TypeError, OverflowError) as exc:  # ``!!bool maybe`` ...
            raise _unreadable(loader, node, exc) from None
    finally:
        loader.dispose()


def _unreadable(loader: Any, root: Node, exc: BaseException) -> YamlRefused:
    """The refusal of a document whose scalar its tag cannot read (``!!int abc``,
    ``!!bool maybe``, the date ``2020-02-30``): PyYAML's constructors raise plain
    Python errors there, not a YAML error; this names the first such scalar's line."""
    for node in _scalars(root):
        build = loader.yaml_constructors.get(node.tag)
        if build is None:
            continue
        try:
            build(loader, node)
        except (ValueError, KeyError, TypeError, OverflowError):
            kind = node.tag.rsplit(":", 1)[-1]
            return _refuse(f"holds {node.value[:60]!r}, which is not a valid {kind} (quote "
                           "it to keep it as text)", node.start_mark)
    return _refuse(f"holds a value that cannot be read ({type(exc).__name__})",
                   root.start_mark)


def _long_number(root: Node) -> Any:
    """Where the first number too long for ``int()`` is under ``root`` (None if none)."""
    return next((node.start_mark for node in _scalars(root) if node.tag.endswith(":int")
                 and len(node.value) > sys.get_int_max_str_digits()), None)


def _scalars(root: Node) -> Iterator[ScalarNode]:
    """The scalar nodes under ``root`` in document order, each once (aliases shared)."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            yield node
        else:
            todo.extend(reversed(list(_children(node))))


def _surely_shallow(text: str) -> bool:
    """Whether ``text`` cannot nest deeper than :data:`_C_SAFE_DEPTH` (a cheap bound)."""
    flow = text.count("[") + text.count("{")
    if flow >= _C_SAFE_DEPTH:
        return False
    block = max(map(len, _LINE_PREFIX.findall(text)), default=0)
    return flow + 2 * (block + 1) < _C_SAFE_DEPTH


def _children(node: Node) -> Iterator[Node]:
    if isinstance(node, MappingNode):
        return itertools.chain.from_iterable(node.value)
    return iter(node.value)


def _within(root: Node, max_nodes: int, max_depth: int) -> bool:
    """Whether the graph under ``root`` is acyclic and within both limits once expanded.

    Each collection is walked once: a node reached again through an alias adds
    its remembered size and depth.
    """
    if isinstance(root, ScalarNode):
        return True
    done: dict[int, tuple[int, int]] = {}
    active = {id(root)}
    stack = [(root, _children(root))]
    sizes = [1]
    depths = [1]
    while stack:
        node, children = stack[-1]
        for child in children:
            if type(child) is ScalarNode:
                sizes[-1] += 1
                continue
            key = id(child)
            if key in done:
                size, depth = done[key]
                sizes[-1] += size
                if depth + len(stack) > max_depth or sizes[-1] > max_nodes:
                    return False
                depths[-1] = max(depths[-1], depth + 1)
                continue
            if key in active or len(stack) >= max_depth:
                return False  # a recursive alias, or too deep
            active.add(key)
            stack.append((child, _children(child)))
            sizes.append(1)
            depths.append(1)
            break
        else:
            stack.pop()
            active.discard(id(node))
            size, depth = sizes.pop(), depths.pop()
            if size > max_nodes:
                return False
            done[id(node)] = (size, depth)
            if stack:
                sizes[-1] += size
                depths[-1] = max(depths[-1], depth + 1)
    return True


class YamlRefused(ComposerError):
    """A document over ``max_nodes`` or ``max_depth``, or with a recursive alias."""


def _refuse(problem: str, mark: Any) -> YamlRefused:
    return YamlRefused(None, None, problem, mark)


def _malformed(problem: str, mark: Any) -> ComposerError:
    """An error PyYAML's own composer would raise too."""
    return ComposerError(None, None, problem, mark)


def _compose(loader: yaml.SafeLoader, max_nodes: int, max_depth: int) -> Node | None:
    """The single document of ``loader`` as a node graph, counted as it is built.

    Iterative (libyaml's own composer recurses in C and crashes on very deep
    documents).  Each collection on the stack is ``[node, anchor, children,
    size, depth]``; an alias adds the size and depth of its anchor's node.
    """
    loader.get_event()  # stream start
    if loader.check_event(events.StreamEndEvent):
        loader.get_event()
        return None
    loader.get_event()  # document start
    anchors: dict[str, tuple[Node, int, int]] = {}
    opened: set[str] = set()
    stack: list[list[Any]] = []
    root: tuple[Node, int, int] | None = None
    while root is None:
        event = loader.get_event()
        kind = type(event)
        anchor = getattr(event, "anchor", None)
        if kind is events.AliasEvent:
            if anchor in opened:
                raise _refuse(f"recursive alias *{anchor}: the alias is inside the node "
                              f"anchored &{anchor}, which would contain itself",
                              event.start_mark)
            if anchor not in anchors:
                raise _malformed(f"found undefined alias {anchor!r}", event.start_mark)
            done = anchors[anchor]
        elif anchor is not None and (anchor in anchors or anchor in opened):
            raise _malformed(f"found duplicate anchor {anchor!r}", event.start_mark)
        elif kind is events.ScalarEvent:
            tag = event.tag
            if tag is None or tag == "!":
                tag = loader.resolve(ScalarNode, event.value, event.implicit)
            node: Node = ScalarNode(tag, event.value, event.start_mark, event.end_mark,
                                    style=event.style)
            done = (node, 1, 0)
            if anchor is not None:
                anchors[anchor] = done
        elif kind is events.SequenceStartEvent or kind is events.MappingStartEvent:
            if len(stack) >= max_depth:
                raise _refuse(f"nested deeper than {max_depth} lists and mappings "
                              "([limits] yaml_max_depth)", event.start_mark)
            sequence = kind is events.SequenceStartEvent
            tag = event.tag
            if tag is None or tag == "!":
                tag = _SEQ_TAG if sequence else _MAP_TAG
            node_class = SequenceNode if sequence else MappingNode
            node = node_class(tag, [], event.start_mark, None, flow_style=event.flow_style)
            if anchor is not None:
                opened.add(anchor)
            stack.append([node, anchor, [], 1, 1])
            continue
        else:  # sequence or mapping end
            node, anchor, children, size, depth = stack.pop()
            node.end_mark = event.end_mark
            node.value = (children if isinstance(node, SequenceNode)
                          else list(zip(children[::2], children[1::2], strict=True)))
            done = (node, size, depth)
            if anchor is not None:
                opened.discard(anchor)
                anchors[anchor] = done
        if not stack:
            root = done
            break
        frame = stack[-1]
        frame[2].append(done[0])
        frame[3] += done[1]
        frame[4] = max(frame[4], done[2] + 1)
        if frame[3] > max_nodes:
            raise _refuse(f"more than {max_nodes} nodes once aliases are expanded "
                          "([limits] yaml_max_nodes)", event.start_mark)
        if len(stack) + done[2] > max_depth:
            raise _refuse(f"nested deeper than {max_depth} lists and mappings once aliases "
                          "are expanded ([limits] yaml_max_depth)", event.start_mark)
    loader.get_event()  # document end
    if not loader.check_event(events.StreamEndEvent):
        raise _malformed("expected a single document in the stream",
                      loader.get_event().start_mark)
    loader.get_event()
    return root[0]


def describe_yaml_error(exc: yaml.YAMLError) -> str:
    """A one-line description of a PyYAML error with its line and column."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    detail = f"{problem} ({context})" if context else str(problem)
    return f"YAML error at {where}{detail}. Fix the file and try again."


def dump_yaml(obj: Any) -> bytes:
    """Serialise ``obj`` as block-style YAML, keys in their insertion order."""
    try:
        text = _dump(obj, _FastDumper)
    except UnicodeEncodeError:  # a lone surrogate, which libyaml cannot take
        text = _dump(obj, _BlockDumper)
    return text.encode("utf-8")


def _dump(obj: Any, dumper: type[SafeRepresenter]) -> str:
    return yaml.dump(obj, Dumper=dumper, default_flow_style=False, sort_keys=False,
                     allow_unicode=True, width=4096)
