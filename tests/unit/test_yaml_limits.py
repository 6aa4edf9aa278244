"""YAML resource limits: alias expansion, depth, recursive anchors (table-driven).

Every entry point reads YAML through :func:`safe_yaml.load_yaml` /
:func:`safe_yaml.parse_yaml`; a hostile document is refused quickly, with its
line, and never expanded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tripleo_flow import exceptions
from tripleo_flow.cli import _format, common
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.plan import planenv
from tripleo_flow.engine.lang import expressions, workbook_loader
from tripleo_flow.heat import render


def laughs(levels: int = 9, width: int = 10) -> str:
    """The classic "billion laughs": ``width ** levels`` nodes from ~1 KB."""
    lines = ["l0: &l0 [" + ", ".join(["lol"] * width) + "]"]
    for level in range(1, levels + 1):
        refs = ", ".join([f"*l{level - 1}"] * width)
        lines.append(f"l{level}: &l{level} [{refs}]")
    return "\n".join(lines) + "\n"


BILLION_LAUGHS = laughs()


@pytest.mark.parametrize(
    ("text", "fragments", "line"),
    [
        (BILLION_LAUGHS, ["more than 1000000 nodes", "yaml_max_nodes"], 6),
        ("&a [*a]\n", ["recursive alias *a"], 1),
        ("a: 1\nb: &b\n  c: *b\n", ["recursive alias *b"], 3),
        ("a: &m\n  <<: *m\n", ["recursive alias *m"], 2),
        ("x: &s [1, [2, *s]]\n", ["recursive alias *s"], 1),
        ("[" * 101 + "]" * 101, ["nested deeper than 100", "yaml_max_depth"], 1),
        ("- " * 101 + "x\n", ["nested deeper than 100", "yaml_max_depth"], 1),
        ("a:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 102)) + "   v\n",
         ["nested deeper than 100"], 101),
        # deep only once the alias is expanded
        ("a: &x [[[[1]]]]\nb: " + "[" * 97 + "*x" + "]" * 97 + "\n",
         ["once aliases are expanded", "yaml_max_depth"], 2),
        # so deep that libyaml's own (recursive, C) composer would crash the process
        ("[" * 200_000 + "]" * 200_000, ["nested deeper than 100"], 1),
        ("- " * 100_000 + "x", ["nested deeper than 100"], 1),
    ],
)
def test_hostile_documents_are_refused_with_their_line(text: str, fragments: list[str],
                                                       line: int) -> None:
    with pytest.raises(exceptions.InvalidTemplate) as info:
        safe_yaml.load_yaml(text, "hostile.yaml")
    message = str(info.value)
    assert info.value.path == "hostile.yaml"
    assert f"line {line}," in message
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize(
    ("text", "max_nodes", "max_depth", "expected"),
    [
        (laughs(2, 3), 100, 100, {"l0": ["lol"] * 3, "l1": [["lol"] * 3] * 3,
                                  "l2": [[["lol"] * 3] * 3] * 3}),
        ("[1, 2, 3]", 4, 1, [1, 2, 3]),
        ("{a: [1]}", 4, 2, {"a": [1]}),
        ("[" * 100 + "]" * 100, 1000, 100, eval("[" * 100 + "]" * 100)),  # noqa: S307
        ("a: &x {p: 1}\nb:\n  <<: *x\n  q: 2\n", 100, 3,
         {"a": {"p": 1}, "b": {"p": 1, "q": 2}}),
        ("{get_attr:[Server, name]}", 10, 2, {"get_attr": ["Server", "name"]}),
        ("", 1, 1, None),
        ("x", 1, 1, "x"),
    ],
)
def test_documents_within_the_limits_load(text: str, max_nodes: int, max_depth: int,
                                          expected: Any) -> None:
    assert safe_yaml.load_yaml(text, "f.yaml", max_nodes=max_nodes,
                             max_depth=max_depth) == expected


@pytest.mark.parametrize(
    ("text", "max_nodes", "max_depth", "fragment"),
    [
        ("[1, 2, 3]", 3, 10, "more than 3 nodes"),
        ("{a: [1]}", 3, 10, "more than 3 nodes"),
        ("{a: [1]}", 10, 1, "nested deeper than 1"),
        (laughs(2, 3), 30, 100, "more than 30 nodes"),
        (laughs(2, 3), 100, 2, "deeper than 2"),
    ],
)
def test_limits_are_parameters(text: str, max_nodes: int, max_depth: int,
                               fragment: str) -> None:
    with pytest.raises(exceptions.InvalidTemplate, match=fragment):
        safe_yaml.load_yaml(text, "f.yaml", max_nodes=max_nodes, max_depth=max_depth)


def write(tmp_path: Path, data: str | bytes, name: str = "in.yaml") -> str:
    path = tmp_path / name
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    return str(path)


ENTRY_POINTS = {
    "plan-environment": lambda text, tmp: planenv.parse_plan_environment(text),
    "cli --file": lambda text, tmp: common.read_yaml_file(write(tmp, text)),
    "cli NAME=VALUE": lambda text, tmp: common.parse_assignments([f"P={text}"]),
    "cli --input-file": lambda text, tmp: _format.parse_inputs([], [write(tmp, text)]),
    "yaml_parse (yaql)": lambda text, tmp: expressions.Evaluator({"t": text}).evaluate(
        "<% yaml_parse($.t) %>"),
    "yaml_parse (jinja)": lambda text, tmp: expressions.Evaluator({"t": text}).evaluate(
        "{{ yaml_parse(t) }}"),
    "clouds.yaml": lambda text, tmp: render.merge_clouds_yaml(text, "heat", {}),
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize(("text", "fragment"), [
    (BILLION_LAUGHS, "yaml_max_nodes"),
    ("a: &a [*a]\n", "recursive alias"),
    ("a: " + "[" * 150 + "]" * 150, "yaml_max_depth"),
])
def test_every_entry_point_refuses(entry: str, text: str, fragment: str,
                                   tmp_path: Path) -> None:
    with pytest.raises(exceptions.InvalidInput, match=fragment):
        ENTRY_POINTS[entry](text, tmp_path)


def test_workbook_loader_reports_a_problem(tmp_path: Path) -> None:
    workbook, problems = workbook_loader.read_file(Path(write(tmp_path, BILLION_LAUGHS)))
    assert workbook is None
    assert "yaml_max_nodes" in str(problems[0]) and "line 6" in str(problems[0])


@pytest.mark.parametrize("data", [
    bytes(range(256)),  # not UTF-8
    b"a: 1\n\x00\x01\x02binary",  # UTF-8, but binary
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
])
def test_binary_file_is_a_clear_input_error(data: bytes, tmp_path: Path) -> None:
    path = write(tmp_path, data, "params.bin")
    with pytest.raises(exceptions.InvalidInput) as info:
        common.read_yaml_file(path)
    message = str(info.value)
    assert "params.bin" in message
    assert "binary" in message or "UTF-8" in message
    assert exceptions.exit_code(info.value) == 2


def test_assignment_that_is_not_yaml_stays_text() -> None:
    assert common.parse_assignments(["A=*nope", "B=[1", "C=3"]) == {
        "A": "*nope", "B": "[1", "C": 3}


def test_a_number_too_long_for_python_is_refused_with_its_line() -> None:
    """Python refuses ``int()`` of more than 4300 digits with a message about
    sys.set_int_max_str_digits (and the CLI exited 1 with it): say what it is, where,
    and how to keep it (issue 29)."""
    digits = "1" * 100_000
    with pytest.raises(exceptions.InvalidTemplate) as refused:
        safe_yaml.load_yaml(f"a: b\nc: [1, {digits}]\n", "big.yaml")
    message = str(refused.value)
    assert "line 2, column 8" in message and "more than 4300 digits" in message
    assert "quote it" in message and "set_int_max_str_digits" not in message
    assert safe_yaml.load_yaml(f"c: '{digits}'\n", "big.yaml") == {"c": digits}
    with pytest.raises(exceptions.InvalidInput, match="Bad value for 'ComputeCount'.*4300"):
        common.parse_assignments([f"ComputeCount={digits}"])


@pytest.mark.parametrize(("text", "where", "value", "kind"), [
    ("a: !!bool maybe\n", "line 1, column 4", "'maybe'", "bool"),
    ("a: b\nc:\n  - !!int abc\n", "line 3, column 5", "'abc'", "int"),
    ("a: [1, !!float x]\n", "line 1, column 8", "'x'", "float"),
    ("x: 1\nday: 2020-02-30\n", "line 2, column 6", "'2020-02-30'", "timestamp"),
    ("a: !!timestamp 2020-13-01\n", "line 1, column 4", "'2020-13-01'", "timestamp"),
], ids=lambda v: str(v)[:20])
def test_a_value_its_tag_cannot_read_is_an_invalid_template(text: str, where: str,
                                                            value: str, kind: str) -> None:
    """PyYAML's constructors raise KeyError or ValueError for a scalar its tag cannot
    read (``!!bool maybe``, the date ``2020-02-30``): a hostile or mistyped template
    was a server error (500) and a traceback in the CLI; it is an invalid template
    naming the value, its line and how to keep it, from loading and from checking."""
    for read in (safe_yaml.load_yaml, safe_yaml.check_yaml):
        with pytest.raises(exceptions.InvalidTemplate) as refused:
            read(text, "t.yaml")
        message = str(refused.value)
        assert where in message and f"{value}, which is not a valid {kind}" in message
        assert "quote it" in message
    assert safe_yaml.load_yaml('day: "2020-02-30"\n', "t.yaml") == {"day": "2020-02-30"}


def _outcome(text: str, build: bool) -> tuple[str, str]:
    try:
        if build:
            safe_yaml.load_yaml(text, "t.yaml")
        else:
            safe_yaml.check_yaml(text, "t.yaml")
    except Exception as exc:  # noqa: BLE001 - compared as they are, whatever they are
        return type(exc).__name__, str(exc)
    return "ok", ""


@pytest.mark.parametrize("text", [
    "a: !!bool maybe\n",
    "a: !!int abc\n",
    "a: [1, !!float x]\n",
    "a: !custom x\n",
    "? [a]\n: b\n",
    "{a: 1, ? {b: 2} : c}\n",
    "<<: 5\n",
    "base: &b 1\n<<: *b\n",
    "day: 2020-02-30\n",
    "a: !!map x\n",
    "- !!str [a]\n",
    "- !!set {a, b}\n- !!omap 3\n",
    f"a: b\nc: [1, {'1' * 5000}]\n",
    "a: !!binary a\n",
], ids=lambda t: t[:24])
def test_a_check_without_building_fails_as_loading(text: str) -> None:
    """check_yaml (the plan create's check of every file; check_yaml_text, of rendered
    output) raises exactly what loading raises, whatever building would refuse."""
    failed = _outcome(text, build=True)
    assert failed[0] != "ok"
    assert _outcome(text, build=False) == failed


def test_a_check_of_a_plain_document_builds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building every Python object of a valid template was half of the check's time."""
    text = ("heat_template_version: rocky\nparameters:\n  Count: {type: number, default: 3}\n"
            "  On: {default: true}\n  Ratio: {default: 1.5}\n  Day: {default: 2024-01-31}\n"
            "  Off: ~\nanchored: &x {a: [1, 2]}\nagain: *x\n'quoted': \"text\"\n")
    assert safe_yaml.load_yaml(text, "t.yaml")["again"] == {"a": [1, 2]}

    def refuse(self: Any, node: Any) -> Any:
        raise AssertionError("built")

    monkeypatch.setattr(yaml.constructor.BaseConstructor, "construct_document", refuse)
    if hasattr(yaml, "CSafeLoader"):
        monkeypatch.setattr(yaml.CSafeLoader, "construct_document", refuse)
    safe_yaml.check_yaml(text, "t.yaml")
    safe_yaml.check_yaml_text(text)
    with pytest.raises(AssertionError, match="built"):
        safe_yaml.load_yaml(text, "t.yaml")
