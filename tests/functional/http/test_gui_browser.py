"""The web GUI in a real browser (Playwright driving Debian's chromium) against a real
``api serve`` on loopback: log in, create the sample plan, export it, enable an
environment, set a parameter (a refused value shown beside its field), deploy on a
real native heat-all and watch the progress reach CREATE_COMPLETE / DEPLOY_SUCCESS,
open the execution's graph, delete the deployed plan through the CLI's guard.

Screenshots of each page go to the test's tmp dir, and to ``$TRIPLEO_FLOW_SCREENSHOTS``
when it is set.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import shutil
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures_keystone import Keystone
from tests.functional.heat.conftest import DEFAULT_VENV
from tests.functional.heat.test_deploy import FAILING_RESOURCE
from tests.functional.http.conftest import Api, serving
from tests.functional.mariadb import free_port
from tripleo_flow.client.plans import sample_plan_dir

CHROMIUM = Path("/usr/bin/chromium")
#: Milliseconds a page may take to show what a step waits for (the deploy takes longer).
STEP_MS = 60_000
DEPLOY_MS = 240_000


@pytest.fixture
def browser_page(api: Api) -> Iterator[object]:
    with chromium_page() as page:
        yield page


@contextlib.contextmanager
def chromium_page() -> Iterator[object]:
    """A page of a fresh Debian chromium (fails when there is none)."""
    if not CHROMIUM.exists():
        pytest.fail("No /usr/bin/chromium: install Debian's chromium (tools/run-tests.sh does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                             args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1280, "height": 900},
                                      accept_downloads=True)
        page = context.new_page()
        page.set_default_timeout(STEP_MS)
        try:
            yield page
        finally:
            context.close()
            browser.close()


def use_native_heat(api: Api) -> None:
    """Deploys of ``api`` use the Heat virtualenv, on a free port of their own."""
    venv = Path(os.environ.get("TRIPLEO_FLOW_HEAT_VENV", DEFAULT_VENV))
    if not (venv / "bin" / "heat-all").exists():
        pytest.fail(f"No Heat virtualenv at {venv}: run tools/setup-heat.sh")
    api.client.conf.set_override("venv", str(venv), group="heat")
    api.client.conf.set_override("api_port", free_port(), group="heat")


def log_in(page: object, api: Api) -> None:
    """Open ``api``'s GUI on ``page`` and log in with its token."""
    page.goto(api.url + "/")  # type: ignore[attr-defined]
    page.get_by_label("API token").fill(api.token)  # type: ignore[attr-defined]
    page.get_by_role("button", name="Log in").click()  # type: ignore[attr-defined]


def answer_dialogs(page: object, answers: list[bool]) -> list[str]:
    """Accept (True) or dismiss (False) the page's next dialogs in turn; the list their
    messages are appended to, as they come."""
    said: list[str] = []
    turns = iter(answers)

    def answer(dialog: object) -> None:
        said.append(dialog.message)  # type: ignore[attr-defined]
        if next(turns):
            dialog.accept()  # type: ignore[attr-defined]
        else:
            dialog.dismiss()  # type: ignore[attr-defined]

    page.on("dialog", answer)  # type: ignore[attr-defined]
    return said


@contextlib.contextmanager
def gui_at(api: Api, where: str, folder: Path,
           prefix: str) -> Iterator[tuple[object, Shots, list[str]]]:
    """A chromium page logged in to ``api``'s GUI and opened at ``#/where``, its
    screenshots (``prefix``, in ``folder``) and the list of its console errors."""
    with chromium_page() as page:
        errors = console_errors(page)
        shot = Shots(page, folder, prefix)
        log_in(page, api)
        from playwright.sync_api import expect

        # The login opens the plans once the server took the token: going elsewhere
        # before that would be undone by it.
        expect(page.locator("h1")).to_have_text("Plans", timeout=STEP_MS)  # type: ignore[attr-defined]
        page.goto(f"{api.url}/#/{where}")  # type: ignore[attr-defined]
        yield page, shot, errors


def console_errors(page: object) -> list[str]:
    """The list the page's console errors are appended to, as they come (but "Failed to
    load resource": the API's refusals, which the page shows)."""
    said: list[str] = []
    page.on("console", lambda m: said.append(m.text)  # type: ignore[attr-defined]
            if m.type == "error" and not m.text.startswith("Failed to load resource")
            else None)
    return said


class Shots:
    """Full-page screenshots, numbered in the order taken."""

    def __init__(self, page: object, folder: Path, prefix: str) -> None:
        self.page = page
        self.prefix = prefix
        self.folders = [folder]
        extra = os.environ.get("TRIPLEO_FLOW_SCREENSHOTS")
        if extra:
            self.folders.append(Path(extra))
        for f in self.folders:
            f.mkdir(parents=True, exist_ok=True)
        self.taken: list[Path] = []

    def __call__(self, name: str) -> None:
        path = self.folders[0] / f"{self.prefix}-{len(self.taken) + 1:02d}-{name}.png"
        self.page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
        for other in self.folders[1:]:
            shutil.copy(path, other / path.name)
        self.taken.append(path)


def test_the_gui_logs_in_configures_deploys_and_shows_the_graph(
        api: Api, browser_page: object, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    page: Page = browser_page  # type: ignore[assignment]
    use_native_heat(api)
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    refused: list[str] = []
    page.on("response", lambda r: refused.append(f"{r.status} {r.request.method} {r.url}")
            if r.status >= 400 else None)
    console_errors: list[str] = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    shot = Shots(page, tmp_path / "screenshots", "deploy")

    # Log in: a wrong token is refused on the page, the right one opens the plans.
    page.goto(api.url + "/")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    shot("login")
    page.get_by_label("API token").fill("not-the-token")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("valid token")
    page.get_by_label("API token").fill(api.token)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Plans", exact=True).first).to_be_visible()
    assert page.evaluate("sessionStorage.length") == 1
    assert page.evaluate("localStorage.length") == 0

    # Create the sample plan; it is listed, and exports as a .tar.gz.
    page.get_by_label("Name", exact=True).fill("gui")
    page.get_by_role("button", name="Create plan").click()
    expect(page.get_by_role("link", name="gui", exact=True)).to_be_visible()
    assert [p["name"] for p in api("GET", "/v1/plans").json()] == ["gui"]
    shot("plans")
    with page.expect_download() as download:
        page.get_by_role("button", name="Export gui").click()
    assert download.value.suggested_filename == "gui.tar.gz"
    assert gzip.decompress(Path(download.value.path()).read_bytes())  # a real gzip

    # Environments: enable one; the API has it enabled, and the page shows it checked.
    page.get_by_role("link", name="gui", exact=True).click()
    page.get_by_role("link", name="Environments").click()
    debug = page.locator('input[data-file="environments/debug.yaml"]')
    expect(debug).not_to_be_checked()
    debug.check()
    expect(page.get_by_role("status")).to_contain_text("Environments updated")
    expect(page.locator('input[data-file="environments/debug.yaml"]')).to_be_checked()
    enabled = [e for topic in api("GET", "/v1/plans/gui/capabilities").json().values()
               for g in topic["environment_groups"] for e in g["environments"] if e["enabled"]]
    assert "environments/debug.yaml" in [e["file"] for e in enabled]
    shot("environments")

    # Parameters: the form comes from the schema; a refused value is shown beside its
    # field and changes nothing; a good one is stored.
    page.get_by_role("link", name="Parameters").click()
    field = page.get_by_label("ComputeCount", exact=True)
    expect(field).to_be_visible(timeout=DEPLOY_MS)
    row = page.locator('form[data-parameter="ComputeCount"]')
    field.fill("many")
    row.get_by_role("button", name="Set ComputeCount", exact=True).click()
    expect(row.locator(".field-error")).to_contain_text("not a valid number", timeout=STEP_MS)
    expect(field).to_have_attribute("aria-invalid", "true")
    assert api("GET", "/v1/plans/gui/parameters").json()["ComputeCount"] == 1
    shot("parameter-refused")
    field.fill("2")
    row.get_by_role("button", name="Set ComputeCount", exact=True).click()
    expect(row.locator(".field-error")).to_have_text("")
    expect(page.get_by_role("status")).to_contain_text("ComputeCount set", timeout=STEP_MS)
    assert api("GET", "/v1/plans/gui/parameters").json()["ComputeCount"] == 2
    shot("parameters")

    # Roles: counts are edited in place (the <Role>Count parameter, checked by the server).
    page.get_by_role("link", name="Roles and networks").click()
    expect(page.get_by_role("cell", name="Compute", exact=True)).to_be_visible()
    count = page.get_by_label("Compute count", exact=True)
    expect(count).to_have_value("2")
    count.fill("lots")
    page.get_by_role("button", name="Set Compute count").click()
    # (the schema it is checked against is the plan's, read again: the plan changed)
    expect(page.locator('form[data-role="Compute"] .field-error')).to_contain_text(
        "not a valid number", timeout=STEP_MS)
    count.fill("2")
    page.get_by_role("button", name="Set Compute count").click()
    expect(page.get_by_role("status")).to_contain_text("Compute count set to 2",
                                                      timeout=STEP_MS)
    assert api("GET", "/v1/plans/gui/parameters").json()["ComputeCount"] == 2
    shot("roles")

    # Deploy on a native Heat: live progress to CREATE_COMPLETE, then DEPLOY_SUCCESS.
    page.get_by_role("link", name="Deploy").click()
    page.get_by_label("Heat").select_option("native")
    page.get_by_role("button", name="Deploy", exact=True).click()
    # the bar is drawn from the stack's share of the work done (a total that grows as
    # nested stacks appear would draw it backwards), its percent beside the counts
    expect(page.locator("#stack-counts")).to_have_text(
        re.compile(r"^stack: \d+% — \d+ of \d+ resources complete"), timeout=DEPLOY_MS)
    shot("deploying")
    expect(page.locator("#execution-end")).to_contain_text("SUCCESS", timeout=DEPLOY_MS)
    expect(page.locator("#stack-counts")).to_contain_text("stack: CREATE_COMPLETE")
    total = re.search(r"\((\d+) resources\)", page.locator("#stack-counts").inner_text())
    assert total and int(total[1]) > 0, total
    assert page.locator("#stack-progress").evaluate("p => p.value === 1 && p.max === 1")
    assert "deploy_stack: RUNNING" in page.locator("#events").inner_text()
    expect(page.locator("#deployment-status")).to_contain_text("DEPLOY_SUCCESS")
    expect(page.locator("#events li").first).to_be_visible()
    # Deployed: its servers can now be deleted (overcloud node delete, test_gui_scale.py).
    expect(page.get_by_role("heading", name="Delete servers")).to_be_visible()
    shot("deployed")

    # The execution's graph: every task of the workbook drawn, those run in SUCCESS.
    page.locator("#progress a").click()
    graph = page.locator("#graph svg")
    expect(graph).to_be_visible()
    # the deploy's own execution (its steps after the stack run in a child execution,
    # listed after it: tripleo.deploy.config_download_deploy)
    execution = [e for e in api("GET", "/v1/executions").json()
                 if e["workflow"] == "tripleo.deploy.deploy"][-1]
    tasks = api("GET", f"/v1/executions/{execution['id']}/tasks").json()
    workflow = api("GET", f"/v1/workflows/{execution['workflow']}").json()
    expect(graph.locator("g.node")).to_have_count(len(workflow["tasks"]))
    done = [t["name"] for t in tasks if t["state"] == "SUCCESS"]
    assert "deploy_stack" in done
    for name in done:
        expect(graph.locator(f'g.node[data-task="{name}"]')).to_have_attribute(
            "data-state", "SUCCESS")
    shot("execution-graph")
    page.get_by_role("link", name="Executions").click()
    expect(page.get_by_role("link", name=execution["id"])).to_be_visible()
    shot("executions")

    # History: the first version of plan-environment.yaml comes back (ComputeCount 1).
    page.get_by_role("link", name="Plans").click()
    page.get_by_role("link", name="gui", exact=True).click()
    page.get_by_role("link", name="History").click()
    versions = api("GET", "/v1/plans/gui/history").json()
    assert len(versions) >= 3 and versions[0]["current"]
    expect(page.locator("tr[data-version]")).to_have_count(len(versions))
    shot("history")
    page.get_by_role("button", name=f"Restore version {versions[-1]['version']}").click()
    expect(page.get_by_role("status")).to_contain_text("restored")
    assert api("GET", "/v1/plans/gui/parameters").json()["ComputeCount"] == 1
    assert len(api("GET", "/v1/plans/gui/history").json()) == len(versions) + 1

    # Nodes and validations: listed, or the server's reason they cannot be.
    for view in ("Nodes", "Validations"):
        page.get_by_role("link", name=view, exact=True).click()
        expect(page.get_by_role("heading", name=view, exact=True)).to_be_visible()
        expect(page.locator("main table, main p.muted").first).to_be_visible()
    shot("validations")

    # Narrow screens: the plans page fits a phone's width (CSS only). Keyboard: a new
    # view puts the focus on its content, so Tab reaches its first link, Enter opens it.
    page.set_viewport_size({"width": 390, "height": 844})
    page.get_by_role("link", name="Plans").click()
    expect(page.get_by_role("link", name="gui", exact=True)).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot("plans-narrow")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "gui"
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Plan gui")).to_be_visible()

    # Delete: the deployed plan needs the CLI's --force, asked for in a second dialog.
    dialogs: list[str] = []

    def accept(dialog: object) -> None:
        dialogs.append(dialog.message)  # type: ignore[attr-defined]
        dialog.accept()  # type: ignore[attr-defined]

    page.on("dialog", accept)
    page.get_by_role("link", name="Plans").click()
    page.get_by_role("button", name="Delete gui").click()
    expect(page.get_by_role("link", name="gui", exact=True)).to_have_count(0)
    assert len(dialogs) == 2 and "force" in dialogs[1], dialogs
    assert api("GET", "/v1/plans").json() == []

    assert urls and not [u for u in urls if api.token in u]
    # The browser logs each refused request (the wrong token, the refused value, the
    # guarded delete); anything else logged as an error is a fault of the page.
    faults = [m for m in console_errors if not m.startswith("Failed to load resource")]
    assert not faults, faults
    # (nodes and validations answer 404 where Ironic or the validations are not set up)
    optional = [r for r in refused if r.endswith(("/v1/nodes", "/v1/validations"))]
    assert all(r.startswith("404 GET") for r in optional), optional
    assert [r.split(" ")[:2] for r in refused if r not in optional] == [
        ["401", "GET"], ["400", "PUT"], ["400", "PUT"], ["409", "DELETE"]], refused
    assert len(console_errors) == len(refused), console_errors


def _broken_tarball(tmp_path: Path) -> Path:
    """The sample plan with a resource that fails, as a .tar.gz (one top directory)."""
    tree = tmp_path / "broken"
    shutil.copytree(sample_plan_dir(), tree)
    root = tree / "overcloud.j2.yaml"
    root.write_text(root.read_text().replace("\noutputs:\n", FAILING_RESOURCE + "\noutputs:\n", 1))
    archive = tmp_path / "broken.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tree, arcname="broken")
    return archive


def test_the_gui_uploads_a_plan_and_shows_why_its_deploy_failed(
        api: Api, browser_page: object, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    page: Page = browser_page  # type: ignore[assignment]
    use_native_heat(api)
    shot = Shots(page, tmp_path / "screenshots", "failure")

    page.goto(api.url + "/")
    page.get_by_label("API token").fill(api.token)
    page.get_by_role("button", name="Log in").click()
    page.get_by_label("Name", exact=True).fill("broken")
    page.get_by_label("The shipped sample plan").uncheck()
    page.get_by_label("or templates (.tar.gz)").set_input_files(str(_broken_tarball(tmp_path)))
    page.get_by_role("button", name="Create plan").click()
    expect(page.get_by_role("link", name="broken", exact=True)).to_be_visible()
    assert "BrokenOnPurpose" in api("GET", "/v1/plans/broken").text or [
        p["name"] for p in api("GET", "/v1/plans").json()] == ["broken"]

    page.get_by_role("link", name="broken", exact=True).click()
    page.get_by_role("button", name="Deploy", exact=True).click()
    expect(page.locator("#execution-end")).to_contain_text("ERROR",
                                                           timeout=DEPLOY_MS)
    expect(page.locator("#execution-end")).to_contain_text("BrokenOnPurpose")
    expect(page.locator("#deployment-status")).to_contain_text("DEPLOY_FAILED")
    failed = page.locator("#deployment-status li", has_text="BrokenOnPurpose")
    expect(failed).to_contain_text("Test Resource failed")
    shot("deploy-failed")
    page.locator("#progress a").click()
    expect(page.locator('#graph g.node[data-task="deploy_stack"]')).to_have_attribute(
        "data-state", "ERROR")  # a failed task: ERROR, as Mistral's
    shot("failed-graph")
    # The tasks that failed name their next steps as API requests, as the execution
    # does (the page shows these), not as CLI commands.
    [deploy] = [e for e in api("GET", "/v1/executions").json()
                if e["workflow"] == "tripleo.deploy.deploy"]
    tasks = api("GET", f"/v1/executions/{deploy['id']}/tasks").json()
    [stack] = [t for t in tasks if t["name"] == "deploy_stack"]
    assert "GET /v1/plans/broken/deployment/failures" in stack["error"]
    assert "tripleo-flow deployment failures" not in stack["error"]
    assert stack["error"] == deploy["error"]


def test_the_gui_logs_in_with_a_keystone_user(tmp_path: Path, keystone: Keystone) -> None:
    from playwright.sync_api import Page, expect

    from tests.functional.http.test_keystone_auth import keystone_client, write_conf

    user = keystone.operator
    client = keystone_client(tmp_path, write_conf(tmp_path, keystone, keystone.service))
    with serving(client) as api, chromium_page() as raw_page:
        page: Page = raw_page  # type: ignore[assignment]
        shot = Shots(page, tmp_path / "screenshots", "keystone")
        page.goto(api.url + "/")
        expect(page.get_by_label("User name")).to_be_visible()
        expect(page.get_by_role("button", name="Log out")).to_be_hidden()
        shot("login")
        page.get_by_label("User name").fill(user.name)
        page.get_by_label("Password").fill("not-the-password")
        page.get_by_label("Project").fill(user.project)
        page.get_by_role("button", name="Log in with Keystone").click()
        expect(page.get_by_role("alert")).to_contain_text("Keystone refused")
        assert page.get_by_label("Password").input_value() == ""  # not kept in the page
        assert page.evaluate("sessionStorage.length") == 0
        shot("refused")
        page.get_by_label("Password").fill(user.password)
        page.get_by_role("button", name="Log in with Keystone").click()
        expect(page.get_by_role("heading", name="Plans", exact=True).first).to_be_visible()
        shot("plans")
        token = page.evaluate("sessionStorage.getItem('tripleo-flow-token')")
        assert token and user.password not in token
        assert page.evaluate("localStorage.length") == 0
        assert api("GET", "/v1/plans", headers={"X-Auth-Token": token}).status_code == 200


#: A map with a ``requires`` and a mutually exclusive group (the sample plan has none).
EXCLUSIVE_MAP = """\
topics:
  - title: Basic
    environment_groups:
      - title: Storage
        environments:
          - file: environments/storage.yaml
            title: Storage
            requires: [environments/base.yaml]
          - file: environments/base.yaml
            title: Base
      - title: Backend
        mutually_exclusive: true
        environments:
          - file: environments/ceph.yaml
            title: Ceph
          - file: environments/nfs.yaml
            title: NFS
"""


def _enabled(api: Api, plan: str) -> set[str]:
    return {e["file"] for topic in api("GET", f"/v1/plans/{plan}/capabilities").json().values()
            for g in topic["environment_groups"] for e in g["environments"] if e["enabled"]}


def _settles(api: Api, plan: str, on: set[str], off: set[str], timeout: float = 20) -> None:
    """Wait until the plan has ``on`` enabled and ``off`` not (the page's change is a
    request still under way when its control shows the new state)."""
    deadline = time.monotonic() + timeout
    while True:
        enabled = _enabled(api, plan)
        if on <= enabled and not off & enabled:
            return
        assert time.monotonic() < deadline, (enabled, on, off)
        time.sleep(0.2)


def test_the_gui_respects_requires_exclusive_groups_and_resets_a_parameter(
        api: Api, browser_page: object, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    from tests.functional.http.test_api import tarball
    from tests.plan_trees import basic_tree, write_tree

    page: Page = browser_page  # type: ignore[assignment]
    use_native_heat(api)
    shot = Shots(page, tmp_path / "screenshots", "choices")
    tree = write_tree(tmp_path / "tree", {
        **basic_tree(), "capabilities-map.yaml": EXCLUSIVE_MAP,
        "environments/ceph.yaml": "parameter_defaults: {Backend: ceph}\n",
        "environments/nfs.yaml": "parameter_defaults: {Backend: nfs}\n"})
    created = api("POST", "/v1/plans", params={"name": "envs"}, data=tarball(tree),
                  headers={"Content-Type": "application/gzip"})
    assert created.status_code == 201, created.text
    page.goto(api.url + "/")
    page.get_by_label("API token").fill(api.token)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("link", name="envs", exact=True)).to_be_visible()

    # requires: enabling Storage enables Base first; Base cannot go while Storage needs it.
    page.goto(api.url + "/#/plans/envs/environments")
    storage = page.locator('input[data-file="environments/storage.yaml"]')
    base = page.locator('input[data-file="environments/base.yaml"]')
    storage.check()
    expect(page.get_by_role("status")).to_contain_text("Environments updated")
    expect(page.locator('input[data-file="environments/base.yaml"]')).to_be_checked()
    _settles(api, "envs", {"environments/storage.yaml", "environments/base.yaml"}, set())
    base.uncheck()
    expect(page.locator("#environments-error")).to_contain_text(
        "Cannot disable environments/base.yaml")
    expect(page.locator('input[data-file="environments/base.yaml"]')).to_be_checked()
    assert "environments/base.yaml" in _enabled(api, "envs")
    shot("requires-refused")

    # A mutually exclusive group is radios: choosing NFS leaves Ceph off; None turns both off.
    expect(page.get_by_role("group", name="Backend (choose one)")).to_be_visible()
    page.get_by_label("Ceph", exact=True).check()
    expect(page.get_by_label("Ceph", exact=True)).to_be_checked()
    _settles(api, "envs", {"environments/ceph.yaml"}, set())
    page.get_by_label("NFS", exact=True).check()
    expect(page.get_by_label("NFS", exact=True)).to_be_checked()
    expect(page.get_by_label("Ceph", exact=True)).not_to_be_checked()
    _settles(api, "envs", {"environments/nfs.yaml"}, {"environments/ceph.yaml"})
    shot("exclusive")
    page.get_by_role("group", name="Backend (choose one)").get_by_label("None").check()
    expect(page.get_by_label("NFS", exact=True)).not_to_be_checked()
    _settles(api, "envs", set(), {"environments/nfs.yaml", "environments/ceph.yaml"})

    # Reset: a value set is dropped, the field shows the default again.
    assert api("POST", "/v1/plans", params={"name": "s", "sample": "true"}).status_code == 201
    assert api("PUT", "/v1/plans/s/parameters",
               json={"parameters": {"ComputeCount": 3}}).status_code == 200
    page.goto(api.url + "/#/plans/s/parameters")
    field = page.get_by_label("ComputeCount", exact=True)
    expect(field).to_have_value("3", timeout=DEPLOY_MS)
    page.get_by_role("button", name="Reset ComputeCount", exact=True).click()
    # At once the set value is no longer shown; the default follows once the server has
    # read the schema again (an ephemeral Heat: seconds on a loaded machine).
    expect(page.get_by_label("ComputeCount", exact=True)).not_to_have_value("3")
    expect(page.get_by_role("status")).to_contain_text("ComputeCount reset to its default",
                                                       timeout=DEPLOY_MS)
    expect(page.get_by_label("ComputeCount", exact=True)).to_have_value("1")
    expect(page.get_by_label("ComputeCount", exact=True)).to_be_enabled()
    expect(page.locator('form[data-parameter="ComputeCount"]')).to_contain_text("Default: 1")
    expect(page.get_by_role("button", name="Reset ComputeCount", exact=True)).to_be_disabled()
    assert "ComputeCount" not in api("GET", "/v1/plans/s/parameters").json()
    shot("reset")


def test_the_gui_sends_the_baremetal_deployment_file(
        api: Api, browser_page: object, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    from tests.functional.http.test_deploy_baremetal import EXAMPLE

    page: Page = browser_page  # type: ignore[assignment]
    shot = Shots(page, tmp_path / "screenshots", "baremetal")
    assert api("POST", "/v1/plans", params={"name": "bm", "sample": "true"}).status_code == 201
    page.goto(api.url + "/")
    page.get_by_label("API token").fill(api.token)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("link", name="bm", exact=True).click()
    page.get_by_label("Baremetal deployment (optional)").set_input_files(str(EXAMPLE))
    page.get_by_role("button", name="Deploy", exact=True).click()
    # The sample plan's templates have no deployed-server ports: the file reached the
    # server, whose refusal names what is missing, before any Heat starts.
    expect(page.locator("#execution-end")).to_contain_text("ERROR",
                                                          timeout=STEP_MS)
    expect(page.locator("#progress")).to_contain_text("deployed-neutron-port.yaml")
    [execution] = [e for e in api("GET", "/v1/executions").json()
                   if e["workflow"].endswith(".deploy")]
    assert "controller-0" in str(execution["input"]["baremetal_deployment"])
    shot("refused")
