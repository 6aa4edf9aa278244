"""No secret in the executions database or the executions API, after every shipped workflow.

Each shipped workflow (listed from the workbook loader: a new one fails
:func:`test_every_shipped_workflow_has_a_scenario` until it gets a scenario
here) runs end to end on the local store, successful runs and failing runs
that revert, over a plan holding known passwords and a secret parameter; the
deploy workflow on a real native Heat.  Then the SQLite files of the
executions database (main file, -wal and -shm, read while the database is
open) and the API's execution and task responses are searched for every
secret the plans held, plain, base64 (at each alignment) and JSON-escaped.
"""

from __future__ import annotations

import base64
import json
import os
import secrets as pysecrets
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fixtures_ironic import remove_all_nodes
from tests.functional.heat.conftest import make_conf
from tests.functional.heat.lifecycle import lifecycle_templates
from tests.functional.heat.test_deploy import FAILING_RESOURCE
from tests.functional.http.conftest import serving
from tests.functional.validations.conftest import DEFAULT_VALIDATIONS_VENV
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.client.plans import sample_plan_dir
from tripleo_flow.common.secret_masking import is_masked
from tripleo_flow.plans.local import LocalStore

pytestmark = pytest.mark.functional

#: Known password values (one that JSON escapes) and a parameter with a secret name.
PASSWORDS = {"AdminPassword": "Known-Admin-Pw-5c1f0e", "RabbitPassword": 'Known"Rabbit\\Pw-9e2d',
             "HorizonSecret": "Known-Horizon-Secret-41b7"}
SECRET_PARAMETER = ("CustomServiceSecret", "Known-Param-Secret-77aa31")
BROKEN_J2 = "broken.j2.yaml"
BMC_PASSWORD = "Known-Bmc-Pw-3d5e21"
NODES = "tripleo.nodes."


def _templates(root: Path, broken: str | None = None, lifecycle: bool = False) -> Path:
    """The sample plan with the known secrets (``broken``: "render" or "stack" fails;
    ``lifecycle``: with THT's lifecycle environments and the update/upgrade playbooks)."""
    if lifecycle:
        lifecycle_templates(root)
    else:
        shutil.copytree(sample_plan_dir(), root)
    env_file = root / "plan-environment.yaml"
    env = yaml.safe_load(env_file.read_text())
    env["passwords"] = dict(PASSWORDS)
    env["parameter_defaults"][SECRET_PARAMETER[0]] = SECRET_PARAMETER[1]
    env_file.write_text(yaml.safe_dump(env))
    if broken == "render":
        (root / BROKEN_J2).write_text("value: {{ roles[999].name.missing }}\n")
    elif broken == "stack":
        top = root / "overcloud.j2.yaml"
        text = top.read_text().replace("\noutputs:\n", FAILING_RESOURCE + "\noutputs:\n", 1)
        top.write_text(text)
    return root


class Run:
    """What a scenario needs: the client, a scratch dir, and the secrets it saw go by."""

    def __init__(self, client: Client, tmp_path: Path) -> None:
        self.client, self.tmp = client, tmp_path
        self.seen: set[str] = set()

    def templates(self, name: str, broken: str | None = None, lifecycle: bool = False) -> str:
        return str(_templates(self.tmp / name, broken, lifecycle))

    def ok(self, workflow: str, inputs: dict[str, Any]) -> None:
        execution = self.client.executions.create(workflow, inputs)
        assert execution.state == "SUCCESS", execution

    def fails(self, workflow: str, inputs: dict[str, Any]) -> None:
        with pytest.raises(exceptions.WorkflowFailed):
            self.client.executions.create(workflow, inputs)

    def remember(self, plan: str) -> dict[str, Any]:
        values = self.client.passwords.get(plan)
        self.seen.update(_secret_strings(values))
        return values


def _secret_strings(passwords: dict[str, Any]) -> set[str]:
    found = set()
    for value in passwords.values():
        if isinstance(value, dict):  # MigrationSshKey: only its private half is secret
            value = value.get("private_key")
        if isinstance(value, str) and len(value) >= 8:
            found.add(value)
    return found


def _create(run: Run) -> None:
    run.ok("create_deployment_plan", {"plan": "made", "templates": run.templates("t1")})
    run.remember("made")
    run.fails("create_deployment_plan",
              {"plan": "half", "templates": run.templates("t2", "render")})
    assert "half" not in run.client.plans.list()


def _update(run: Run) -> None:
    before = run.remember("oc")
    run.ok("update_deployment_plan", {"plan": "oc", "templates": run.templates("t1")})
    run.fails("update_deployment_plan", {"plan": "oc", "templates": run.templates("t2", "render")})
    assert run.client.passwords.get("oc") == before


def _delete(run: Run) -> None:
    run.client.plans.create("gone", run.templates("t1"))
    run.remember("gone")
    run.ok("delete_deployment_plan", {"plan": "gone"})
    run.fails("delete_deployment_plan", {"plan": "gone"})


def _export(run: Run) -> None:
    out = str(run.tmp / "oc.tar.gz")
    run.ok("export_deployment_plan", {"plan": "oc", "output": out})
    run.fails("export_deployment_plan", {"plan": "oc", "output": out})


def _restore(run: Run) -> None:
    before = run.remember("oc")
    run.client.parameters.set("oc", {"ComputeCount": 3})
    first = run.client.plans.history("oc")[-1]["version"]
    run.ok(PLAN + "restore_deployment_plan", {"plan": "oc", "version": first})
    assert run.client.passwords.get("oc") == before
    run.fails(PLAN + "restore_deployment_plan", {"plan": "oc", "version": "no-such-version"})


def _render(run: Run) -> None:
    run.remember("oc")
    run.ok(PLAN + "render_deployment_plan", {"plan": "oc"})
    run.fails(PLAN + "render_deployment_plan", {"plan": "no-such-plan"})


def _update_parameters(run: Run) -> None:
    name = SECRET_PARAMETER[0]
    run.ok("update_parameters", {"plan": "oc", "parameters": {name: "Known-Param-Secret-2-0b9f"}})
    run.seen.add("Known-Param-Secret-2-0b9f")
    run.fails("update_parameters", {"plan": "oc", "parameters": {name: "x"}, "key": "bad"})
    run.ok("update_parameters", {"plan": "oc", "parameters": {name: SECRET_PARAMETER[1]}})


def _reset_parameters(run: Run) -> None:
    run.ok("reset_parameters", {"plan": "oc", "names": [SECRET_PARAMETER[0]]})
    run.fails("reset_parameters", {"plan": "oc", "names": [SECRET_PARAMETER[0]]})


def _rotate(run: Run) -> None:
    run.ok("rotate_passwords", {"plan": "oc"})
    run.remember("oc")
    run.fails("rotate_passwords", {"plan": "ghost"})


def _deploy(run: Run) -> None:
    for _ in range(2):  # a create, then an update (its undo keeps the first outputs)
        run.ok("deploy", {"plan": "oc", "work_dir": str(run.tmp / "work")})
    run.client.plans.create("broken", run.templates("t3", "stack"))
    run.remember("broken")
    run.fails("deploy", {"plan": "broken", "work_dir": str(run.tmp / "work-broken")})
    assert run.client.deployments.status("broken")["deployment_status"] == "DEPLOY_FAILED"


def _config_download_deploy(run: Run) -> None:
    # Every deploy runs it as its task finish (a child execution); called alone with a
    # stack request no deploy wrote, it is refused before anything changes.
    run.client.deployments.create("oc", work_dir=run.tmp / "work")
    broken = run.tmp / "work-broken"
    run.fails("tripleo.deploy.config_download_deploy", {
        "plan": "oc", "work_dir": str(broken), "heat": {},
        "stack_request": {"file": str(broken / "stack-request.json"), "sha256": "0" * 64}})


def _config_download_only(run: Run) -> None:
    run.client.deployments.create("oc", work_dir=run.tmp / "work")
    run.ok("config_download_only", {"plan": "oc", "work_dir": str(run.tmp / "work")})
    run.fails("config_download_only", {"plan": "oc", "work_dir": str(run.tmp / "work-broken")})


def _scale_down(run: Run) -> None:
    # It reads the deployed stack's outputs (passwords among them) to find the servers;
    # a host the stack does not have is refused there. A successful delete needs the real
    # templates' outputs: tests/functional/overcloud/test_tht18_scaledown.py.
    run.client.deployments.create("oc", work_dir=run.tmp / "work")
    run.fails("tripleo.scale.delete_nodes", {"plan": "oc", "work_dir": str(run.tmp / "work"),
                                             "hosts": ["ghost-0"], "run_ansible": False})


def _prepared(run: Run, kind: str = "update") -> dict[str, str]:
    """Plan "up" (the sample plan with THT's lifecycle environments and playbooks),
    deployed and prepared for a minor update or a major upgrade (``kind``); the inputs
    its lifecycle workflows take."""
    run.client.plans.create("up", run.templates("up", lifecycle=True))
    run.remember("up")
    inputs = {"plan": "up", "work_dir": str(run.tmp / "work-up")}
    run.client.deployments.create("up", work_dir=inputs["work_dir"])
    run.ok(f"tripleo.{kind}.prepare", inputs)
    return inputs


def _lifecycle(kind: str) -> Callable[[Run], None]:
    """The whole cycle of ``kind`` on one deployed plan (a deploy and a prepare cost a
    stack create and an update: shared by the four workflows), each once successful
    and once refused or failing."""
    def scenario(run: Run) -> None:
        inputs = _prepared(run, kind)
        # The sample plan "oc" has no lifecycle environments: refused, nothing changed.
        run.fails(f"tripleo.{kind}.prepare", {"plan": "oc", "work_dir": str(run.tmp / "work")})
        local = {**inputs, "ansible_connection": "local"}
        # the sample plan has no update steps: its deploy steps
        run.ok(f"tripleo.{kind}.run", {**local, "limit": "up-controller-0", "playbooks": (
            ["deploy_steps_playbook.yaml"] if kind == "update" else None)})
        run.ok(f"tripleo.{kind}.external_run", local)
        for name in ("run", "external_run"):  # "oc" was never prepared
            run.fails(f"tripleo.{kind}.{name}", {"plan": "oc", "work_dir": str(run.tmp / "work"),
                                                 "limit": "oc-controller-0"})
        run.ok(f"tripleo.{kind}.converge", {**inputs, "run_ansible": False})
        run.client.plans.create("broken", run.templates("t3", "stack"))
        run.remember("broken")  # its stack fails: the converge reverts the plan
        run.fails(f"tripleo.{kind}.converge", {"plan": "broken", "run_ansible": False,
                                               "work_dir": str(run.tmp / "work-broken")})
    return scenario


def _node_entries(prefix: str, count: int) -> list[dict[str, Any]]:
    """Fake-hardware nodes, and one redfish node holding the known BMC password (only
    registered, left in enroll: nothing here talks to its BMC)."""
    entries: list[dict[str, Any]] = [
        {"name": f"{prefix}-{i}", "pm_type": "fake-hardware", "mac": [f"52:54:00:5e:{i:02x}:01"],
         "cpu": 2, "memory": 4096, "disk": 20, "arch": "x86_64"} for i in range(count)]
    entries.append({"name": f"{prefix}-bmc", "pm_type": "redfish", "pm_addr": "127.0.0.1:9",
                    "pm_user": "admin", "pm_password": BMC_PASSWORD,
                    "pm_system_id": "/redfish/v1/Systems/1", "mac": ["52:54:00:5e:ff:01"]})
    return entries


def _register(run: Run) -> None:
    run.ok(NODES + "register", {"nodes": _node_entries("n", 2), "initial_state": "enroll"})
    bad = _node_entries("m", 1) + [{"name": "bad-0", "pm_type": "manual-management",
                                   "mac": ["52:54:00:5e:ee:01"]}]
    run.fails(NODES + "register", {"nodes": bad, "initial_state": "enroll"})


def _introspect(run: Run) -> None:
    run.client.nodes.register(_node_entries("n", 2), initial_state="enroll")
    run.ok(NODES + "introspect", {"nodes": ["n-0", "n-1"], "provide": True})
    run.fails(NODES + "introspect", {"nodes": ["ghost"]})


def _provide(run: Run) -> None:
    run.client.nodes.register(_node_entries("n", 1), initial_state="enroll")
    run.client.nodes.manage(["n-0"])
    run.ok(NODES + "provide", {"nodes": ["n-0"]})
    run.fails(NODES + "provide", {"nodes": ["ghost"]})


def _manage(run: Run) -> None:
    run.client.nodes.register(_node_entries("n", 1), initial_state="enroll")
    run.ok(NODES + "manage", {"nodes": ["n-0"]})
    run.fails(NODES + "manage", {"nodes": ["ghost"]})


def _clean(run: Run) -> None:
    run.client.nodes.register(_node_entries("n", 2), initial_state="enroll")
    run.client.nodes.manage(["n-0", "n-1"])
    run.ok(NODES + "clean", {"nodes": ["n-0"],
                             "steps": [{"interface": "power", "step": "power_off"}]})
    # fake-hardware has no erase_devices_metadata step (the default): Ironic fails it.
    run.fails(NODES + "clean", {"nodes": ["n-1"]})


def _delete_nodes(run: Run) -> None:
    run.client.nodes.register(_node_entries("n", 1), initial_state="enroll")
    run.ok(NODES + "delete", {"nodes": ["n-0", "n-bmc"]})
    run.fails(NODES + "delete", {"nodes": ["n-0"]})


def _available(run: Run, count: int) -> None:
    run.client.nodes.register(_node_entries("n", count), initial_state="enroll")
    run.client.nodes.manage([f"n-{i}" for i in range(count)])
    run.client.nodes.provide([f"n-{i}" for i in range(count)])


PROVISION_FILE = "- name: Compute\n  count: 1\n"


def _provision(run: Run) -> None:
    _available(run, 1)
    run.ok(NODES + "provision", {"plan": "oc", "baremetal_deployment": PROVISION_FILE})
    # No second available node for a count of 2: refused, nothing deployed.
    run.fails(NODES + "provision", {"plan": "oc", "baremetal_deployment":
                                    "- name: Compute\n  count: 2\n"})


def _unprovision(run: Run) -> None:
    _available(run, 1)
    run.client.nodes.provision(PROVISION_FILE, plan="oc")
    run.ok(NODES + "unprovision", {"plan": "oc", "all_nodes": True})
    run.fails(NODES + "unprovision", {"plan": "oc", "hostnames": ["ghost"]})


def _validations(run: Run) -> None:
    venv = os.environ.get("TRIPLEO_FLOW_VALIDATIONS_VENV", str(DEFAULT_VALIDATIONS_VENV))
    run.client.conf.set_override("venv", venv, group="validations")
    secret = "Known-Validation-Pw-6a0c2e"
    run.seen.add(secret)
    run.ok("tripleo.validations.run", {"validations": ["no-op"], "plan": "oc",
                                       "localhost": True,
                                       "extra_vars": {"admin_password": secret}})
    assert run.client.validations.results(plan="oc")[0]["status"] == "PASSED"
    run.fails("tripleo.validations.run", {"validations": ["ghost"], "localhost": True,
                                          "extra_vars": {"admin_password": secret}})


def _capabilities(run: Run) -> None:
    assert "environments/debug.yaml" in json.dumps(run.client.capabilities.get("oc"))
    run.ok(PLAN + "update_capabilities", {"plan": "oc",
                                          "environments": {"environments/debug.yaml": True}})
    run.fails(PLAN + "update_capabilities", {"plan": "oc",
                                             "environments": {"ghost.yaml": True}})


def _roles(run: Run) -> None:
    roles = run.client.roles.list("oc", detail=True)
    run.ok(PLAN + "update_roles", {"plan": "oc", "roles": roles})
    run.fails(PLAN + "update_roles", {"plan": "oc", "roles": [{"no name": True}]})


def _networks(run: Run) -> None:
    networks = run.client.networks.list("oc", detail=True)
    run.ok(PLAN + "update_networks", {"plan": "oc", "networks": networks})
    run.fails(PLAN + "update_networks", {"plan": "oc", "networks": [{"no name": True}]})


#: A user environment setting the secret parameter (its value must be masked too).
SECRET_IN_ENVIRONMENT = "Known-Env-Secret-0c61d2"
USER_ENVIRONMENT = {"name": "mine.yaml", "files": {"mine.yaml": (
    f"parameter_defaults:\n  {SECRET_PARAMETER[0]}: {SECRET_IN_ENVIRONMENT}\n")}}


def _add_environments(run: Run) -> None:
    run.seen.add(SECRET_IN_ENVIRONMENT)
    run.ok(PLAN + "add_environments", {"plan": "oc", "user_environments": [USER_ENVIRONMENT]})
    run.fails(PLAN + "add_environments", {"plan": "oc", "user_environments": [
        {"name": "bad.yaml", "files": "nope"}]})


def _remove_environments(run: Run) -> None:
    run.seen.add(SECRET_IN_ENVIRONMENT)
    [added] = run.client.environments.add("oc", [USER_ENVIRONMENT])
    run.ok(PLAN + "remove_environments", {"plan": "oc", "paths": [added]})
    run.fails(PLAN + "remove_environments", {"plan": "oc", "paths": [added]})


def _deployed_servers(run: Run) -> None:
    from tests.functional.test_deployed_servers import EXAMPLE, _plan

    _plan(run.client, run.tmp / "ds")  # a tree with deployed-server templates
    run.remember("overcloud")
    run.ok(PLAN + "update_deployed_servers", {"plan": "overcloud",
                                              "baremetal_deployment": EXAMPLE.read_text()})
    # The sample plan has no deployed-server templates: refused, nothing changed.
    run.fails(PLAN + "update_deployed_servers", {"plan": "oc",
                                                 "baremetal_deployment": EXAMPLE.read_text()})


def _heat_dir(run: Run) -> str:
    """The heat-dir of the Heat scenarios (the fixture kills its Heat)."""
    return str(run.tmp / "work")


def _launch_heat(run: Run) -> None:
    run.ok(HEAT + "launch", {"heat_dir": _heat_dir(run), "heat_type": "native"})
    # Refused: a Heat runs there already (it runs on).
    run.fails(HEAT + "launch", {"heat_dir": _heat_dir(run), "heat_type": "native"})
    assert run.client.heat.status(_heat_dir(run))["api_answers"] is True


def _kill_heat(run: Run) -> None:
    run.client.heat.launch(_heat_dir(run), "native")
    run.fails(HEAT + "kill", {"heat_dir": _heat_dir(run), "heat_type": "no-such-type"})
    assert run.client.heat.status(_heat_dir(run))["running"] is True
    run.ok(HEAT + "kill", {"heat_dir": _heat_dir(run)})


def _dump_heat_db(run: Run) -> None:
    run.client.heat.launch(_heat_dir(run), "native")
    run.ok(HEAT + "dump_db", {"heat_dir": _heat_dir(run)})
    run.client.heat.kill(_heat_dir(run))
    run.fails(HEAT + "dump_db", {"heat_dir": _heat_dir(run)})  # no Heat runs


def _restore_heat_db(run: Run) -> None:
    run.client.heat.launch(_heat_dir(run), "native")
    run.client.heat.kill(_heat_dir(run))
    run.ok(HEAT + "restore_db", {"heat_dir": _heat_dir(run)})
    run.fails(HEAT + "restore_db", {"heat_dir": str(run.tmp / "work-broken"),
                                    "heat_type": "native"})  # no dump there


HEAT = "tripleo.heat."
PLAN = "tripleo.plan."
SCENARIOS: dict[str, Callable[[Run], None]] = {
    PLAN + "update_capabilities": _capabilities,
    PLAN + "update_roles": _roles,
    PLAN + "update_networks": _networks,
    PLAN + "add_environments": _add_environments,
    PLAN + "remove_environments": _remove_environments,
    PLAN + "update_deployed_servers": _deployed_servers,
    "tripleo.plan.create_deployment_plan": _create,
    "tripleo.plan.update_deployment_plan": _update,
    "tripleo.plan.delete_deployment_plan": _delete,
    "tripleo.plan.export_deployment_plan": _export,
    "tripleo.plan.restore_deployment_plan": _restore,
    "tripleo.plan.render_deployment_plan": _render,
    "tripleo.parameters.update_parameters": _update_parameters,
    "tripleo.parameters.reset_parameters": _reset_parameters,
    "tripleo.parameters.rotate_passwords": _rotate,
    "tripleo.deploy.deploy": _deploy,
    "tripleo.deploy.config_download_only": _config_download_only,
    "tripleo.deploy.config_download_deploy": _config_download_deploy,
    NODES + "register": _register,
    NODES + "introspect": _introspect,
    NODES + "provide": _provide,
    NODES + "manage": _manage,
    NODES + "clean": _clean,
    NODES + "delete": _delete_nodes,
    NODES + "provision": _provision,
    NODES + "unprovision": _unprovision,
    "tripleo.validations.run": _validations,
    "tripleo.scale.delete_nodes": _scale_down,
    HEAT + "launch": _launch_heat,
    HEAT + "kill": _kill_heat,
    HEAT + "dump_db": _dump_heat_db,
    HEAT + "restore_db": _restore_heat_db,
    **{f"tripleo.{kind}.{name}": _lifecycle(kind) for kind in ("update", "upgrade")
       for name in ("prepare", "run", "converge", "external_run")},
}
#: Workflows tested together by one scenario (named by the first): the lifecycle ones.
TOGETHER = {f"tripleo.{kind}.{name}": f"tripleo.{kind}.*" for kind in ("update", "upgrade")
            for name in ("prepare", "run", "converge", "external_run")}
#: Workflows that hand a secret from task to task through the context: the node
#: list's BMC passwords go from the check to the registration.  A resumed run
#: stops with SecretNotPersisted (import the file again: registration is idempotent).
SECRET_IN_CONTEXT = {NODES + "register"}
#: Workflows whose scenario can only be refused on the sample plan, and why.
REFUSAL_ONLY = {"tripleo.scale.delete_nodes": (
    "a delete reads the real templates' AnsibleHostVarsMap output, which the sample plan "
    "lacks: its success is tests/functional/overcloud/test_tht18_scaledown.py")}
#: Cases that fail until another branch is merged.
KNOWN_LEAKS: dict[str, str] = {}


def test_every_shipped_workflow_has_a_scenario(tmp_path: Path, heat_venv: Path) -> None:
    with Client(make_conf(tmp_path, heat_venv)) as client:
        shipped = [w.full_name for w in client.workflows.list()
                   if client._session.catalog().entry_of(w).shipped]
    assert sorted(shipped) == sorted(SCENARIOS)


def _forms(secret: str) -> set[bytes]:
    """How a secret can appear in the database: plain, JSON-escaped, base64 at any offset."""
    raw = secret.encode()
    forms = {raw, json.dumps(secret)[1:-1].encode(), json.dumps(secret, ensure_ascii=False)[1:-1]
             .encode()}
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + raw)
        first = (pad + 2) // 3           # the first 3-byte group holding only the secret
        last = (pad + len(raw)) // 3     # one past the last such group
        if last > first:
            forms.add(encoded[4 * first:4 * last])
    return forms


def _leaks(data: bytes, secrets: set[str]) -> list[str]:
    return sorted(s for s in secrets if any(form in data for form in _forms(s)))


@pytest.fixture
def run(request: pytest.FixtureRequest, tmp_path: Path, heat_venv: Path) -> Iterator[Run]:
    conf = make_conf(tmp_path, heat_venv)
    conf.set_override("auth_token", pysecrets.token_hex(16), group="api")
    endpoint = None
    if request.node.callspec.params["workflow"].startswith(NODES):
        endpoint = request.getfixturevalue("ironic_endpoint")
        conf.set_override("endpoint", endpoint, group="ironic")
    client = Client(conf, store=LocalStore(tmp_path / "plans"))
    client.plans.create("oc", _templates(tmp_path / "oc"))
    scenario = Run(client, tmp_path)
    scenario.seen.update(PASSWORDS.values(), {SECRET_PARAMETER[1], BMC_PASSWORD})
    scenario.remember("oc")
    yield scenario
    for work in ("work", "work-broken"):
        client.heat.kill(str(tmp_path / work))
    if endpoint:
        remove_all_nodes(endpoint)


def _covered(case: str) -> list[str]:
    """The workflows a test case (a workflow, or a group of :data:`TOGETHER`) covers."""
    return sorted(w for w in SCENARIOS if TOGETHER.get(w, w) == case)


@pytest.mark.parametrize("workflow", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_LEAKS[name]))
    if name in KNOWN_LEAKS else name for name in sorted({TOGETHER.get(w, w) for w in SCENARIOS})])
def test_no_secret_in_executions_after(workflow: str, run: Run, tmp_path: Path) -> None:
    covered = _covered(workflow)
    SCENARIOS[covered[0]](run)
    executions = [e for e in run.client.executions.list() if e.workflow in covered]
    for name in covered:
        # a success and a failure (a refusal only where the sample plan cannot succeed)
        assert len([e for e in executions if e.workflow == name]) >= (
            1 if name in REFUSAL_ONLY else 2), name
    assert len(run.seen) >= 20  # the generated passwords too

    files = sorted((tmp_path / "data").glob("executions.sqlite*"))
    assert {f.name for f in files} >= {"executions.sqlite", "executions.sqlite-wal"}
    database = b"".join(f.read_bytes() for f in files)
    assert SECRET_PARAMETER[0].encode() in database or "_parameters" not in workflow
    assert _leaks(database, run.seen) == []
    # Shipped workflows pass no secret from task to task (they point at the plan store
    # or the work dir), so nothing a resumed run needs was masked.
    masked = [record.name for execution in executions
              for record in run.client.tasks.list(execution.id)
              if is_masked(record.published)]
    assert bool(masked) == bool(SECRET_IN_CONTEXT.intersection(covered)), masked

    with serving(run.client, run.client.conf.api.auth_token) as api:
        bodies = [api("GET", "/v1/executions")]
        for execution in executions:
            bodies += [api("GET", f"/v1/executions/{execution.id}"),
                       api("GET", f"/v1/executions/{execution.id}/tasks")]
        assert all(b.status_code == 200 for b in bodies)
        tasks = [t for b in bodies[2::2] for t in b.json()]
        assert tasks and all("result" in t for t in tasks)
        assert _leaks(b"".join(b.content for b in bodies), run.seen) == []
