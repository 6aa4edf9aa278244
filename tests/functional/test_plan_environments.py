"""User environments (``-e``) and data files (``-r``/``-n``/``--vip-file``) on both plan
stores (local, real Swift), through the Python API, the CLI and the HTTP API: stored
with the files they refer to, applied last in order, and a bad one changes nothing."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures_plans import make_client, snapshot
from tests.functional.http.conftest import Api, serving
from tests.plan_trees import ROLES, basic_tree, write_tree
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.plan import heatfiles
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.store import PlanStore

pytestmark = pytest.mark.functional

REG = "overcloud-resource-registry-puppet.yaml"
NIC = "heat_template_version: rocky\nresources:\n  v:\n    type: OS::Heat::Value\n" \
      "    properties: {value: {get_file: ../scripts/hi.sh}}\n"


def _env_dir(root: Path) -> Path:
    """A directory of environment files as an operator keeps them."""
    return write_tree(root, {
        "net.yaml": "resource_registry:\n  OS::TripleO::Controller::Net: nic/ctl.yaml\n"
                    "parameter_defaults: {ComputeCount: 3, Tag: net}\n",
        "nic/ctl.yaml": NIC,
        "scripts/hi.sh": "echo hi\n",
        "params.yaml": "parameter_defaults: {ComputeCount: 5, Tag: params}\n",
        "later.yaml": "parameter_defaults: {Tag: later}\n",
        "outside.yaml": "resource_registry:\n  OS::X: ../elsewhere/x.yaml\n",
        "absolute.yaml": "resource_registry:\n  OS::X: /usr/share/t/x.yaml\n",
        "broken.yaml": "parameter_defaults: {A: [\n",
        "deep/escape.yaml": "resource_registry:\n  OS::X: t.yaml\n",
        "deep/t.yaml": "resources: {r: {type: ../../../x.yaml}}\n",
    })


def _state(store: PlanStore, plan: str = "overcloud") -> tuple[dict[str, bytes], int]:
    """Every object of the plan and the number of plan-environment versions."""
    return snapshot(store, plan), len(store.list_versions(plan, "plan-environment.yaml"))


def _user(client: Client, plan: str = "overcloud") -> list[str]:
    return [e["path"] for e in client.environments.list(plan) if e["user"]]


def _applied(client: Client, plan: str = "overcloud") -> tuple[list[str], dict[str, Any]]:
    """The environment files of the stack request, in order, and the parameter values
    they set (the later ones win), without the plan's own parameter_defaults."""
    files = dict(client.plans._repo.read_all(plan))
    request = heatfiles.build_request(files, client.plans._repo.environment(plan))
    names = [heatfiles.object_name(u) for u in request["environment_files"]]
    values: dict[str, Any] = {}
    for url in request["environment_files"][:-1]:
        values.update(safe_yaml.load_yaml(request["files"][url], url).get("parameter_defaults")
                      or {})
    return names, values


BAD = [("outside.yaml", "'../elsewhere/x.yaml', which is outside the environment's directory"),
       ("absolute.yaml", "'/usr/share/t/x.yaml', an absolute path"),
       ("broken.yaml", "YAML error at line 2"),
       ("deep/escape.yaml", "'../../../x.yaml' (in 't.yaml'), which is outside"),
       ("missing.yaml", "the file does not exist")]


# -- Python API ----------------------------------------------------------------


def test_create_with_environments_and_data_files(client: Client, tmp_path: Path) -> None:
    envs = _env_dir(tmp_path / "envs")
    roles = tmp_path / "my_roles.yaml"
    roles.write_text(ROLES.replace("Compute", "Worker"))
    nets = tmp_path / "my_nets.yaml"
    nets.write_text("- name: Storage\n  ip_subnet: 172.16.1.0/24\n")
    vips = tmp_path / "my_vips.yaml"
    vips.write_text("- network: storage\n  ip_address: 172.16.1.5\n")
    templates = write_tree(tmp_path / "t", basic_tree())
    created = client.plans.create("overcloud", templates, environments=[
        envs / "net.yaml", envs / "params.yaml"], roles_file=roles, networks_file=nets,
                                  vip_file=vips)
    assert created["environments"] == ["user-environments/1/net.yaml",
                                       "user-environments/2/params.yaml"]
    store = client._session.store
    names = store.list_objects("overcloud")
    assert {"user-environments/1/net.yaml", "user-environments/1/nic/ctl.yaml",
            "user-environments/1/scripts/hi.sh", "user-environments/2/params.yaml"} <= set(names)
    assert client.roles.list("overcloud") == ["Controller", "Worker"]
    assert client.networks.list("overcloud") == ["Storage"]
    assert store.get_object("overcloud", "vip_data.yaml") == vips.read_bytes()
    assert client.environments.list("overcloud") == [
        {"order": 1, "path": REG, "user": False},
        {"order": 2, "path": "user-environments/1/net.yaml", "user": True},
        {"order": 3, "path": "user-environments/2/params.yaml", "user": True}]
    order, values = _applied(client)
    assert order[-3:] == ["user-environments/1/net.yaml", "user-environments/2/params.yaml",
                          heatfiles.USER_ENVIRONMENT]
    assert values["ComputeCount"] == 5 and values["Tag"] == "params"  # the last one wins
    request = heatfiles.build_request(dict(client.plans._repo.read_all("overcloud")),
                                      client.plans._repo.environment("overcloud"))
    assert heatfiles.BASE_URL + "user-environments/1/scripts/hi.sh" in request["files"]


def test_add_remove_and_update_keep_the_order(client: Client, tmp_path: Path) -> None:
    envs = _env_dir(tmp_path / "envs")
    client.plans.create("overcloud", write_tree(tmp_path / "t", basic_tree()),
                        environments=[envs / "params.yaml"])
    assert client.environments.add("overcloud", [envs / "later.yaml"]) == [
        "user-environments/2/later.yaml"]
    client.environments.add("overcloud", [envs / "net.yaml"], position=1)
    assert _user(client) == ["user-environments/3/net.yaml", "user-environments/1/params.yaml",
                             "user-environments/2/later.yaml"]
    assert _applied(client)[1]["Tag"] == "later"
    client.capabilities.update("overcloud", {"environments/storage.yaml": True})
    listed = client.environments.list("overcloud")
    assert "environments/storage.yaml" in [e["path"] for e in listed]
    assert [e["user"] for e in listed] == [False] * (len(listed) - 3) + [True] * 3

    client.environments.remove("overcloud", ["user-environments/2/later.yaml"])
    assert _applied(client)[1]["Tag"] == "params"
    assert not any(n.startswith("user-environments/2/")
                   for n in client._session.store.list_objects("overcloud"))

    # An update without -e keeps them; with -e they become exactly the given ones.
    client.plans.update("overcloud", write_tree(tmp_path / "t2", basic_tree()))
    assert _user(client) == ["user-environments/3/net.yaml", "user-environments/1/params.yaml"]
    client.plans.update("overcloud", write_tree(tmp_path / "t3", basic_tree()),
                        environments=[envs / "later.yaml", envs / "params.yaml"])
    assert _user(client) == ["user-environments/4/later.yaml",
                             "user-environments/5/params.yaml"]
    assert sorted({n.split("/")[1] for n in client._session.store.list_objects("overcloud")
                   if n.startswith("user-environments/")}) == ["4", "5"]
    # The same files again (as a repeated deploy -e) change nothing.
    before = _state(client._session.store)
    assert client.environments.set("overcloud", [envs / "later.yaml", envs / "params.yaml"]) \
        == ["user-environments/4/later.yaml", "user-environments/5/params.yaml"]
    assert _state(client._session.store) == before


@pytest.mark.parametrize(("name", "expected"), BAD)
def test_a_bad_environment_leaves_the_plan_unchanged(client: Client, tmp_path: Path,
                                                     name: str, expected: str) -> None:
    envs = _env_dir(tmp_path / "envs")
    templates = write_tree(tmp_path / "t", basic_tree())
    client.plans.create("overcloud", templates, environments=[envs / "params.yaml"])
    before = _state(client._session.store)
    calls = [lambda: client.environments.add("overcloud", [envs / "later.yaml", envs / name]),
             lambda: client.plans.update("overcloud", templates,
                                         environments=[envs / "later.yaml", envs / name]),
             lambda: client.environments.set("overcloud", [envs / name])]
    for call in calls:
        with pytest.raises(exceptions.InvalidTemplate) as caught:
            call()
        assert expected in str(caught.value)
        assert _state(client._session.store) == before
    with pytest.raises(exceptions.InvalidTemplate):
        client.plans.create("other", templates, environments=[envs / name])
    assert client.plans.list() == [{"name": "overcloud", "description": "",
                                    "deployment_status": ""}]


def test_a_failure_after_the_environments_are_stored_reverts_them(client: Client,
                                                                  tmp_path: Path) -> None:
    """An update whose rendering fails after its environments were stored puts the
    plan back: the earlier user environments and their files included."""
    envs = _env_dir(tmp_path / "envs")
    client.plans.create("overcloud", write_tree(tmp_path / "t", basic_tree()),
                        environments=[envs / "net.yaml"])
    before = _state(client._session.store)[0]
    broken = {**basic_tree(), "overcloud.j2.yaml": "{% for x in %}\n"}
    with pytest.raises(exceptions.InvalidTemplate):
        client.plans.update("overcloud", write_tree(tmp_path / "bad", broken),
                            environments=[envs / "params.yaml"])
    after = _state(client._session.store)[0]
    assert after == before


def test_bad_data_files_and_unknown_plans_are_refused(client: Client, tmp_path: Path) -> None:
    envs = _env_dir(tmp_path / "envs")
    templates = write_tree(tmp_path / "t", basic_tree())
    client.plans.create("overcloud", templates)
    before = _state(client._session.store)
    bad_roles = tmp_path / "roles.yaml"
    bad_roles.write_text("- name: Controller\n- name: controller\n")
    with pytest.raises(exceptions.InvalidRoles, match="defined as 'Controller' and"):
        client.plans.update("overcloud", templates, roles_file=bad_roles)
    bad_nets = tmp_path / "nets.yaml"
    bad_nets.write_text("- name: Ext\n  vlan: 5000\n")
    with pytest.raises(exceptions.InvalidNetworks, match="vlan 5000"):
        client.plans.update("overcloud", templates, networks_file=bad_nets)
    with pytest.raises(exceptions.InvalidInput, match="Cannot read"):
        client.plans.update("overcloud", templates, vip_file=tmp_path / "none.yaml")
    with pytest.raises(exceptions.PlanNotFound):
        client.environments.add("ghost", [envs / "params.yaml"])
    with pytest.raises(exceptions.InvalidInput, match="comes with the plan's templates"):
        client.environments.remove("overcloud", [REG])
    with pytest.raises(exceptions.InvalidInput, match="is not among the environments"):
        client.environments.remove("overcloud", ["user-environments/9/x.yaml"])
    with pytest.raises(exceptions.InvalidInput, match="give a number from 1 to 1"):
        client.environments.add("overcloud", [envs / "params.yaml"], position=3)
    assert _state(client._session.store) == before
    with pytest.raises(exceptions.InvalidRoles):
        client.plans.create("other", templates, roles_file=bad_roles)
    assert [p["name"] for p in client.plans.list()] == ["overcloud"]


# -- CLI (python -m tripleo_flow.cli.main) ---------------------------------------


@pytest.fixture(params=["local", "swift"])
def cli(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Any, PlanStore]:
    conf = tmp_path / "tripleo-flow.conf"
    text = f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n"
    store: PlanStore
    if request.param == "swift":
        store = request.getfixturevalue("swift_store")
        server = request.getfixturevalue("swift_server")
        user, key = request.getfixturevalue("swift_account")  # the store's
        text += (f"[plan_store]\nbackend = swift\n[swift]\nauth_url = {server.auth_url}\n"
                 f"user = {user}\nkey = {key}\n")
    else:
        store = LocalStore(tmp_path / "data/plans")
    conf.write_text(text)

    def run(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([sys.executable, "-m", "tripleo_flow.cli.main", "--config-file",
                               str(conf), *args], capture_output=True, text=True, timeout=120)
        assert proc.returncode == code, (args, proc.returncode, proc.stderr)
        return proc

    return run, store


def test_environments_through_the_cli(cli: tuple[Any, PlanStore], tmp_path: Path) -> None:
    run, store = cli
    envs = _env_dir(tmp_path / "envs")
    templates = write_tree(tmp_path / "t", basic_tree())
    roles = tmp_path / "roles.yaml"
    roles.write_text(ROLES.replace("Compute", "Worker"))
    run("plan", "create", "overcloud", "--templates", str(templates), "-e",
        str(envs / "net.yaml"), "--environment-file", str(envs / "params.yaml"), "-r", str(roles))
    listed = json.loads(run("plan", "environment", "list", "overcloud", "-f", "json").stdout)
    assert listed == [{"order": 1, "path": REG, "user": False},
                      {"order": 2, "path": "user-environments/1/net.yaml", "user": True},
                      {"order": 3, "path": "user-environments/2/params.yaml", "user": True}]
    assert "Worker" in run("roles", "list", "--plan", "overcloud", "-f", "value").stdout
    assert store.get_object("overcloud", "user-environments/1/scripts/hi.sh") == b"echo hi\n"

    added = json.loads(run("plan", "environment", "add", "overcloud", str(envs / "later.yaml"),
                           "--position", "1", "-f", "json").stdout)
    assert [e["path"] for e in added if e["user"]] == [
        "user-environments/3/later.yaml", "user-environments/1/net.yaml",
        "user-environments/2/params.yaml"]
    left = json.loads(run("plan", "environment", "remove", "overcloud",
                          "user-environments/1/net.yaml", "-f", "json").stdout)
    assert [e["path"] for e in left] == [REG, "user-environments/3/later.yaml",
                                         "user-environments/2/params.yaml"]
    run("plan", "update", "overcloud", "--templates", str(templates), "-e",
        str(envs / "params.yaml"))
    listed = json.loads(run("plan", "environment", "list", "overcloud", "-f", "json").stdout)
    assert [e["path"] for e in listed] == [REG, "user-environments/4/params.yaml"]

    before = _state(store)
    for name, expected in BAD:
        proc = run("plan", "environment", "add", "overcloud", str(envs / name), code=2)
        assert expected in proc.stderr and "Traceback" not in proc.stderr
        proc = run("plan", "update", "overcloud", "--templates", str(templates), "-e",
                   str(envs / name), code=2)
        assert expected in proc.stderr
        proc = run("deploy", "--plan", "overcloud", "-e", str(envs / name), code=2)
        assert expected in proc.stderr
    run("plan", "environment", "add", "ghost", str(envs / "params.yaml"), code=3)
    run("plan", "environment", "remove", "overcloud", REG, code=2)
    assert _state(store) == before
    history = json.loads(run("plan", "history", "overcloud", "-f", "json").stdout)
    assert len(history) == before[1]


# -- HTTP ------------------------------------------------------------------------


@pytest.fixture
def api(tmp_path: Path, plan_store: PlanStore) -> Iterator[Api]:
    client = make_client(tmp_path, plan_store)
    token = secrets.token_hex(16)
    client.conf.set_override("auth_token", token, group="api")
    with serving(client, token) as running:
        yield running


def _as_json(path: Path) -> dict[str, Any]:
    from tripleo_flow.plans.sources import read_environment_file

    return read_environment_file(path).to_json()


def test_environments_over_http(api: Api, tmp_path: Path) -> None:
    envs = _env_dir(tmp_path / "envs")
    api.client.plans.create("overcloud", write_tree(tmp_path / "t", basic_tree()))
    added = api("POST", "/v1/plans/overcloud/environments",
                json={"environments": [_as_json(envs / "net.yaml"),
                                       _as_json(envs / "params.yaml")]})
    assert added.status_code == 200, added.text
    assert added.json()["added"] == ["user-environments/1/net.yaml",
                                     "user-environments/2/params.yaml"]
    first = api("POST", "/v1/plans/overcloud/environments",
                json={"environments": [_as_json(envs / "later.yaml")], "position": 1})
    assert first.status_code == 200, first.text
    listed = api("GET", "/v1/plans/overcloud/environments").json()
    assert [e["path"] for e in listed if e["user"]] == [
        "user-environments/3/later.yaml", "user-environments/1/net.yaml",
        "user-environments/2/params.yaml"]
    assert _applied(api.client)[1]["Tag"] == "params"
    removed = api("POST", "/v1/plans/overcloud/environments/remove",
                  json={"paths": ["user-environments/2/params.yaml"]})
    assert removed.status_code == 200, removed.text
    assert _applied(api.client)[1]["Tag"] == "net"

    before = _state(api.client._session.store)
    net = _as_json(envs / "net.yaml")
    missing = {"name": "net.yaml", "files": {"net.yaml": net["files"]["net.yaml"]}}
    escaping = {"name": "e.yaml", "files": {"e.yaml": "resource_registry: {OS::X: ../x.yaml}\n",
                                            "../x.yaml": "resources: {}\n"}}
    for body, status, expected in [
            ({"environments": [missing]}, 400, "which does not exist at 'nic/ctl.yaml'"),
            ({"environments": [escaping]}, 400, "outside the environment's directory"),
            ({"environments": [{"name": "b.yaml", "files": {"b.yaml": "a: [\n"}}]}, 400,
             "YAML error"),
            ({"environments": ["net.yaml"]}, 400, "'environments[0]' must be of type dict"),
            ({"environments": [net], "position": 9}, 400, "give a number from 1 to 3"),
            ({}, 400, "needs 'environments'")]:
        response = api("POST", "/v1/plans/overcloud/environments", json=body)
        assert response.status_code == status, response.text
        assert expected in response.json()["error"]["message"]
    assert api("POST", "/v1/plans/ghost/environments",
               json={"environments": [net]}).status_code == 404
    assert api("POST", "/v1/plans/overcloud/environments/remove",
               json={"paths": [REG]}).status_code == 400
    assert _state(api.client._session.store) == before


def test_data_files_of_the_upload_over_http(api: Api, tmp_path: Path) -> None:
    """``roles_file``/``networks_file``/``vip_file`` name files of the uploaded tree (the
    CLI's -r, -n, --vip-file); a name that is not one of its files changes nothing."""
    from tests.functional.http.test_api import tarball

    tree = basic_tree()
    tree["custom/my_roles.yaml"] = ROLES.replace("Compute", "Worker")
    tree["custom/nets.yaml"] = "- name: Storage\n  ip_subnet: 172.16.1.0/24\n"
    tree["custom/vips.yaml"] = "- network: storage\n  ip_address: 172.16.1.5\n"
    body = tarball(write_tree(tmp_path / "t", tree))
    gzip = {"Content-Type": "application/gzip"}
    created = api("POST", "/v1/plans?name=overcloud&roles_file=custom/my_roles.yaml"
                  "&networks_file=./custom/nets.yaml&vip_file=custom/vips.yaml",
                  data=body, headers=gzip)
    assert created.status_code == 201, created.text
    assert api.client.roles.list("overcloud") == ["Controller", "Worker"]
    assert api.client.networks.list("overcloud") == ["Storage"]
    assert api.client._session.store.get_object("overcloud", "vip_data.yaml") == \
        tree["custom/vips.yaml"].encode()

    tree["custom/other_roles.yaml"] = ROLES.replace("Compute", "Storage")
    body = tarball(write_tree(tmp_path / "t2", tree))
    updated = api("PUT", "/v1/plans/overcloud?roles_file=custom/other_roles.yaml",
                  data=body, headers=gzip)
    assert updated.status_code == 200, updated.text
    assert api.client.roles.list("overcloud") == ["Controller", "Storage"]

    before = _state(api.client._session.store)
    for method, url, expected in [
            ("PUT", "/v1/plans/overcloud?roles_file=../etc/passwd", "is not a file of the upload"),
            ("PUT", "/v1/plans/overcloud?roles_file=/etc/passwd", "is not a file of the upload"),
            ("PUT", "/v1/plans/overcloud?networks_file=custom", "is not a file of the upload"),
            ("POST", "/v1/plans?name=other&sample=true&vip_file=custom/vips.yaml",
             "send the plan as a .tar.gz body")]:
        response = api(method, url, data=body, headers=gzip)
        assert response.status_code == 400, response.text
        assert expected in response.json()["error"]["message"]
    assert _state(api.client._session.store) == before
    assert [p["name"] for p in api.client.plans.list()] == ["overcloud"]


# -- the real THT 18.0.0 -----------------------------------------------------------


def test_tht_18_plan_with_an_environment_file(tmp_path: Path) -> None:
    """THT 18.0.0 created with ``-e``: its default network and VIP data are the plan's,
    and the stack request applies the user's file after every environment of the
    plan's own (only the plan's parameter_defaults come later)."""
    from tests.tht import fetch_tree_dir

    client = make_client(tmp_path, LocalStore(tmp_path / "plans"))
    env = tmp_path / "envs" / "ntp.yaml"
    env.parent.mkdir()
    env.write_text("parameter_defaults:\n  NtpServer: [ntp.example.com]\n"
                   "  ControllerCount: 1\n")
    tree = fetch_tree_dir("18.0.0")
    try:
        client.plans.create("overcloud", tree, environments=[env])
        store = client._session.store
        assert store.get_object("overcloud", "network_data.yaml") == \
            (tree / "network_data_default.yaml").read_bytes()
        assert store.get_object("overcloud", "vip_data.yaml") == \
            (tree / "vip_data_default.yaml").read_bytes()
        order, values = _applied(client)
        assert order[0] == REG
        assert order[-2:] == ["user-environments/1/ntp.yaml", heatfiles.USER_ENVIRONMENT]
        assert values["NtpServer"] == ["ntp.example.com"]
        assert client.parameters.get("overcloud") == {}  # a file's values stay in the file
    finally:
        client.close()


def test_deploy_with_environment_files_updates_the_plan_first(tmp_path: Path) -> None:
    """``deploy -e``: a bad file stops it before anything changes; good ones become the
    plan's user environments (a plan change with history, a step of the deploy
    workflow) before the deployment starts; here it then stops at once (there is no
    such kind of Heat), and the failed deploy puts the earlier environments back."""
    envs = _env_dir(tmp_path / "envs")
    client = make_client(tmp_path, LocalStore(tmp_path / "plans"))
    try:
        client.plans.create("overcloud", sample=True)
        before = _state(client._session.store)
        with pytest.raises(exceptions.InvalidTemplate, match="outside the environment"):
            client.deployments.create("overcloud", work_dir=tmp_path / "work",
                                      environments=[envs / "outside.yaml"])
        assert _state(client._session.store) == before
        assert client.deployments.status("overcloud")["deployment_status"] == "NONE"
        with pytest.raises(exceptions.InvalidInput, match="no-such-heat"):
            client.deployments.create("overcloud", work_dir=tmp_path / "work",
                                      heat_type="no-such-heat",
                                      environments=[envs / "params.yaml"])
        [failed] = [e for e in client.executions.list("tripleo.deploy.deploy")
                    if e.failed_task]
        assert failed.state == "ERROR"
        stored = [t.name for t in client.tasks.list(failed.id) if t.reverted]
        assert "set_environments" in stored  # it was stored, then put back
        assert _user(client) == []
        objects = _state(client._session.store)[0]
        assert not [name for name in objects if name.startswith("user-environments/")]
        assert objects["plan-environment.yaml"] == before[0]["plan-environment.yaml"]
    finally:
        client.close()


def test_a_link_leading_out_of_the_environment_directory_is_refused(client: Client,
                                                                     tmp_path: Path) -> None:
    envs = _env_dir(tmp_path / "envs")
    (tmp_path / "secret.yaml").write_text("resources: {}\n")
    (envs / "linked").mkdir()
    (envs / "linked" / "x.yaml").symlink_to(tmp_path / "secret.yaml")
    (envs / "uses-link.yaml").write_text("resource_registry: {OS::X: linked/x.yaml}\n")
    client.plans.create("overcloud", write_tree(tmp_path / "t", basic_tree()))
    before = _state(client._session.store)
    with pytest.raises(exceptions.InvalidTemplate,
                       match="'linked/x.yaml' links outside the environment's directory"):
        client.environments.add("overcloud", [envs / "uses-link.yaml"])
    assert _state(client._session.store) == before
