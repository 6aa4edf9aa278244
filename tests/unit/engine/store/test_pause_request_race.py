"""Two clients asking to pause one execution at the same moment: both are answered."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from tripleo_flow.engine.store import pause_requests


def test_a_request_written_between_the_look_and_the_insert_is_not_an_error(
        tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'executions.sqlite'}")
    pause_requests.create_table(engine)
    other = sa.create_engine(f"sqlite:///{tmp_path / 'executions.sqlite'}")
    raced: list[str] = []

    def after_look(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        if statement.lstrip().upper().startswith("SELECT") and not raced:
            raced.append(statement)  # the other client's request lands right now
            with other.begin() as conn2:
                conn2.execute(sa.insert(pause_requests.TABLE).values(
                    execution_id="e1", requested_at=0.0))

    sa.event.listen(engine, "after_cursor_execute", after_look)
    requests = pause_requests.PauseRequests(engine)
    requests.request("e1")
    assert raced, "the race was not staged"
    assert requests.requested(["e1"])
