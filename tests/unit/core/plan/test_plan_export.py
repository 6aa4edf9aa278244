"""What an export for a reader leaves out (core.secrets.without_secrets, core.plan_export)."""

from __future__ import annotations

import yaml

from tripleo_flow.common.secret_masking import MASK
from tripleo_flow.core.plan import plan_export
from tripleo_flow.core.plan.secrets import mask_parameters, without_secrets

PASSWORD = "generated-password-1"


def test_without_secrets_drops_sections_names_and_values_holding_one() -> None:
    env = {"version": 1.0, "passwords": {"AdminPassword": PASSWORD},
           "parameter_defaults": {"ComputeCount": 2, "MyServiceSecret": "x",
                                  "ExtraConfig": {"url": f"http://u:{PASSWORD}@h"},
                                  "KeyName": "default"},
           "parameters": {"RabbitCookie": "c"}}
    assert without_secrets(env) == {
        "version": 1.0, "parameter_defaults": {"ComputeCount": 2, "ExtraConfig": {},
                                               "KeyName": "default"},
        "parameters": {}}
    assert without_secrets({"parameter_defaults": {"ComputeCount": 1}}) is None
    assert without_secrets(["not", "an", "environment"]) is None
    # Known secrets (the plan's passwords) are found in other environments too.
    other = {"parameter_defaults": {"Url": f"x{PASSWORD}", "Count": 3}}
    assert without_secrets(other, [PASSWORD]) == {"parameter_defaults": {"Count": 3}}


def test_plan_export_strips_environments_and_leaves_templates() -> None:
    template = (b"heat_template_version: wallaby\nparameters:\n"
                b"  AdminPassword: {type: string, hidden: true}\n")
    files = {
        "plan-environment.yaml": yaml.safe_dump(
            {"name": "p", "passwords": {"AdminPassword": PASSWORD},
             "parameter_defaults": {"ComputeCount": 2}}).encode(),
        "environments/mine.yaml": yaml.safe_dump(
            {"parameter_defaults": {"NeutronSecret": "n", "Debug": True}}).encode(),
        "environments/clean.yaml": b"# kept byte for byte\nparameter_defaults: {Debug: true}\n",
        "overcloud.yaml": template,
        "roles.j2.yaml": b"{% for r in roles %}passwords: {{ r }}{% endfor %}\n",
        "broken.yaml": b"parameter_defaults: [\n",
        "script.sh": b"echo passwords\n",
    }
    out = plan_export.without_secrets(files)
    assert yaml.safe_load(out["plan-environment.yaml"]) == {
        "name": "p", "parameter_defaults": {"ComputeCount": 2}}
    assert yaml.safe_load(out["environments/mine.yaml"]) == {
        "parameter_defaults": {"Debug": True}}
    for kept in ("environments/clean.yaml", "overcloud.yaml", "roles.j2.yaml", "broken.yaml",
                 "script.sh"):
        assert out[kept] == files[kept], kept
    assert files["plan-environment.yaml"].count(PASSWORD.encode()) == 1  # input untouched


def test_an_export_leaves_out_exactly_what_the_parameters_api_masks() -> None:
    params = {"Nested": {"inner_password": "n-secret-1", "port": 1},
              "Servers": [{"password": "l-secret-2", "host": "db"}, "plain"],
              "Url": f"http://u:{PASSWORD}@h", "Hidden": {"a": [{"db_password": None}]},
              "Count": 3}
    masked = mask_parameters(params, [PASSWORD])
    assert masked == {"Nested": {"inner_password": MASK, "port": 1},
                      "Servers": [{"password": MASK, "host": "db"}, "plain"],
                      "Url": MASK, "Hidden": {"a": [{"db_password": None}]}, "Count": 3}
    kept = without_secrets({"parameter_defaults": params}, [PASSWORD])
    assert kept == {"parameter_defaults": {"Nested": {"port": 1},
                                           "Servers": [{"host": "db"}, "plain"],
                                           "Hidden": {"a": [{"db_password": None}]},
                                           "Count": 3}}
