"""A template cannot make Heat's errors spell a password out through the API.

The attack (issue 29): a template turns ``AdminPassword`` into another string (its
characters spaced out, reversed) where Heat wants a number, so Heat's error quotes
it: at validation (``POST /stacks`` refused) or, through a ``get_attr``, when the
resource is created.  Played over HTTP (upload, create, deploy on a real native
Heat); the execution, its tasks, its event stream, the deployment status and
``/deployment/failures`` must hold no form of the password, while an error that
quotes no secret still reads as Heat wrote it.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
from pathlib import Path

import pytest

from tests.functional.heat.test_deploy import FAILING_RESOURCE
from tests.functional.http.conftest import Api
from tests.functional.http.test_api import sse, tarball
from tests.functional.http.test_gui_browser import use_native_heat
from tripleo_flow.client.plans import sample_plan_dir

pytestmark = pytest.mark.functional

#: Where Heat wants a number (its error quotes what it got instead).
LEAK = "\n  Leak:\n    type: OS::Heat::RandomString\n    properties:\n      length: "
SPELLED = "{yaql: {expression: '$.data.toCharArray()%s', data: {get_param: AdminPassword}}}"
#: At validation: Heat quotes the spaced-out password in "Value '...' is not an integer".
AT_VALIDATION = LEAK + SPELLED % '.join(" ")' + "\n"
#: At create: the reversed password reaches the property only once Spelled exists.
AT_CREATE = ("\n  Spelled:\n    type: OS::Heat::Value\n    properties:\n      value: "
             + SPELLED % '.reverse().join(",")' + LEAK + "{get_attr: [Spelled, value]}\n")
#: No run of the password's characters in a row: each one followed by a digit.
WITH_A_FILLER = LEAK + SPELLED % '.join("0")' + "\n"
#: Chunks of 4 characters, each after its index (the run a record's masking looks
#: for is 10 characters long).
CHUNKS = LEAK + ("{yaql: {expression: 'let(p => $.data) -> range(0, $p.len(), 4).select("
                 "concat(str($), $p.substring($, 4))).join(\"\")', "
                 "data: {get_param: AdminPassword}}}\n")
#: What Heat quotes of the password for each attack (None: its forms in _forms).
SPELLINGS = {
    "filler": lambda password: "0".join(password),
    "chunks": lambda password: "".join(f"{i}{password[i:i + 4]}"
                                       for i in range(0, len(password), 4)),
}


def _forms(secret: str) -> list[str]:
    """What to look for: the secret as it is, its letters and digits in order (any
    separator), reversed."""
    plain = re.sub(r"[^0-9a-z]", "", secret.lower())
    return [secret, plain, plain[::-1], base64.b64encode(secret.encode()).decode()]


def _plain(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _deploy(api: Api, tmp_path: Path, name: str, resources: str) -> tuple[str, list, str]:
    """Create plan ``name`` from the sample with ``resources`` added (over HTTP) and
    deploy it; its execution id, event messages and password."""
    tree = tmp_path / name
    shutil.copytree(sample_plan_dir(), tree)
    top = tree / "overcloud.j2.yaml"
    top.write_text(top.read_text().replace("\noutputs:\n", resources + "\noutputs:\n", 1))
    upload = api("POST", "/v1/uploads", data=tarball(tree),
                 headers={"Content-Type": "application/gzip"})
    assert upload.status_code == 201, upload.text
    created = api("POST", "/v1/workflows/create_deployment_plan/executions",
                  json={"input": {"plan": name, "templates": upload.json()["path"]}})
    assert created.status_code == 202, created.text
    with api("GET", f"/v1/executions/{created.json()['id']}/events", stream=True) as response:
        assert sse(response)[-1][1]["state"] == "SUCCESS"
    password = api.client.passwords.get(name)["AdminPassword"]
    started = api("POST", "/v1/workflows/deploy/executions",
                  json={"input": {"plan": name, "heat_type": "native", "work_dir": name}})
    assert started.status_code == 202, started.text
    with api("GET", f"/v1/executions/{started.json()['id']}/events", stream=True) as response:
        messages = sse(response)
    assert messages[-1][1]["state"] == "ERROR", messages[-1]
    return started.json()["id"], messages, password


def _answers(api: Api, name: str, execution_id: str, messages: list) -> str:
    answers = [api("GET", path) for path in (
        f"/v1/executions/{execution_id}", f"/v1/executions/{execution_id}/tasks",
        "/v1/executions", f"/v1/plans/{name}/deployment", f"/v1/plans/{name}/deployment/failures")]
    assert all(answer.status_code == 200 for answer in answers)
    return json.dumps(messages) + "".join(answer.text for answer in answers)


@pytest.mark.parametrize("resources, spelling", [
    (AT_VALIDATION, None), (AT_CREATE, None),
    (WITH_A_FILLER, "filler"), (CHUNKS, "chunks"),
], ids=["validation", "create", "validation-filler", "validation-chunks"])
def test_heat_cannot_be_made_to_spell_a_password(api: Api, tmp_path: Path,
                                                 resources: str, spelling: str | None) -> None:
    use_native_heat(api)
    execution_id, messages, password = _deploy(api, tmp_path, "leak", resources)
    try:
        text = _answers(api, "leak", execution_id, messages)
        status = api("GET", "/v1/plans/leak/deployment").json()
        assert status["deployment_status"] == "DEPLOY_FAILED"
        plain = _plain(text)
        forms = _forms(password)
        if spelling is not None:
            forms.append(SPELLINGS[spelling](password))
        for form in forms:
            assert form not in text and _plain(form) not in plain, form[:4]
        assert "<secret>" in text  # the error was there, masked
        assert "is not an integer" in text  # and the rest of Heat's message
    finally:
        api.client.heat.kill(str(api.client.data_dir / "work" / "leak"))


def test_an_error_quoting_no_secret_is_shown(api: Api, tmp_path: Path) -> None:
    use_native_heat(api)
    execution_id, messages, _ = _deploy(api, tmp_path, "broken", FAILING_RESOURCE)
    try:
        failures = api("GET", "/v1/plans/broken/deployment/failures").json()
        assert any(f["resource"] == "BrokenOnPurpose" and "Test Resource failed" in f["reason"]
                   for f in failures), failures
        assert "BrokenOnPurpose" in api("GET", f"/v1/executions/{execution_id}").text
    finally:
        api.client.heat.kill(str(api.client.data_dir / "work" / "broken"))


#: A resource whose value is the plan-environment file itself: every password.
READS_PLAN_ENVIRONMENT = ("\n  Leak:\n    type: OS::Heat::Value\n    properties:\n"
                          "      value: {get_file: plan-environment.yaml}\n")


def test_a_template_reading_the_plan_environment_never_reaches_heat(api: Api,
                                                                     tmp_path: Path) -> None:
    """``get_file: plan-environment.yaml`` would put every password into the stack
    (issue 29): the deploy fails naming the file, before any stack exists, and the
    parameter schema read is a 400; no password in any answer."""
    use_native_heat(api)
    execution_id, messages, password = _deploy(api, tmp_path, "leak", READS_PLAN_ENVIRONMENT)
    try:
        error = api("GET", f"/v1/executions/{execution_id}").json()["error"]
        assert "it reads 'plan-environment.yaml'" in error, error
        assert "pass the values it needs as parameters" in error
        schema = api("GET", "/v1/plans/leak/parameters/schema")
        assert schema.status_code == 400, schema.text
        assert "it reads 'plan-environment.yaml'" in schema.json()["error"]["message"]
        text = _answers(api, "leak", execution_id, messages) + schema.text
        assert password not in text and _plain(password) not in _plain(text)
        assert api("GET", "/v1/plans/leak/deployment").json()["deployment_status"] \
            != "DEPLOY_SUCCESS"
    finally:
        api.client.heat.kill(str(api.client.data_dir / "work" / "leak"))
