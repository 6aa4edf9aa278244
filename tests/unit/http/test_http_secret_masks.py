"""What the HTTP API shows of parameter values and the parameter schema: no secret."""

from __future__ import annotations

from tripleo_flow.common import secret_masking
from tripleo_flow.core.plan import secrets

KNOWN = ["s3cr3t-admin-password"]


def _entry(**fields: object) -> dict[str, object]:
    return {"type": "string", "description": "d", "hidden": False, "constraints": {},
            "value": None, "value_set": False, "paths": [""], "default": None, **fields}


def test_hidden_and_secret_named_parameters_show_the_mask_only() -> None:
    schema = {"plan": "oc", "cached": True, "parameters": {
        "AdminPassword": _entry(hidden=True, default="given-default", value="set-value",
                                value_set=True),
        "SomeToken": _entry(default="token-default"),
        "NoEchoed": _entry(hidden=True, default="x" * 10),
        "Unset": _entry(hidden=True),
        "ComputeCount": _entry(type="number", default=1, value=3, value_set=True),
        "Url": _entry(value=f"http://admin:{KNOWN[0]}@host/"),
    }}
    shown = secrets.mask_schema(schema, KNOWN)["parameters"]
    assert (shown["AdminPassword"]["default"] == shown["AdminPassword"]["value"]
            == secret_masking.MASK)
    assert shown["AdminPassword"]["value_set"] is True
    assert shown["AdminPassword"]["type"] == "string"  # what a form needs stays
    assert shown["SomeToken"]["default"] == secret_masking.MASK
    assert shown["NoEchoed"]["default"] == secret_masking.MASK
    assert shown["Unset"]["default"] is None and shown["Unset"]["value"] is None
    assert (shown["ComputeCount"]["default"], shown["ComputeCount"]["value"]) == (1, 3)
    assert shown["Url"]["value"] == secret_masking.MASK
    assert KNOWN[0] not in repr(shown) and "given-default" not in repr(shown)
    assert "set-value" in repr(schema)  # the answer is a copy: the schema is unchanged


def test_parameter_values_keep_their_names_and_lose_their_secrets() -> None:
    values = {"NeutronPassword": "pw-value-1", "ComputeCount": 2,
              "ExtraConfig": {"a": [f"x{KNOWN[0]}y", "plain"]}, "Flag": True}
    assert secrets.mask_parameters(values, KNOWN) == {
        "NeutronPassword": secret_masking.MASK, "ComputeCount": 2,
        "ExtraConfig": {"a": [secret_masking.MASK, "plain"]}, "Flag": True}
