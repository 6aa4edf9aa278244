"""The GUI's Backups page in a real browser (Debian's chromium) against the real server:
a backup made with a passphrase (a short one refused in the API's words), listed,
downloaded as its encrypted bytes, restored from that file with its passphrase (a
wrong one, then one without "replace" ticked, refused in the page's own terms with
nothing changed) and deleted
(issues 27 and 30).

Screenshots go to the test's tmp dir, and to ``$TRIPLEO_FLOW_SCREENSHOTS`` when set.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.functional.http.test_backups_api import PASSPHRASE, served, state
from tests.functional.http.test_gui_browser import Shots, chromium_page, log_in
from tripleo_flow.common import sealing

pytestmark = pytest.mark.functional


def test_the_gui_makes_lists_downloads_restores_and_deletes_a_backup(tmp_path: Path) -> None:
    from playwright.sync_api import Page, expect

    with served(tmp_path / "a") as api, chromium_page() as opened:
        api.client.plans.create("oc", sample=True)
        api.client.parameters.set("oc", {"ComputeCount": 3})
        data_dir = api.client.data_dir
        page: Page = opened  # type: ignore[assignment]
        console_errors: list[str] = []
        page.on("console", lambda m: console_errors.append(m.text)
                if m.type == "error" and not m.text.startswith("Failed to load resource")
                else None)
        shot = Shots(page, tmp_path / "screenshots", "backups")
        log_in(page, api)
        page.get_by_role("link", name="Backups").click()
        expect(page.locator("#no-backups")).to_contain_text("No backups yet")

        # A short passphrase: the API's refusal, nothing written.
        page.get_by_label("Passphrase", exact=True).fill("short")
        page.get_by_role("button", name="Back up").click()
        expect(page.locator("#backup-problem")).to_contain_text(
            "backup_passphrase_min_length")
        expect(page.get_by_label("Passphrase", exact=True)).to_have_value("")
        assert api("GET", "/v1/backups").json() == []
        shot("short-passphrase")

        page.get_by_label("Passphrase", exact=True).fill(PASSPHRASE)
        page.get_by_role("button", name="Back up").click()
        expect(page.locator("#backup-made")).to_contain_text("plans oc")
        [made] = api("GET", "/v1/backups").json()
        row = page.locator(f'tr[data-backup="{made["id"]}"]')
        expect(row).to_contain_text("yes")
        shot("made")

        # The download is the encrypted archive the server keeps.
        with page.expect_download() as info:
            row.get_by_role("link", name=f"Download backup {made['id']}").click()
        downloaded = tmp_path / "downloaded.tfbackup"
        info.value.save_as(downloaded)
        kept = (data_dir / "backups" / f"{made['id']}.tfbackup").read_bytes()
        assert downloaded.read_bytes() == kept and sealing.is_sealed(kept)

        # Restore from that file: a wrong passphrase, then no force: refused, unchanged.
        api.client.parameters.set("oc", {"ComputeCount": 5})
        before = state(data_dir)
        page.get_by_label("Archive").set_input_files(str(downloaded))
        page.get_by_label("Its passphrase").fill("not the passphrase")
        page.get_by_role("button", name="Restore").click()
        expect(page.locator("#restore-problem")).to_contain_text("passphrase is wrong")
        shot("wrong-passphrase")
        page.get_by_label("Its passphrase").fill(PASSPHRASE)
        page.get_by_role("button", name="Restore").click()
        # The refusal in the page's own terms (its checkbox), not the API's "force".
        problem = page.locator("#restore-problem")
        expect(problem).to_contain_text("This server already holds")
        expect(problem).to_contain_text('Tick "replace the state this server holds')
        assert "force" not in problem.inner_text()
        shot("needs-force")
        assert state(data_dir) == before
        expect(page.get_by_role("button", name="Restore")).to_be_enabled()
        assert not list((data_dir / "uploads").iterdir())  # the GUI deleted its uploads

        page.get_by_label("replace the state").check()
        page.get_by_label("Its passphrase").fill(PASSPHRASE)
        page.get_by_role("button", name="Restore").click()
        expect(page.locator("#restore-done")).to_contain_text("Restored")
        expect(page.locator("#restore-done")).to_contain_text("plans oc")
        expect(page.locator("#restore-done")).to_contain_text("kept aside")
        assert api("GET", "/v1/plans/oc/parameters").json()["ComputeCount"] == 3
        expect(row).to_be_visible()  # the backups stay through a restore
        shot("restored")

        page.once("dialog", lambda dialog: dialog.accept())
        row.get_by_role("button", name=f"Delete backup {made['id']}").click()
        expect(page.locator("#no-backups")).to_be_visible()
        assert api("GET", "/v1/backups").json() == []
        shot("deleted")
        assert console_errors == []
