"""The GUI's navigation in a real chromium: a view whose requests answer late never
replaces the view the user has gone to since (CI found the plans list drawn over the
environments tab on a loaded machine)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.functional.http.conftest import Api
from tests.functional.http.test_gui_browser import browser_page, log_in  # noqa: F401


def test_a_late_answer_to_a_view_left_draws_nothing(
        api: Api, browser_page: object, tmp_path: Path) -> None:  # noqa: F811
    from playwright.sync_api import Page, Route, expect

    page: Page = browser_page  # type: ignore[assignment]
    assert api("POST", "/v1/plans", params={"name": "s", "sample": "true"}).status_code == 201
    log_in(page, api)
    expect(page.get_by_role("link", name="s", exact=True)).to_be_visible()

    # The next plan list is held in the browser until the test lets it go; any later
    # one goes on at once (held too, it was never let go, and on a loaded machine the
    # wait for the network to settle below timed out).
    held: list[Route] = []

    def hold(route: Route, request: Any) -> None:
        if request.method == "GET" and not held:
            held.append(route)
        else:
            route.continue_()

    page.route("**/v1/plans", hold)
    page.goto(api.url + "/#/executions")
    page.goto(api.url + "/#/plans")
    for _ in range(100):  # 10 s
        if held:
            break
        page.wait_for_timeout(100)
    assert held, "the plans view asked for no plan list"
    page.goto(api.url + "/#/plans/s/environments")
    expect(page.get_by_role("heading", level=1)).to_have_text("Plan s")
    held[0].continue_()
    # The held answer has arrived: the plans view it belonged to would draw now.
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(500)
    expect(page.get_by_role("heading", level=1)).to_have_text("Plan s")
    assert page.title().startswith("Plan s")
