"""The GUI's static files as ``api serve`` serves them: a fixed set at fixed paths,
their content types, a strict Content-Security-Policy, no token needed for them, no
way to reach another file, and no token in the server's log."""

from __future__ import annotations

import configparser
import logging
import re
import socket
from pathlib import Path

import pytest

from tests.functional.http.conftest import Api
from tripleo_flow.http import gui


def raw_get(api: Api, target: str) -> tuple[int, bytes]:
    """GET ``target`` sent as it is (no client-side path normalisation)."""
    host, port = api.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
                     .encode())
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.mark.parametrize("path", sorted(gui.FILES))
def test_each_file_is_served_without_a_token_with_its_type_and_policy(api: Api,
                                                                     path: str) -> None:
    api.session.headers.pop("X-Auth-Token")
    answer = api("GET", path)
    assert answer.status_code == 200, answer.text
    name, kind = gui.FILES[path]
    assert answer.headers["Content-Type"] == kind
    assert answer.headers["Content-Security-Policy"] == gui.CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in answer.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in answer.headers["Content-Security-Policy"]
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert answer.headers["X-Frame-Options"] == "DENY"
    assert answer.content == gui.static_files()[path].data and answer.content
    assert api("HEAD", path).status_code == 200


def test_the_page_loads_its_code_from_files_the_policy_allows(api: Api) -> None:
    page = api("GET", "/").text
    assert '<script type="module" src="/gui/app.js">' in page
    assert "<script>" not in page and " style=" not in page  # nothing inline to refuse
    for path in gui.FILES:
        if path != "/":
            assert path in page or api("GET", path).status_code == 200


@pytest.mark.parametrize("target", [
    "/gui/nothing.js", "/gui/", "/gui", "/index.html", "/gui/app.js.map",
    "/gui/../setup.cfg", "/gui/%2e%2e/%2e%2e/setup.cfg", "/../../../etc/passwd",
    "/gui/..%2f..%2fgui.py", "/%2e%2e/gui.py", "//etc/passwd", "/gui/app.js/../../gui.py",
])
def test_no_other_path_is_a_file(api: Api, target: str) -> None:
    status, body = raw_get(api, target)
    assert status in (400, 401, 404), (target, status, body[:200])
    assert b"root:" not in body and b"import" not in body and b"[metadata]" not in body


def test_the_api_still_needs_its_token(api: Api) -> None:
    api.session.headers.pop("X-Auth-Token")
    assert api("GET", "/v1/plans").status_code == 401


def test_the_token_never_reaches_the_log(api: Api, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    assert api("GET", "/").status_code == 200
    assert api("GET", "/v1/plans/missing").status_code == 404
    assert api("GET", "/v1/plans", headers={"X-Auth-Token": api.token + "x"}).status_code == 401
    assert api("POST", "/v1/plans", params={"name": "bad/name", "sample": "true"}
               ).status_code == 400
    assert caplog.records  # the server did log these requests
    assert api.token not in caplog.text


def test_a_workflow_graph_is_served_for_the_gui(api: Api) -> None:
    graph = api("GET", "/v1/workflows/deploy")
    assert graph.status_code == 200, graph.text
    body = graph.json()
    assert body["name"] == "tripleo.deploy.deploy"
    names = [t["name"] for t in body["tasks"]]
    assert "deploy_stack" in names
    # deploy_stack joins the plan check and Heat's launch, which run side by side.
    assert sorted(e["from"] for e in body["edges"] if e["to"] == "deploy_stack") == [
        "check_plan", "launch_heat"]
    assert sorted(e["to"] for e in body["edges"] if e["from"] == "start") == [
        "check_plan", "launch_heat"]
    missing = api("GET", "/v1/workflows/no.such.workflow")
    assert missing.status_code == 404 and missing.json()["error"]["kind"] == "not-found"
    api.session.headers.pop("X-Auth-Token")
    assert api("GET", "/v1/workflows/deploy").status_code == 401


def test_every_file_of_the_gui_is_served_shipped_and_imported_from_a_served_path() -> None:
    folder = Path(gui.__file__).parent / "static"
    assert sorted(p.name for p in folder.iterdir()) == sorted(n for n, _ in gui.FILES.values())
    setup = configparser.ConfigParser()
    setup.read(Path(__file__).resolve().parents[3] / "setup.cfg")
    assert "http/static/*" in setup["options.package_data"]["tripleo_flow"]
    served = set(gui.FILES)
    for name, _ in gui.FILES.values():
        text = (folder / name).read_text()
        for target in re.findall(r'(?:from|import|src=|href=)\s*"(/[^"#]*)"', text):
            assert target in served, (name, target)
        if name.endswith(".js"):
            assert "localStorage" not in text and "EventSource" not in text, name
            assert "innerHTML" not in text and "eval(" not in text, name
