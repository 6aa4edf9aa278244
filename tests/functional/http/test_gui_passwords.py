"""The plan's Passwords tab in a real browser (Debian's chromium) against the real
server (issue 30): the generated passwords by name only (no value in the page),
a rotation of the ones ticked through the same tripleo.parameters.rotate_passwords
workflow as ``password rotate --password NAME``, after a confirmation (dismissed:
nothing changes), followed live, then the names rotated.

Screenshots go to the test's tmp dir, and to ``$TRIPLEO_FLOW_SCREENSHOTS`` when set.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.functional.http import test_gui_browser as gui
from tests.functional.http.conftest import Api

pytestmark = pytest.mark.functional


def test_the_gui_rotates_chosen_passwords_showing_names_only(api: Api, tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    api.client.plans.create("oc", sample=True)
    before = api.client.passwords.get("oc")
    chosen, other = sorted(before)[:2]
    shots = tmp_path / "screenshots"
    with gui.gui_at(api, "plans/oc/passwords", shots, "passwords") as (opened, shot, errors):
        page: Page = opened  # type: ignore[assignment]
        form = page.locator("#rotate-form")
        expect(form.get_by_label(chosen, exact=True)).to_be_visible(timeout=gui.STEP_MS)
        text = page.locator("main").inner_text()
        assert not [name for name, value in before.items() if str(value) in text]
        assert set(before) <= set(text.split())
        shot("names")

        said = gui.answer_dialogs(page, [False, True])
        form.get_by_label(chosen, exact=True).check()
        page.get_by_role("button", name="Rotate passwords").click()
        page.get_by_role("button", name="Rotate passwords").click()
        expect(page.locator("#rotate-done")).to_have_text(f"Rotated 1 password(s): {chosen}.",
                                                          timeout=gui.STEP_MS)
        expect(page.locator("#execution-end")).to_contain_text("SUCCESS")
        assert said == [f"Rotate 1 password(s) ({chosen}) of plan oc? A deployed cloud gets "
                        "the new values at its next deploy; anything using the old ones must "
                        "be updated too."] * 2
        after = api.client.passwords.get("oc")
        assert after[chosen] != before[chosen] and after[other] == before[other]
        # One rotation only: the dismissed confirmation started none.
        [run] = api("GET", "/v1/executions?workflow=tripleo.parameters.rotate_passwords").json()
        assert run["input"]["rotate"] == [chosen]
        text = page.locator("main").inner_text()
        assert str(after[chosen]) not in text and str(before[chosen]) not in text
        shot("rotated")
        assert errors == []
