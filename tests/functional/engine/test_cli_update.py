"""``tripleo-flow execution update ID --state STATE [--state-info TEXT] [--env JSON]``
(issue 26), as ``mistral execution-update``: on an execution a ``kill -9`` left
INTERRUPTED, ``--state ERROR`` stops it at once (it reads ERROR, as Mistral's, with the text as
its state info and error; nothing runs), then
``--state SUCCESS`` is refused (exit 4: no such transition from an ended execution),
``--state ERROR`` again leaves it as it is, an unknown state or a bad env is refused
(exit 2) and an unknown id is not found (exit 3).

The command runs in this process (:mod:`tests.cli_inprocess`); the ``kill -9`` is a
real second process's, hence a functional test.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.functional.engine.test_cli_cancel import _cli, interrupted


def test_execution_update_from_the_cli(tmp_path: Path) -> None:
    conf, ident = interrupted(tmp_path)

    helped = _cli(conf, "help", "execution", "update").stdout
    assert "--state" in helped and "--state-info" in helped and "--env" in helped
    refused = _cli(conf, "execution", "update", ident, "--state", "SKIPPED", code=2)
    assert "invalid choice" in refused.stderr
    bad_env = _cli(conf, "execution", "update", ident, "--env", "{not json", code=2)
    assert "--env is not JSON" in bad_env.stderr
    no_state = _cli(conf, "execution", "update", ident, code=2)
    assert "new state, env or description" in no_state.stderr

    done = json.loads(_cli(conf, "execution", "update", ident, "--state", "ERROR",
                           "--state-info", "Failure", "-f", "json").stdout)
    assert (done["State"], done["State info"], done["Error"]) == (
        "ERROR", "Failure", "Failure")
    assert json.loads(done["Output"]) == {"result": "Failure"} and done["Finished"]

    ended = _cli(conf, "execution", "update", ident, "-s", "SUCCESS", code=2)
    assert "cannot be stopped with state SUCCESS" in ended.stderr
    again = json.loads(_cli(conf, "execution", "update", ident, "-s", "ERROR", "-i", "x",
                            "-f", "json").stdout)
    assert (again["State"], again["State info"]) == ("ERROR", "Failure")
    with_state = _cli(conf, "execution", "update", ident, "-s", "ERROR", "-d", "x", code=2)
    assert "apart from its state" in with_state.stderr
    described = json.loads(_cli(conf, "execution", "update", ident, "--description",
                                "retried by hand", "-f", "json").stdout)
    assert (described["State"], described["Description"]) == ("ERROR", "retried by hand")
    tasks = json.loads(_cli(conf, "execution", "tasks", ident, "-f", "json").stdout)
    assert all(t["State"] == "PENDING" for t in tasks), tasks  # nothing ran
    missing = _cli(conf, "execution", "update", "no-such-execution", "-s", "ERROR", code=3)
    assert "no-such-execution" in missing.stderr
