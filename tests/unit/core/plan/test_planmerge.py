"""The plan-environment merge of plan update: environments kept, dropped and in order."""

from __future__ import annotations

import pytest
import yaml

from tripleo_flow.core.plan import planenv
from tripleo_flow.core.plan.planmerge import merge_for_update

REG = "overcloud-resource-registry-puppet.yaml"
TEMPLATES = {"overcloud-resource-registry-puppet.j2.yaml", "environments/a.yaml",
             "environments/b.yaml", "user/mine.yaml"}


def _env(*paths: str | dict) -> dict:
    entries = [p if isinstance(p, dict) else {"path": p} for p in paths]
    return {"name": "old", "environments": entries, "parameter_defaults": {"P": 1},
            "passwords": {"AdminPassword": "secret"}}


@pytest.mark.parametrize("old, new_env, expected, dropped", [
    # The same templates (no plan-environment of their own): nothing moves.
    ((REG, "environments/a.yaml", "user/mine.yaml"), None,
     [REG, "environments/a.yaml", "user/mine.yaml"], []),
    # A registry lost by an earlier update comes back first, not after the user's files.
    (("environments/a.yaml", "user/mine.yaml"), None,
     [REG, "environments/a.yaml", "user/mine.yaml"], []),
    # Inline data and the user's order are kept; a path that is gone is dropped.
    ((REG, {"data": {"parameter_defaults": {"X": 1}}}, "environments/b.yaml", "gone.yaml"), None,
     [REG, {"data": {"parameter_defaults": {"X": 1}}}, "environments/b.yaml"], ["gone.yaml"]),
    # Templates with a plan-environment: theirs first, in their order, then the user's.
    (("user/mine.yaml", "environments/a.yaml"), [REG, "environments/b.yaml"],
     [REG, "environments/b.yaml", "user/mine.yaml", "environments/a.yaml"], []),
    # A template environment that does not exist is not listed.
    (("user/mine.yaml",), ["missing.yaml", REG],
     [REG, "user/mine.yaml"], []),
])
def test_environments_order(old: tuple, new_env: list | None, expected: list,
                            dropped: list) -> None:
    data = None
    if new_env is not None:
        data = yaml.safe_dump({"name": "x", "environments": [{"path": p} for p in new_env],
                               "parameter_defaults": {"P": 2, "Q": 3}}).encode()
    env, gone = merge_for_update(_env(*old), data, "overcloud",
                                 planenv.available_files(TEMPLATES))
    assert env["environments"] == [e if isinstance(e, dict) else {"path": e} for e in expected]
    assert gone == dropped
    assert env["name"] == "overcloud"
    assert env["passwords"] == {"AdminPassword": "secret"}
    assert env["parameter_defaults"]["P"] == 1
