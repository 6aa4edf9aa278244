"""Checks on a whole template tree before any of it is written to a plan, and on
the names users give to parameters."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import yaml

from tripleo_flow import exceptions
from tripleo_flow.common import safe_yaml

_YAML_SUFFIXES = (".yaml", ".yml")
#: Heat parameter names as tripleo-heat-templates writes them (every one of its
#: 12.1.0 and 18.0.0 parameters matches): a letter or '_', then letters, digits, '_'.
PARAMETER_NAME_PATTERN = "^[A-Za-z_][A-Za-z0-9_]*$"
MAX_PARAMETER_NAME = 255
_PARAMETER_NAME = re.compile(PARAMETER_NAME_PATTERN)


def json_size(value: object, limit: int, escaped: bool = False) -> int:
    """About how many characters ``value`` takes as JSON, counted until past ``limit``
    (a 50 MB value is not copied to be measured); with ``escaped``, in bytes of JSON
    written ASCII only (a non-ASCII character as its ``\\uXXXX`` escapes, as the
    executions database stores it)."""
    stack = [value]
    total = 0
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str):
            total += _text_size(item, escaped) + 2
        elif isinstance(item, Mapping):
            total += 2
            for key, inner in item.items():
                total += _text_size(str(key), escaped) + 4
                stack.append(inner)
        elif isinstance(item, (list, tuple)):
            total += 2 + len(item)
            stack.extend(item)
        elif isinstance(item, int) and not isinstance(item, bool):
            total += item.bit_length() * 3 // 10 + 2
        else:
            total += 8
    return total


def _text_size(text: str, escaped: bool) -> int:
    """``text``'s characters; with ``escaped``, 6 bytes for each UTF-16 unit of a
    non-ASCII character (``\\uXXXX``)."""
    if not escaped or text.isascii():
        return len(text)
    ascii_count = len(text.encode("ascii", "ignore"))
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2 - ascii_count
    return ascii_count + 6 * units


def check_size(value: object, limit: int, what: str) -> None:
    """Refuse ``value`` when its JSON would be over ``limit`` characters
    (``[limits] parameters_max_size``).

    :param what: what ``value`` is, starting the message ("The parameter values").
    :raises InvalidParameter: naming the limit and its option.
    """
    size = json_size(value, limit)
    if size > limit:
        raise exceptions.InvalidParameter(
            f"{what} take over {limit} characters ([limits] parameters_max_size). Put large "
            "content in the plan's template files and refer to it (get_file), or raise "
            "[limits] parameters_max_size in the configuration.")


def largest_collection(value: object, limit: int) -> int:
    """The most entries one mapping or list inside ``value`` holds (``value`` itself
    included, at any depth), or the first count past ``limit`` found (the rest of a
    300,000-entry value is not walked for nothing)."""
    largest = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            largest = max(largest, len(item))
            if largest > limit:
                return largest
            stack.extend(v for v in item.values() if isinstance(v, (Mapping, list, tuple)))
        elif isinstance(item, (list, tuple)):
            largest = max(largest, len(item))
            if largest > limit:
                return largest
            stack.extend(v for v in item if isinstance(v, (Mapping, list, tuple)))
    return largest


def check_items(value: object, limit: int, what: str) -> None:
    """Refuse ``value`` when a mapping or list inside it holds over ``limit`` entries
    (``[limits] input_max_items``).

    :param what: what ``value`` is, starting the message ("Input 'parameters'").
    :raises InvalidInput: naming the count, the limit and its option.
    """
    count = largest_collection(value, limit)
    if count > limit:
        raise exceptions.InvalidInput(
            f"{what} holds {count} entries in one mapping or list, more than {limit} "
            "([limits] input_max_items). Send fewer at a time, or raise "
            "[limits] input_max_items in the configuration.")


#: The default of ``[limits] input_max_items``.
INPUT_MAX_ITEMS = 100_000


def check_yaml_entries(text: str | bytes, limit: int, what: str) -> None:
    """Refuse YAML ``text`` with a mapping or list of over ``limit`` entries
    (``[limits] input_max_items``) before it is built: its parser's events are
    counted as they come and counting stops at the first entry past the limit (a
    file of 300,000 parameters took most of a minute to build before it was
    refused).  Text that does not parse is left to the parser that reports it.

    :param what: what ``text`` is, starting the message ("File 'params.yaml'").
    :raises InvalidInput: naming the line, the limit and its option.
    """
    loader = (getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader)(text)
    counts: list[int] = []  # nodes in each open collection (a mapping's are 2 an entry)
    mappings: list[bool] = []
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.NodeEvent) and counts:
                counts[-1] += 1
                if counts[-1] > limit * (2 if mappings[-1] else 1):
                    line = event.start_mark.line + 1 if event.start_mark else 0
                    raise exceptions.InvalidInput(
                        f"{what} holds more than {limit} entries in one mapping or list "
                        f"(line {line}) ([limits] input_max_items). Send fewer at a time, "
                        "or raise [limits] input_max_items in the configuration.")
            if isinstance(event, yaml.CollectionStartEvent):
                counts.append(0)
                mappings.append(isinstance(event, yaml.MappingStartEvent))
            elif isinstance(event, yaml.CollectionEndEvent) and counts:
                counts.pop()
                mappings.pop()
    except yaml.YAMLError:
        return  # the parser says what is wrong with it
    finally:
        loader.dispose()


def check_inputs(workflow: str, inputs: Mapping[str, object], env: object,
                 limit: int | None = None) -> None:
    """Refuse an execution's input (or environment) holding a mapping or list of over
    ``limit`` entries (``[limits] input_max_items``; None: its default)."""
    most = INPUT_MAX_ITEMS if limit is None else limit
    for name, value in inputs.items():
        check_items(value, most, f"Input {name!r} of workflow {workflow!r}")
    check_items(env, most, f"The environment of workflow {workflow!r}")


def check_parameter_name(name: object) -> str:
    """Return ``name`` when it can be a Heat parameter name.

    :raises InvalidParameter: for anything else (``../x``, ``A B``, ``""``, non-strings).
    """
    if (not isinstance(name, str) or not _PARAMETER_NAME.fullmatch(name)
            or len(name) > MAX_PARAMETER_NAME):
        shown = repr(name) if len(repr(name)) <= 80 else repr(name)[:80] + "..."
        raise exceptions.InvalidParameter(
            f"Invalid parameter name {shown}: a Heat parameter name starts with a letter or "
            f"'_' and holds only letters, digits and '_' (at most {MAX_PARAMETER_NAME} "
            "characters).")
    return name


def is_j2(path: str) -> bool:
    return path.endswith((".j2.yaml", ".j2.yml", ".j2"))


def check_yaml_files(files: Mapping[str, bytes],
                     progress: Callable[[int, int], None] | None = None) -> int:
    """Parse every plain (non-j2) YAML file; raise InvalidTemplate naming the first bad one.

    :param progress: called with ``(files checked, files to check)`` after each file.
    :returns: how many files were checked.
    """
    paths = [p for p in sorted(files) if p.endswith(_YAML_SUFFIXES) and not is_j2(p)]
    for checked, path in enumerate(paths, 1):
        safe_yaml.check_yaml(files[path], path)
        if progress is not None:
            progress(checked, len(paths))
    return len(paths)
