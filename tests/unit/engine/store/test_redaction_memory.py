"""The execution backend's masking remembers the large parts it masked (issue 29: an
unchanged 80,000-parameter input was masked again at every save of its execution), and
never lets a secret through for it: what it answers is what masking afresh answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tripleo_flow.common import secret_masking
from tripleo_flow.engine.store.redaction import Redactor

SECRET = "Zq8xW2vR5tY1kP0"
#: Parameters enough to make a part worth remembering.
MANY = {f"P{i}": f"value-{i}" for i in range(2000)}


def _fresh(value: Any, known: tuple[str, ...] = (), everything: bool = False) -> Any:
    """What masking ``value`` afresh gives, as the database stores it."""
    return json.loads(json.dumps(secret_masking.redact(value, known, everything=everything)[0]))


def _stored(value: Any) -> Any:
    return json.loads(json.dumps(value))


def test_an_unchanged_part_is_masked_once() -> None:
    redactor = Redactor()
    meta = {"workflow": "w", "input": {"plan": "p", "parameters": dict(MANY)}, "pid": 1}
    first = redactor.flow_row({"meta": meta})
    assert redactor.parts_masked == 1
    for pid in range(2, 6):  # each save of the execution changes its meta a little
        again = redactor.flow_row({"meta": {**meta, "pid": pid}})
        assert again["meta"]["input"] == first["meta"]["input"]
        assert again["meta"]["pid"] == pid
    assert redactor.parts_masked == 1
    # an atom row holding the same parameters elsewhere reads them back too
    row = redactor.atom_row({"name": "t", "results": {"state": "SUCCESS", "ctx": {
        "plan": "p", "parameters": dict(MANY)}}})
    assert row["results"]["ctx"]["parameters"] == MANY
    assert redactor.parts_masked == 1


def test_a_secret_learned_later_is_masked_in_a_remembered_part() -> None:
    redactor = Redactor()
    value = {"input": {**MANY, "Motd": f"welcome {SECRET}"}}
    assert redactor.value(value)["input"]["Motd"] == f"welcome {SECRET}"
    redactor.learn([SECRET])
    assert redactor.value(value)["input"]["Motd"] == secret_masking.MASK
    assert redactor.value(value) == _fresh(value, (SECRET,))


def test_a_secret_found_in_one_part_is_masked_in_the_others() -> None:
    redactor = Redactor()
    first = {"input": {**MANY, "AdminPassword": SECRET}, "output": "none"}
    assert redactor.value(first) == _fresh(first)
    # the input is read back (its secret not looked for again): still masked in a new part
    second = {**first, "output": {"log": f"connected with {SECRET}", "more": dict(MANY)}}
    masked = redactor.value(second)
    assert masked["output"]["log"] == secret_masking.MASK
    assert SECRET not in json.dumps(masked)
    assert masked == _fresh(second)


def test_a_part_and_the_same_one_under_a_secret_name_differ() -> None:
    redactor = Redactor()
    assert redactor.value({"plain": dict(MANY)})["plain"] == MANY
    hidden = redactor.value({"db_password": dict(MANY)})["db_password"]
    assert set(hidden.values()) == {secret_masking.MASK}
    redactor = Redactor()
    assert redactor.value(dict(MANY)) == MANY
    everything = redactor.value(dict(MANY), everything=True)
    assert set(everything.values()) == {secret_masking.MASK}


def test_a_new_secret_in_another_thread_of_work_forgets_every_remembered_part() -> None:
    redactor = Redactor()
    value = {"a": {**MANY, "x": SECRET}}
    redactor.value(value)
    before = redactor.parts_masked
    redactor.learn(["some-other-secret-1234"])
    redactor.value(value)
    assert redactor.parts_masked == before + 1


@pytest.mark.parametrize("value, everything", [
    ({"parameters": {"hidden": True, "default": SECRET, "description": "x" * 5000}}, False),
    ({"schema": [{"NoEcho": "true", "value": SECRET, "pad": "y" * 5000}]}, False),
    ({"list": [dict(MANY), (1, 2, f"pre-{SECRET}-post"), None, True]}, False),
    ([dict(MANY), {"token": SECRET}], False),
    ({"result": dict(MANY), "extra": {"KeystoneFernetKey0": SECRET}}, True),
    ({"big text": f"{'z' * 6000} {SECRET}", "short": SECRET}, False),
    ({"deep": {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {
        "i": {"private_key": SECRET, "pad": dict(MANY)}}}}}}}}}}}, False),
])
def test_remembered_or_not_the_answer_is_what_masking_afresh_gives(
        value: Any, everything: bool) -> None:
    redactor = Redactor()
    redactor.learn([SECRET])
    expected = _fresh(value, (SECRET,), everything)
    for _ in range(3):
        masked = redactor.value(value, everything=everything)
        assert _stored(masked) == expected
        assert SECRET not in json.dumps(masked)


def test_what_it_remembers_stays_within_its_budget() -> None:
    redactor = Redactor(remember_bytes=100_000)
    for i in range(20):
        redactor.value({"n": i, "parameters": dict(MANY)})
    assert redactor._remembered_bytes <= 100_000
