"""Limits on the size and shape of values whose author may be hostile (an execution's
input over HTTP, a YAML file a user sends), checked before the value costs more:
how large a value is as JSON (:func:`json_size`, :func:`stored_size`), the most
entries one mapping or list holds (:func:`largest_collection`, in YAML text before
it is built: :func:`check_yaml_entries`), and the refusals of an execution's input
(:func:`check_inputs`: ``[limits] input_max_items``; :func:`check_execution_input`:
``[limits] input_max_size``).  Every walk is iterative.  Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

import yaml

from tripleo_flow import exceptions


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


#: The default of ``[limits] input_max_size``: two parameter changes of the largest
#: size ``[limits] parameters_max_size`` allows by default, or a deploy's user
#: environment files, with room to spare.
INPUT_MAX_SIZE = 2 << 20


def stored_size(value: object, limit: int) -> int:
    """About how many bytes ``value`` takes as the JSON the executions database
    writes (ASCII only, a non-ASCII character as its ``\\uXXXX`` escapes), counted
    until past ``limit`` (a large value is not serialized to be measured)."""
    return json_size(value, limit, escaped=True)


def check_execution_input(workflow: str, inputs: Mapping[str, object], env: object,
                          max_size: int = INPUT_MAX_SIZE) -> None:
    """Refuse the input of an execution of ``workflow`` before it is recorded: an
    execution record keeps its input several times over (the input itself, the inputs
    and context of the tasks that read it, what they publish, the output), so a large
    value costs its record many times its size.

    :param max_size: ``[limits] input_max_size``: the largest input (all its values
        together) and the largest environment, each in bytes of stored JSON
    :raises InvalidInput: naming what is too large, the limit and its option
    """
    for what, value in (("input", inputs), ("environment (env)", env)):
        size = stored_size(value, max_size)
        if size > max_size:
            raise exceptions.InvalidInput(
                f"The {what} of workflow {workflow!r} takes over {max_size} bytes "
                "([limits] input_max_size); nothing was recorded. Put large content in the "
                "plan's files", hints=[exceptions.Hint(
                    "", "upload.create", sep=" (", tail=", or the plan's templates) and pass "
                    "its name, or raise [limits] input_max_size in the server's "
                    "configuration.")])
