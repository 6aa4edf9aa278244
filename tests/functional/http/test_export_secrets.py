"""An export over HTTP holds no secret: the plan-environment without its passwords,
no secret parameter in any environment; the Python API and the CLI export a backup
with them (``secrets=False`` leaves them out there too; the CLI's
``--without-secrets`` is in test_cli_plans)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import yaml

from tests.functional.http.conftest import Api, finished
from tests.functional.http.test_server_paths import EXPORT, _refused

SECRET = "s3cr3t-service-value"


def _files(archive: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        return {m.name: tar.extractfile(m).read()  # type: ignore[union-attr]
                for m in tar.getmembers() if m.isfile()}


def _secrets(api: Api) -> list[str]:
    passwords = api.client.passwords.get("p")
    assert passwords, "the plan has passwords"
    return [SECRET, *(str(v) for v in passwords.values())]


def _check_without(files: dict[str, bytes], secrets: list[str]) -> None:
    env = yaml.safe_load(files["plan-environment.yaml"])
    assert "passwords" not in env
    assert env["parameter_defaults"]["ComputeCount"] == 2
    assert "MyServiceSecret" not in env["parameter_defaults"]
    for name, data in files.items():
        for secret in secrets:
            assert secret.encode() not in data, (name, secret[:4])


def test_exports_over_http_leave_the_secrets_out(api: Api, tmp_path: Path) -> None:
    assert api("POST", "/v1/plans?name=p&sample=true").status_code == 201
    api.client.parameters.set("p", {"ComputeCount": 2, "MyServiceSecret": SECRET})
    secrets = _secrets(api)

    exported = api("GET", "/v1/plans/p/export")
    assert exported.status_code == 200
    _check_without(_files(exported.content), secrets)

    _refused(api, EXPORT, {"plan": "p", "output": "p.tar.gz", "secrets": True},
             "'secrets' must be false", "tripleo-flow plan export")
    started = api("POST", EXPORT, json={"input": {"plan": "p", "output": "p.tar.gz"}})
    assert started.status_code == 202, started.text
    assert finished(api, started.json()["id"])["state"] == "SUCCESS"
    _check_without(_files(api("GET", started.json()["downloads"]["output"]).content), secrets)

    # On the server the export is a backup, passwords included; or not, if asked.
    backup = _files(Path(api.client.plans.export("p", tmp_path / "b.tar.gz")).read_bytes())
    env = yaml.safe_load(backup["plan-environment.yaml"])
    assert env["passwords"] and env["parameter_defaults"]["MyServiceSecret"] == SECRET
    lean = api.client.plans.export("p", tmp_path / "l.tar.gz", secrets=False)
    _check_without(_files(Path(lean).read_bytes()), secrets)


#: Secret values nested under innocent parameter names, and a user environment's.
NESTED = {"Nested": {"inner_password": "nested-secret-5e0a91", "port": 5672},
          "Servers": [{"password": "listed-secret-c27f40", "host": "db"}]}
USER_ENVIRONMENT = {"name": "mine.yaml", "files": {"mine.yaml": (
    "parameter_defaults:\n  db_password: user-env-secret-83d1b7\n  DbHost: db.example\n")}}
NESTED_SECRETS = ["nested-secret-5e0a91", "listed-secret-c27f40", "user-env-secret-83d1b7"]


def test_nested_secrets_leave_exports_where_parameters_mask_them(api: Api,
                                                                  tmp_path: Path) -> None:
    assert api("POST", "/v1/plans?name=p&sample=true").status_code == 201
    assert api("PUT", "/v1/plans/p/parameters",
               json={"parameters": NESTED}).status_code == 200
    added = api("POST", "/v1/workflows/tripleo.plan.add_environments/executions",
                json={"input": {"plan": "p", "user_environments": [USER_ENVIRONMENT]}})
    assert added.status_code == 202, added.text
    assert finished(api, added.json()["id"])["state"] == "SUCCESS"

    shown = api("GET", "/v1/plans/p/parameters").json()
    assert shown["Nested"] == {"inner_password": "<secret>", "port": 5672}
    assert shown["Servers"] == [{"password": "<secret>", "host": "db"}]

    exported = _files(api("GET", "/v1/plans/p/export").content)
    env = yaml.safe_load(exported["plan-environment.yaml"])["parameter_defaults"]
    # Left out exactly where GET .../parameters masks: the rest of the value stays.
    assert env["Nested"] == {"port": 5672} and env["Servers"] == [{"host": "db"}]
    [mine] = [name for name in exported if name.endswith("mine.yaml")]
    assert yaml.safe_load(exported[mine]) == {"parameter_defaults": {"DbHost": "db.example"}}
    for name, data in exported.items():
        for secret in NESTED_SECRETS:
            assert secret.encode() not in data, (name, secret)

    # The CLI's --without-secrets is the same rule; a backup keeps every value.
    lean = _files(Path(api.client.plans.export("p", tmp_path / "l.tar.gz",
                                               secrets=False)).read_bytes())
    assert lean == exported
    backup = b"".join(_files(Path(api.client.plans.export(
        "p", tmp_path / "b.tar.gz")).read_bytes()).values())
    assert all(secret.encode() in backup for secret in NESTED_SECRETS)
