"""The workbooks and actions of the HTTP API (issue 30: the CLI's ``workbook
list|validate|create|update|delete`` and ``action list|show``, for the GUI): a
workbook travels as its YAML text, its refusals are the CLI's words naming the file
the user gave (never where the server kept it), shipped workbooks are read-only."""

from __future__ import annotations

import pytest

from tests.engine_helpers import WORKBOOKS
from tests.functional.http.conftest import Api

pytestmark = pytest.mark.functional

GOOD = (WORKBOOKS / "good" / "std_only.yaml").read_text()


def _message(response: object) -> str:
    return str(response.json()["error"]["message"])  # type: ignore[attr-defined]


def test_a_user_workbook_is_validated_created_updated_and_deleted(api: Api) -> None:
    shipped = {w["name"]: w for w in api("GET", "/v1/workbooks").json()}
    assert shipped["tripleo.heat"]["shipped"] is True and "launch" in " ".join(
        shipped["tripleo.heat"]["workflows"])
    assert "/" not in shipped["tripleo.heat"]["file"]

    valid = api("POST", "/v1/workbooks/validate", json={"definition": GOOD,
                                                        "filename": "mine.yaml"})
    assert valid.status_code == 200 and valid.json() == {"valid": True}, valid.text
    assert api("GET", "/v1/workbooks/std_only").status_code == 404  # nothing added

    made = api("POST", "/v1/workbooks", json={"definition": GOOD, "filename": "mine.yaml"})
    assert made.status_code == 201, made.text
    assert made.json()["workflows"] == ["broken", "greet"] and made.json()["shipped"] is False
    names = {w["name"] for w in api("GET", "/v1/workflows").json()}
    assert "std_only.greet" in names
    again = api("POST", "/v1/workbooks", json={"definition": GOOD, "filename": "mine.yaml"})
    assert again.status_code == 409 and "already exists" in _message(again)
    assert _message(again) == ("Workbook 'std_only' already exists. Replace it with: "
                               "PUT /v1/workbooks")  # the CLI's words not kept beside

    changed = GOOD.replace("Uses only", "Now uses only")
    updated = api("PUT", "/v1/workbooks", json={"definition": changed})
    assert updated.status_code == 200, updated.text
    shown = api("GET", "/v1/workbooks/std_only").json()
    assert shown["definition"] == changed and shown["description"].startswith("Now uses")

    assert api("DELETE", "/v1/workbooks/std_only").status_code == 204
    assert api("GET", "/v1/workbooks/std_only").status_code == 404
    gone = api("PUT", "/v1/workbooks", json={"definition": GOOD})
    assert gone.status_code == 404 and "does not exist" in _message(gone)


def test_a_bad_or_shadowing_workbook_is_refused_in_the_clis_words(api: Api) -> None:
    bad = api("POST", "/v1/workbooks/validate",
              json={"definition": "name: x\nworkflows: [\n", "filename": "broken.yaml"})
    assert bad.status_code == 400
    message = _message(bad)
    assert message.startswith("Invalid workbook:") and "broken.yaml: not valid YAML at line" \
        in message and "tripleo-flow-workbook-" not in message and "/tmp" not in message

    shadow = GOOD.replace("name: std_only", "name: tripleo.heat")
    refused = api("POST", "/v1/workbooks", json={"definition": shadow})
    assert refused.status_code == 409
    assert "ships with tripleo-flow; give yours another name" in _message(refused)
    assert api("DELETE", "/v1/workbooks/tripleo.heat").status_code == 409
    assert "tripleo.heat" in {w["name"] for w in api("GET", "/v1/workbooks").json()}
    assert api("POST", "/v1/workbooks", json={"text": GOOD}).status_code == 400
    assert not [w for w in api("GET", "/v1/workbooks").json() if not w["shipped"]]


def test_actions_are_listed_and_shown(api: Api) -> None:
    listed = {a["name"]: a for a in api("GET", "/v1/actions").json()}
    assert [i["name"] for i in listed["std.echo"]["inputs"]][:1] == ["output"]
    shown = api("GET", "/v1/actions/std.echo").json()
    assert shown["target"].endswith(":Echo")
    assert api("GET", "/v1/actions/no.such").status_code == 404
