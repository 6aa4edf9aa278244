"""The cancels table of an executions database made before stops had states (issue 26):
opened again, it gains the ``state`` column; its rows read CANCELLED, and a stop with
FAILURE is kept with its state."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from tripleo_flow.engine.store import cancels


def test_an_older_cancels_table_gains_the_state_and_output_columns(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'executions.db'}")
    old = sa.Table("tripleo_flow_cancels", sa.MetaData(),
                   sa.Column("execution_id", sa.String(36), primary_key=True),
                   sa.Column("state_info", sa.Text, nullable=True),
                   sa.Column("cancelled_at", sa.Float, nullable=False))
    old.create(engine)
    with engine.begin() as conn:
        conn.execute(sa.insert(old).values(execution_id="old", state_info="why",
                                           cancelled_at=1.0))
    cancels.create_table(engine)
    cancels.create_table(engine)  # a second process opening it: nothing to add
    columns = {c["name"] for c in sa.inspect(engine).get_columns("tripleo_flow_cancels")}
    assert columns == {"execution_id", "state_info", "cancelled_at", "state", "output"}
    rows = cancels.Cancels(engine)
    assert rows.record("new", "Failure", cancels.FAILURE, {"result": "Failure", "x": [1]})
    found = rows.of(["old", "new"])
    assert (found["old"].state, found["old"].state_info) == (cancels.CANCELLED, "why")
    assert cancels.output_of(found["old"]) == {"result": "why"}  # none kept: Mistral's
    assert (found["new"].state, found["new"].state_info) == (cancels.FAILURE, "Failure")
    assert cancels.output_of(found["new"]) == {"result": "Failure", "x": [1]}
    engine.dispose()
