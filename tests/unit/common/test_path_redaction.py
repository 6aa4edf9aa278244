"""Server paths out of HTTP answers (core.path_redaction)."""

from __future__ import annotations

import json

from tripleo_flow.common.jsonvalues import dumps
from tripleo_flow.common.path_redaction import DATA, SERVER, TMP, PathRedactor, server_roots

REDACTOR = PathRedactor([("/srv/tf", DATA), ("/srv/tf/venvs/heat", SERVER), ("/tmp", TMP),
                         ("/", SERVER), ("relative/dir", SERVER)])


def _answer(value: object) -> object:
    return json.loads(REDACTOR.json_bytes(dumps(value)))


def test_every_root_in_an_answer_becomes_its_label() -> None:
    answer = {"work_dir": "/srv/tf/work/oc",
              "nested": [{"heat_dir": "/srv/tf/venvs/heat/bin/heat-all"}],
              "message": "Heat at /srv/tf/work/oc/heat-launcher did not answer; see /tmp/x.log.",
              "/srv/tf/plans": "a key is left as it is"}
    assert _answer(answer) == {
        "work_dir": "<data>/work/oc",
        "nested": [{"heat_dir": "<server>/bin/heat-all"}],  # the longest root wins
        "message": "Heat at <data>/work/oc/heat-launcher did not answer; see <tmp>/x.log.",
        "<data>/plans": "a key is left as it is"}


def test_only_whole_roots_are_replaced() -> None:
    kept = ["/srv/tfx/work", "/other/srv/tf/work", "http://h/srv/tf/x", "/tmpfs/a",
            "srv/tf", "/dev/sda", "relative/dir/x", "/"]
    # (a whole path under no root keeps only its last name)
    assert _answer(kept) == ["<server>/work", "<server>/work", "http://h/srv/tf/x",
                             "<server>/a", "srv/tf", "<server>/sda", "relative/dir/x",
                             "<server>"]
    assert _answer(["/srv/tf", "file:///tmp/a", "'/tmp/a'", "(/tmp)"]) == [
        "<data>", "file://<tmp>/a", "'<tmp>/a'", "(<tmp>)"]


def test_roots_that_json_escapes_are_found() -> None:
    odd = PathRedactor([('/srv/a "quoted" dir', DATA), ("/srv/b\\c", SERVER)])
    text = dumps({"a": '/srv/a "quoted" dir/work', "b": "/srv/b\\c/x"}).decode()
    assert json.loads(odd.json_text(text)) == {"a": "<data>/work", "b": "<server>/x"}


def test_restore_turns_the_data_label_back() -> None:
    assert REDACTOR.restore("<data>/uploads/ab.tar.gz") == "/srv/tf/uploads/ab.tar.gz"
    assert REDACTOR.restore("<server>/x") == "<server>/x"
    assert REDACTOR.restore("/srv/tf/x") == "/srv/tf/x"


def test_server_roots_add_real_paths(tmp_path) -> None:  # type: ignore[no-untyped-def]
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    roots = server_roots(str(tmp_path / "link"), [None, "/opt/venv"], ["/tmp"])
    assert (str(tmp_path / "link"), DATA) in roots
    assert (str(real), DATA) in roots
    assert ("/opt/venv", SERVER) in roots and ("/tmp", TMP) in roots


def test_server_paths_take_back_what_answers_name(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from tripleo_flow import exceptions
    from tripleo_flow.client.paths import ServerPaths
    from tripleo_flow.engine.lang.action import INPUT_PATH, WORK_DIR

    data = tmp_path / "data"
    (data / "uploads").mkdir(parents=True)
    upload = data / "uploads" / f"{'a' * 32}.tar.gz"
    upload.write_bytes(b"x")
    paths = ServerPaths.for_data_dir(data)
    kinds = {"templates": INPUT_PATH, "work_dir": WORK_DIR}
    given = {"templates": f"<data>/uploads/{'a' * 32}.tar.gz", "work_dir": "<data>/work/oc"}
    assert paths.apply("wf", kinds, given) == {"templates": str(upload.resolve()),
                                               "work_dir": str(data / "work" / "oc")}
    for bad in ({"templates": "<data>/../../etc/passwd", "work_dir": "oc"},
                {"templates": str(upload), "work_dir": "<data>/plans/oc"},
                {"templates": str(upload), "work_dir": "<data>/work/../oc"}):
        with pytest.raises(exceptions.PathNotAllowed):
            paths.apply("wf", kinds, bad)


def test_a_path_under_no_root_keeps_only_its_last_name() -> None:
    redactor = PathRedactor(server_roots("/var/lib/tf", ["/opt/venv"], ["/tmp"]))
    answer = {"input": {"templates": "/srv/tht", "work_dir": "/var/lib/tf/work/oc",
                        "root": "/", "odd": '/srv/a"b'},
              "downloads": {"output": "/v1/downloads/abc"},
              "message": "Cannot read plan-environment.yaml"}
    shown = json.loads(redactor.json_text(json.dumps(answer)))
    assert shown["input"] == {"templates": "<server>/tht", "work_dir": "<data>/work/oc",
                              "root": "<server>", "odd": '/srv/a"b'}
    assert shown["downloads"] == answer["downloads"] and shown["message"] == answer["message"]
