"""Table-driven tests of the name checks, the template tree readers and the
capabilities-map shape check (issue 10: bad input gets a clear error)."""

from __future__ import annotations

import functools
import io
import os
import tarfile
import zlib
from pathlib import Path
from typing import Any

import pytest

from tripleo_flow import config, exceptions
from tripleo_flow.common import value_limits
from tripleo_flow.core.plan import capabilities, validation
from tripleo_flow.http.spec import PLAN_NAME
from tripleo_flow.plans import plan, sources, store

# -- plan, container and object names --------------------------------------------------


@pytest.mark.parametrize("name", ["overcloud", "a", "A1", "over-cloud", "1st", "x" * 128])
def test_valid_plan_names(name: str) -> None:
    assert plan.check_plan_name(name) == name


@pytest.mark.parametrize("name", [
    "-bad", "--help", "-", "", "a b", "a/b", "a_b", "a.b", "é", "a\n", "x" * 129, "x" * 300,
    None, 12,
])
def test_invalid_plan_names(name: Any) -> None:
    with pytest.raises(exceptions.InvalidPlanName) as info:
        plan.check_plan_name(name)
    message = str(info.value)
    assert "starting with a letter or digit" in message and len(message) < 300


def test_the_http_spec_states_the_plan_name_rule() -> None:
    assert PLAN_NAME["pattern"] == plan.PLAN_NAME_PATTERN
    assert PLAN_NAME["maxLength"] == plan.MAX_PLAN_NAME


@pytest.mark.parametrize("name", ["overcloud", "overcloud-messages", "c" * 255, "ü" * 127])
def test_valid_container_names(name: str) -> None:
    assert store.check_container_name(name) == name


@pytest.mark.parametrize("name", [
    "", ".", "..", "a/b", "c" * 256, "ü" * 128, "a\x00b", "a\tb", "\ud800", None,
])
def test_invalid_container_names(name: Any) -> None:
    with pytest.raises(exceptions.InvalidInput):
        store.check_container_name(name)


@pytest.mark.parametrize("name", [
    "a", "a/b.yaml", ".tmp-x", "dir/.tmp-y.yaml", "o" * 255, "/".join(["d" * 255] * 4)[:1024],
    "überall.yaml", "a b.yaml",
])
def test_valid_object_names(name: str) -> None:
    assert store.check_object_name(name) == name


@pytest.mark.parametrize("name", [
    "", "/abs", "a//b", "a/./b", "../x", "a/..", "a/", "o" * 256, "d/" * 520 + "x",
    "a\x00b", "a\nb", "\ud800.yaml", None,
])
def test_invalid_object_names(name: Any) -> None:
    with pytest.raises(exceptions.InvalidInput):
        store.check_object_name(name)


@pytest.mark.parametrize("names, fragment", [
    ([".tripleo-flow/manifest.json"], "keeps for its own files"),
    (["ok.yaml", "o" * 256], "longer than"),
    (["a\x00b"], "control characters"),
])
def test_template_file_names_a_plan_cannot_hold(names: list[str], fragment: str) -> None:
    with pytest.raises(exceptions.InvalidArchive, match=fragment):
        plan.check_file_names("t.tar.gz", names)


# -- parameter names -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["ComputeCount", "_private", "A1", "NtpServer", "x" * 255])
def test_valid_parameter_names(name: str) -> None:
    assert validation.check_parameter_name(name) == name


@pytest.mark.parametrize("name", [
    "../x", "A B", "", "1abc", "a-b", "a.b", "a/b", "Name=", "x" * 256, "é", None, 3,
])
def test_invalid_parameter_names(name: Any) -> None:
    with pytest.raises(exceptions.InvalidParameter, match="Invalid parameter name"):
        validation.check_parameter_name(name)


# -- archives --------------------------------------------------------------------------


def _tarball(members: list[tuple[str, bytes]], extra: list[tarfile.TarInfo] = ()) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as archive:
        for info in extra:
            archive.addfile(info)
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_limits_default_to_the_config_defaults() -> None:
    conf = config.new_conf()
    conf([], project="tripleo-flow", default_config_files=[], default_config_dirs=[])
    assert sources.ARCHIVE_MAX_SIZE == conf.limits.archive_max_size
    assert sources.ARCHIVE_MAX_MEMBERS == conf.limits.archive_max_members
    assert store.DEFAULT_HISTORY_MAX == conf.limits.plan_history_max


@pytest.mark.parametrize("members, max_size, max_members, fragment", [
    ([("a.yaml", b"x" * 600), ("b.yaml", b"x" * 600)], 1000, 100, "more than 1000 bytes"),
    ([("a.yaml", b"x" * 1001)], 1000, 100, "archive_max_size"),
    ([(f"f{i}.yaml", b"") for i in range(11)], 10**6, 10, "more than 10 members"),
])
def test_archives_past_a_limit_are_refused(members: list[tuple[str, bytes]], max_size: int,
                                          max_members: int, fragment: str) -> None:
    with pytest.raises(exceptions.InvalidArchive, match=fragment):
        sources.read_tarball("t.tar.gz", _tarball(members), max_size=max_size,
                             max_members=max_members)


def test_directories_count_as_members() -> None:
    dirs = [tarfile.TarInfo(f"d{i}") for i in range(5)]
    for info in dirs:
        info.type = tarfile.DIRTYPE
    data = _tarball([("a.yaml", b"x")], dirs)
    with pytest.raises(exceptions.InvalidArchive, match="more than 5 members"):
        sources.read_tarball("t.tar.gz", data, max_members=5)
    assert sources.read_tarball("t.tar.gz", data, max_members=6) == {"a.yaml": b"x"}


@functools.cache
def _bomb() -> bytes:
    """A tar.gz of one 200 MB member of zeros (and the archive's end), compressed as it
    is written (never 200 MB in memory), made once for the tests that read it."""
    info = tarfile.TarInfo("big.yaml")
    info.size = 200 << 20
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # a gzip stream
    mib = bytes(1 << 20)
    parts = [packer.compress(info.tobuf())]
    parts += [packer.compress(mib) for _ in range(info.size // len(mib))]
    parts += [packer.compress(bytes(1024)), packer.flush()]
    return b"".join(parts)


@pytest.mark.parametrize("limits", [{"max_size": 1 << 20}, {}], ids=["configured", "default"])
def test_a_bomb_is_refused_before_it_is_expanded(limits: dict[str, int]) -> None:
    """200 MB of zeros in a 200 KB tar.gz: refused after reading the first header."""
    data = _bomb()
    assert len(data) < 400_000
    with pytest.raises(exceptions.InvalidArchive, match="archive_max_size"):
        sources.read_tarball("bomb.tar.gz", data, **limits)


def test_an_archive_within_the_limits_is_read() -> None:
    members = [("top/a.yaml", b"a: 1\n"), ("top/.tmp-b.yaml", b"b: 2\n")]
    assert sources.read_tarball("t.tar.gz", _tarball(members), max_size=12,
                                max_members=2) == {"a.yaml": b"a: 1\n", ".tmp-b.yaml": b"b: 2\n"}


@pytest.mark.parametrize("name, fragment", [
    ("top/.tripleo-flow/manifest.json", "keeps for its own files"),
    ("a/" + "o" * 256, "longer than"),
])
def test_archive_members_a_plan_cannot_hold(name: str, fragment: str) -> None:
    with pytest.raises(exceptions.InvalidArchive, match=fragment):
        sources.read_tarball("t.tar.gz", _tarball([(name, b"x"), ("top/a.yaml", b"x")]))


# -- template directories --------------------------------------------------------------


@pytest.mark.parametrize("links", [
    {"loop.yaml": "loop.yaml"},
    {"a.yaml": "b.yaml", "b.yaml": "a.yaml"},
    {"env/x.yaml": "../env/y.yaml", "env/y.yaml": "x.yaml"},
])
def test_symlink_loops_in_a_template_dir_are_refused(tmp_path: Path,
                                                    links: dict[str, str]) -> None:
    (tmp_path / "overcloud.yaml").write_text("heat_template_version: wallaby\n")
    for name, target in links.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        os.symlink(target, tmp_path / name)
    with pytest.raises(exceptions.InvalidArchive, match="symbolic link loop"):
        sources.read_directory(tmp_path)


def test_template_dir_keeps_dot_tmp_files(tmp_path: Path) -> None:
    (tmp_path / ".tmp-user.yaml").write_text("a: 1\n")
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / ".tmp-x.yaml").write_text("b: 2\n")
    assert sorted(sources.read_directory(tmp_path)) == [".tmp-user.yaml", "env/.tmp-x.yaml"]


# -- capabilities-map shape ------------------------------------------------------------


@pytest.mark.parametrize("cmap, where", [
    (["topics"], "the document must be a mapping"),
    ({"topics": {"title": "x"}}, "topics must be a list of mappings, not dict"),
    ({"topics": ["General"]}, "topics[0] must be a mapping, not str"),
    ({"topics": [{"title": ["x"]}]}, "topics[0].title must be a string"),
    ({"topics": [{"environment_groups": {"a": 1}}]}, "topics[0].environment_groups must be"),
    ({"topics": [{}, {"environment_groups": [[]]}]}, "topics[1].environment_groups[0] must"),
    ({"topics": [{"environment_groups": [{"environments": "x.yaml"}]}]},
     "topics[0].environment_groups[0].environments must be a list"),
    ({"topics": [{"environment_groups": [{"environments": ["x.yaml"]}]}]},
     "topics[0].environment_groups[0].environments[0] must be a mapping, not str"),
    ({"topics": [{"environment_groups": [{"environments": [{"file": ["x"]}]}]}]},
     "environments[0].file must be a file name"),
    ({"topics": [{"environment_groups": [{"environments": [
        {"file": "x.yaml", "requires": "y.yaml"}]}]}]},
     "environments[0].requires must be a list of file names, not str"),
])
def test_wrong_shape_capabilities_maps_name_the_bad_entry(cmap: Any, where: str) -> None:
    for call in (lambda: capabilities.check_capabilities_map(cmap),
                 lambda: capabilities.get_capabilities(cmap, {}, []),
                 lambda: capabilities.update_environments({}, cmap, [], {})):
        with pytest.raises(exceptions.InvalidTemplate) as info:
            call()
        assert "capabilities-map.yaml" in str(info.value)
        assert where in str(info.value)


@pytest.mark.parametrize("cmap", [
    None, {}, {"topics": None}, {"topics": []},
    {"topics": [{"title": "T", "environment_groups": [{"environments": None}]}]},
    {"topics": [{"environment_groups": [{"environments": [{"title": "no file"}]}]}]},
])
def test_usable_capabilities_maps(cmap: Any) -> None:
    assert capabilities.check_capabilities_map(cmap) == cmap


# -- how many entries one collection of an input holds ([limits] input_max_items) ----

@pytest.mark.parametrize("value, limit, largest", [
    ("x" * 1000, 5, 0),
    ({}, 5, 0),
    ({"a": 1, "b": [1, 2, 3]}, 5, 3),
    ([[1] * 4, {"k": list(range(5))}], 5, 5),
    ({"deep": [{"x": [{"y": list(range(7))}]}]}, 5, 7),   # found at any depth
    ((1, 2, (3, 4, 5, 6)), 5, 4),
    ({f"P{i}": i for i in range(300_000)}, 100_000, 300_000),
])
def test_largest_collection(value: Any, limit: int, largest: int) -> None:
    assert value_limits.largest_collection(value, limit) == largest


def test_a_collection_past_input_max_items_is_refused_naming_the_option() -> None:
    value_limits.check_items({"P": list(range(5))}, 5, "Input 'parameters'")
    with pytest.raises(exceptions.InvalidInput) as info:
        value_limits.check_items({"P": list(range(6))}, 5, "Input 'parameters'")
    message = str(info.value)
    assert message.startswith("Input 'parameters' holds 6 entries")
    assert "[limits] input_max_items" in message


def test_a_deep_value_is_walked_without_recursion() -> None:
    value: Any = [1, 2]
    for _ in range(10_000):
        value = [value]
    assert value_limits.largest_collection(value, 5) == 2


def test_an_execution_names_the_input_or_environment_past_the_limit() -> None:
    value_limits.check_inputs("w", {"a": [1, 2]}, {"e": [1, 2]}, limit=2)
    for inputs, env, named in (({"a": [1, 2, 3]}, None, "Input 'a' of workflow 'w'"),
                               ({"a": 1}, {"e": [1, 2, 3]}, "The environment of workflow 'w'")):
        with pytest.raises(exceptions.InvalidInput, match=named):
            value_limits.check_inputs("w", inputs, env, limit=2)


@pytest.mark.parametrize(("text", "line"), [
    ("a: 1\nb: 2\nc: 3\nd: 4\n", 4),                              # a mapping of 4
    ("- 1\n- 2\n- 3\n- 4\n", 4),                                  # a list of 4
    ("top:\n  x: [1, 2, 3, 4]\n", 2),                             # nested, flow style
    ("p: {a: 1, b: 2, c: {d: 1}, e: 5}\n", 1),                    # a mapping value counts one
    ("- [1, 2]\n- [3]\n- {a: 1}\n- x\n", 4),
])
def test_yaml_with_too_many_entries_is_refused_before_it_is_built(text: str, line: int) -> None:
    with pytest.raises(exceptions.InvalidInput) as caught:
        value_limits.check_yaml_entries(text, 3, "File 'p.yaml'")
    message = str(caught.value)
    assert message.startswith("File 'p.yaml' holds more than 3 entries")
    assert f"(line {line})" in message and "[limits] input_max_items" in message


@pytest.mark.parametrize("text", [
    "a: 1\nb: 2\nc: 3\n", "- 1\n- 2\n- 3\n", "a: [1, 2, 3]\nb: {c: 1, d: 2, e: 3}\nf: 1\n",
    "a: &x [1, 2, 3]\nb: *x\nc: *x\n",   # aliases count once where they stand
    "{unclosed: [1, 2", "", "just text",  # not the count's business: the parser's
])
def test_yaml_within_the_entries_limit_passes(text: str) -> None:
    value_limits.check_yaml_entries(text, 3, "File 'p.yaml'")


def test_300000_parameters_are_refused_at_the_first_entry_past_the_limit() -> None:
    text = "parameter_defaults:\n" + "".join(f"  P{i}: {i}\n" for i in range(300_000))
    with pytest.raises(exceptions.InvalidInput, match=r"\(line 100002\)"):
        value_limits.check_yaml_entries(text.encode(), value_limits.INPUT_MAX_ITEMS, "File 'p'")
