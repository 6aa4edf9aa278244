"""The differential tests' comparison (tests/oracle/reference.py) finds what differs."""

from __future__ import annotations

from pathlib import Path

from tests.oracle import reference


def _project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_differences_after_yaml_load(tmp_path: Path) -> None:
    ours = _project(tmp_path / "a", {
        "inv.yaml": "g:\n  hosts: {h: {x: 1, y: 2}}\n", "same.yaml": "{a: [1, 2]}\n",
        "script.sh": "#!/bin/sh\necho: [\n", "mine.cfg": "x", ".git/HEAD": "ref"})
    theirs = _project(tmp_path / "b", {
        "inv.yaml": "g:\n  hosts:\n    h: {x: 1, z: 3}\n", "same.yaml": "a:\n- 1\n- 2\n",
        "script.sh": "#!/bin/sh\necho: [\n", "theirs.txt": "y", ".gitignore": "*.tar.gz\n"})
    assert reference.differences(ours, theirs) == [
        "mine.cfg: file only ours", "theirs.txt: file only tripleo-common's",
        "inv.yaml/g/hosts/h/y: only ours (2)", "inv.yaml/g/hosts/h/z: only tripleo-common's (3)"]
    allowed = {"inv.yaml/g/hosts/h/y": "why", "mine.cfg": "why"}
    assert reference.differences(ours, theirs, allowed) == [
        "theirs.txt: file only tripleo-common's", "inv.yaml/g/hosts/h/z: only tripleo-common's (3)"]


def test_a_changed_value_is_named(tmp_path: Path) -> None:
    ours = _project(tmp_path / "a", {"f.yaml": "k: [1, 2]\n"})
    theirs = _project(tmp_path / "b", {"f.yaml": "k: [1, 3]\n"})
    assert reference.differences(ours, theirs) == [
        "f.yaml/k: ours [1, 2] != tripleo-common's [1, 3]"]
