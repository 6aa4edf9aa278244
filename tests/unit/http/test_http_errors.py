"""How the HTTP API answers errors no resource handled: a client's fault is a 4xx only
when the code reading the request said so; anything else is the server's (500)."""

from __future__ import annotations

import errno
import logging

import falcon
import falcon.testing
import pytest

from tripleo_flow import exceptions
from tripleo_flow.http import errors


class _Raises:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        raise self.error


def _answer(error: Exception) -> falcon.testing.Result:
    app = falcon.App()
    errors.install(app)
    app.add_route("/boom", _Raises(error))
    return falcon.testing.TestClient(app).simulate_get("/boom")


def test_a_bare_value_error_is_a_server_bug_not_the_clients_fault(caplog):
    with caplog.at_level(logging.ERROR, logger=errors.__name__):
        result = _answer(ValueError("invalid literal for int() with base 10: 'x'"))
    assert result.status_code == 500
    assert result.json["error"]["kind"] == "error"
    message = result.json["error"]["message"]
    assert "ValueError" in message and "invalid literal" not in message
    assert any(r.exc_info for r in caplog.records), "the traceback goes to the server log"


def test_an_input_error_raised_by_the_reading_code_is_a_400():
    result = _answer(exceptions.InvalidInput("Refused: 'limit' must be a whole number."))
    assert result.status_code == 400
    assert result.json["error"] == {"kind": "invalid-input",
                                    "message": "Refused: 'limit' must be a whole number."}


@pytest.mark.parametrize(("error", "status"), [
    (OSError(errno.ENAMETOOLONG, "File name too long", "/srv/tf/plans/" + "x" * 300), 400),
    (OSError(errno.EIO, "Input/output error", "/srv/tf/plans/overcloud"), 503),
    (RecursionError("maximum recursion depth exceeded"), 400),
    (KeyError("x"), 500),
])
def test_other_unexpected_errors(error, status):
    result = _answer(error)
    assert result.status_code == status
    assert "/srv/tf" not in result.json["error"]["message"], "no server path in an answer"
