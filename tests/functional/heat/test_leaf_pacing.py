"""Heat's leaf pacing: off by default for native and processes, Heat's own with
``[heat] pace_leaves = true`` (see tripleo_flow/heat/unpaced.py; its other change,
quick RPC replies: tests/functional/heat/test_quick_replies.py).

Heat's convergence engine waits one second after starting each leaf resource of a
stack; tripleo-flow runs Heat with that wait off.  Both settings are run on the real
heat-all with a stack of independent leaves, and told apart by Heat's own events: with
pacing, consecutive leaves start at least a second apart (the spread of their start
events is at least ``LEAVES - 1`` seconds); without, they start together.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from tests.functional.heat.conftest import make_conf
from tripleo_flow.client import Client
from tripleo_flow.heat import process
from tripleo_flow.heat.client import HeatClient
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional
LEAVES = 12


def _template() -> dict[str, object]:
    return {"heat_template_version": "wallaby",
            "resources": {f"leaf{i:02d}": {"type": "OS::Heat::Value",
                                           "properties": {"value": str(i)}}
                          for i in range(LEAVES)}}


def _start_spread(client: Client, heat_dir: str) -> tuple[float, str]:
    """Create the stack of leaves on a launched Heat; the seconds between the first and
    the last leaf's CREATE_IN_PROGRESS event, and Heat's command line."""
    endpoint = client.heat.launch(heat_dir, "native")
    try:
        record = HeatDir(heat_dir).read_run()
        assert record is not None
        command = " ".join(process.cmdline(int(record["pid"])))
        heat = HeatClient(endpoint["endpoint"], timeout=120.0)
        stack_id = heat.create_stack({"stack_name": "leaves", "template": _template()})
        stack = heat.wait("leaves", interval=0.5, timeout=300.0)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack.get("stack_status_reason")
        starts = [datetime.datetime.fromisoformat(e["event_time"].replace("Z", "+00:00"))
                  for e in heat.events("leaves", stack_id)
                  if e.get("resource_status") == "CREATE_IN_PROGRESS"
                  and str(e.get("resource_name", "")).startswith("leaf")]
        assert len(starts) == LEAVES, starts
        return (max(starts) - min(starts)).total_seconds(), command
    finally:
        client.heat.kill(heat_dir, "native")


def test_leaves_start_together_by_default(client: Client, tmp_path: Path) -> None:
    spread, command = _start_spread(client, str(tmp_path / "work"))
    assert "unpaced.py all --config-file" in command, command
    assert spread < LEAVES - 1, f"the {LEAVES} leaves were started over {spread} s"
    log = (HeatDir(str(tmp_path / "work")).log_dir / "heat-all.out").read_text()
    assert "heat-all with leaf pacing off, quick RPC replies" in log


def test_pace_leaves_keeps_heats_pacing(tmp_path: Path, heat_venv: Path) -> None:
    """``pace_leaves = true``: the runner keeps Heat's pacing (``--paced``; which
    command runs for each combination of the two settings: tests/unit/heat/
    test_unpaced.py)."""
    client = Client(make_conf(tmp_path, heat_venv, pace_leaves=True))
    try:
        spread, command = _start_spread(client, str(tmp_path / "work"))
    finally:
        client.close()
    assert "unpaced.py all --paced --config-file" in command, command
    assert spread >= LEAVES - 1, f"the {LEAVES} leaves were started over {spread} s"
    log = (HeatDir(str(tmp_path / "work")).log_dir / "heat-all.out").read_text()
    assert "heat-all with quick RPC replies" in log
