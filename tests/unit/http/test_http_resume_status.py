"""``POST /v1/executions/{id}/resume`` answers 202 for a run it resumed even when that
run ended before its record was read back (a last task that ends at once), and 200 only
for an execution that had ended before (Mistral's resume of a workflow not paused).

The fresh-clone run of the test command caught the race: the answer was decided from
the record read after the resume, so a fast run read SUCCESS and got 200."""

from __future__ import annotations

import dataclasses

import falcon
import falcon.testing

from tripleo_flow.http.workflows import ResumeExecution


@dataclasses.dataclass
class Record:
    id: str
    state: str


class Executions:
    """Executions whose resumed run ends before its record is read back."""

    def __init__(self, before: str) -> None:
        self.before = before
        self.resumed: list[str] = []

    def get(self, execution_id: str) -> Record:
        return Record(execution_id, self.before)

    def resume(self, execution_id: str, wait: bool, api_user: bool) -> Record:
        self.resumed.append(execution_id)
        return Record(execution_id, "SUCCESS")


class Client:
    """A Python API with those executions."""

    def __init__(self, before: str) -> None:
        self.executions = Executions(before)


def answer(before: str) -> falcon.testing.Result:
    app = falcon.App()
    app.add_route("/v1/executions/{execution_id}/resume", ResumeExecution(Client(before)))
    return falcon.testing.TestClient(app).simulate_post("/v1/executions/e1/resume")


def test_a_resumed_run_that_ended_at_once_is_still_202() -> None:
    done = answer("PAUSED")
    assert done.status_code == 202
    assert done.headers["Location"] == "/v1/executions/e1"


def test_an_execution_that_had_ended_is_200() -> None:
    assert answer("SUCCESS").status_code == 200
