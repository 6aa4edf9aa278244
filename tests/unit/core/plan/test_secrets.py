"""The secret rule: which names are secret, what a redacted record keeps."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from tripleo_flow.common import secret_masking
from tripleo_flow.core.plan import secrets
from tripleo_flow.engine.store import redaction
from tripleo_flow.engine.store.redaction import SECRET_RESULT, Redactor, masked_inputs

MASK = secret_masking.MASK


@pytest.mark.parametrize(("name", "secret"), [
    ("AdminPassword", True), ("RabbitCookie", True), ("CephClusterFSID", True),
    ("KeystoneFernetKey0", True), ("HorizonSecret", True), ("OctaviaCaKeyPassphrase", True),
    ("CustomServiceSecret", True), ("MyAuthToken", True), ("passwords", True),
    ("keystone::admin_password", True), ("password", True), ("MigrationSshKey", True),
    ("ControllerCount", False), ("key", False), ("KeyName", False), ("SshPublicKey", False),
    ("plan", False), ("parameter_defaults", False), (3, False),
    # a workflow's own data: only words that mean a secret anywhere
    ("key1", False), ("cache_key", False), ("fernet_keys", False), ("auth_token", True),
    ("ssh_private_key", True), ("api_key", True), ("client_secret", True),
])
def test_secret_names(name: Any, secret: bool) -> None:
    assert secret_masking.is_secret_name(name) is secret


@pytest.mark.parametrize(("value", "known", "everything", "expected"), [
    # values under secret names, at any depth; keys are kept
    ({"AdminPassword": "pw-123456", "Count": 2}, (), False,
     {"AdminPassword": MASK, "Count": 2}),
    ({"passwords": {"Anything": "x", "Key": {"private_key": "k"}}}, (), False,
     {"passwords": {"Anything": MASK, "Key": {"private_key": MASK}}}),
    # a copy of a secret found in the same value, under an innocent name
    ({"AdminPassword": "pw-123456", "copy": "url://admin:pw-123456@host"}, (), False,
     {"AdminPassword": MASK, "copy": MASK}),
    # a known secret anywhere; too short to be looked for inside strings
    ({"config": ["line pw-abcdef line"], "n": "ab"}, ("pw-abcdef", "ab"), False,
     {"config": [MASK], "n": "ab"}),
    # a hidden (NoEcho) Heat parameter's default
    ({"Admin": {"hidden": True, "default": "d-secret", "type": "string"}}, (), False,
     {"Admin": {"hidden": True, "default": MASK, "type": "string"}}),
    # a result declared secret: every leaf
    ({"A": "x", "B": ["y", 3], "C": None, "D": True}, (), True,
     {"A": MASK, "B": [MASK, MASK], "C": None, "D": True}),
    ("nothing secret", (), False, "nothing secret"),
])
def test_redact(value: Any, known: tuple[str, ...], everything: bool, expected: Any) -> None:
    assert secret_masking.redact(value, known, everything=everything)[0] == expected


def test_environment_secrets() -> None:
    env = {"passwords": {"A": "p1", "K": {"private_key": "pk", "public_key": "pub"}},
           "parameter_defaults": {"FooPassword": "p2", "Count": 3, "Name": "n"},
           "parameters": {"BarKey": ["p3"]}}
    assert secrets.environment_secrets(env) == {"p1", "pk", "pub", "p2", "p3"}
    assert secrets.environment_secrets(None) == set()


def test_redactor_masks_secret_results_and_remembers_what_it_saw() -> None:
    redactor = Redactor()
    outcome = {"state": "SUCCESS", SECRET_RESULT: True,
               "result": {"NewName": "value-one-1"},
               "published": {"pw": "value-one-1"}, "ctx": {"plan": "oc", "pw": "value-one-1"}}
    row = redactor.atom_row({"name": "t", "results": outcome, "meta": {}})
    assert row["results"] == {**outcome, "result": {"NewName": MASK}, "published": {"pw": MASK},
                              "ctx": {"plan": "oc", "pw": MASK}}
    assert outcome["result"] == {"NewName": "value-one-1"}  # the live value is untouched
    later = redactor.flow_row({"meta": {"output": {"x": "value-one-1"}}})
    assert later == {"meta": {"output": {"x": MASK}}}
    redactor.learn(["learned-secret"])
    assert redactor.value({"x": "learned-secret"}) == {"x": MASK}


def test_masked_inputs_names_inputs_that_lost_their_secret() -> None:
    assert masked_inputs({"plan": "oc", "request": {"p": MASK}, "n": 1}) == ["request"]
    assert masked_inputs({"plan": "oc"}) == []


def test_config_secrets_are_the_options_marked_secret() -> None:
    from tripleo_flow import config

    conf = config.new_conf()
    conf([], project="tripleo-flow", default_config_files=[], default_config_dirs=[])
    conf.set_override("auth_token", "api-token-0123456789abcdef", group="api")
    conf.set_override("key", "swift-key-secret", group="swift")
    found = config.secret_values(conf)
    assert {"api-token-0123456789abcdef", "swift-key-secret"} <= found
    assert "tripleo-flow" not in found and "native" not in found


def test_redaction_of_a_value_nested_past_the_limit_keeps_no_part_of_it() -> None:
    nested: Any = "AdminPasswordValue"
    for _ in range(900):
        nested = [nested]
    masked, found = secret_masking.redact({"passwords": {"AdminPassword": "s3cr3t-value"},
                                    "Deep": nested})
    assert masked["passwords"]["AdminPassword"] == secret_masking.MASK
    deepest = masked["Deep"]
    for _ in range(secret_masking.MAX_DEPTH):
        deepest = deepest[0]
    assert deepest == secret_masking.TOO_DEEP
    assert "s3cr3t-value" in found


@pytest.mark.parametrize(("inputs", "expected"), [
    ({"user_environments": [{"name": "e.yaml", "files": {
        "e.yaml": "parameter_defaults:\n  AdminPassword: s3cret-value\n  Count: 3\n"}}]},
     {"s3cret-value"}),
    ({"user_environments": [{"name": "e.yaml", "files": {
        "e.yaml": "passwords:\n  X: one-secret\n", "other.yaml": "resource_registry: {}\n"}}]},
     {"one-secret"}),
    ({"user_environments": [{"name": "bad.yaml", "files": {"bad.yaml": "a: [1\n"}}]}, set()),
    ({"user_environments": [{"name": "x", "files": "not a mapping"}, "junk", 7]}, set()),
    ({"user_environments": "not a list"}, set()),
    ({"plan": "oc"}, set()),
])
def test_environment_file_secrets(inputs: dict[str, Any], expected: set[str]) -> None:
    assert secrets.environment_file_secrets(inputs) == expected


def test_redacting_with_needles_sorted_once_gives_the_same_copy() -> None:
    known = ["short", "known-secret", "known-secret-longer", "x"]
    value = {"a": "has known-secret-longer", "b": ["known-secret here", "short"],
             "admin_password": "found-in-value", "c": "also found-in-value"}
    expected = secret_masking.redact(value, known)
    assert secret_masking.redact_sorted(value, secret_masking.needles(known)) == expected
    assert expected[0]["c"] == MASK and expected[1] == {"found-in-value"}
    assert secret_masking.is_secret_name("AdminPassword")
    assert secret_masking.is_secret_name("AdminPassword")
    assert not secret_masking.is_secret_name(("AdminPassword",))


PW = "ygyw31SpDYVmgka4xHYCdlpGr"


@pytest.mark.parametrize(("text", "held"), [
    (f"Value '{PW}' is not an integer", True),
    # the characters spelled out, as Heat quotes a list or a joined string
    (f"Value '{' '.join(PW)}' is not an integer", True),
    (f"Value must be a number: {list(PW)!r}", True),
    (f"receiver {PW[::-1]}", True),                      # reversed
    (f"receiver {PW.upper()}", True),                    # case changed
    (f"digest {__import__('hashlib').sha256(PW.encode()).hexdigest()}", False),
    (f"receiver {__import__('base64').b64encode(b'xy' + PW.encode()).decode()}", True),
    (f"receiver {PW[2:16]}", True),                      # a part of it
    ("every AdminPassword and other-secret-words", False),  # words of a secret: no
    # shorter than a window: let through
    (f"receiver {PW[4:4 + secret_masking.WINDOW - 1]}", False),
    ("Property error: resources.Leak.properties.length: Value 'abc' is not an integer", False),
    ("", False),
])
def test_needles_find_a_secret_derived_into_a_message(text: str, held: bool) -> None:
    assert secret_masking.needles([PW, "other-secret-words-1234"]).found_in(text) is held
    assert (secret_masking.redact({"error": text}, [PW])[0]["error"] == MASK) is held


def test_every_tripleo_password_name_and_secret_section_is_secret_by_the_name_rule() -> None:
    """The engine masks by the generic name rule alone: a TripleO password name (or a
    plan-environment section of secrets) it missed would be kept in execution records."""
    from tripleo_flow.core.plan.passwords import PASSWORD_NAMES

    names = [*PASSWORD_NAMES, *secrets.SECRET_SECTIONS]
    assert [name for name in names if not secret_masking.is_secret_name(name)] == []


def test_a_short_secret_is_found_spelled_out_whole() -> None:
    assert secret_masking.needles(["abc123"]).found_in("value 'a b c 1 2 3'")
    assert not secret_masking.needles(["abc123"]).found_in("value 'a b c 1 2'")


def test_the_quick_look_at_a_names_last_word_never_changes_the_answer() -> None:
    """``_secret_name`` answers most names (P123, ComputeCount) from their last word
    alone; on names built from every word the patterns know, and from others, the answer
    must be what the patterns alone give."""

    def by_patterns(name: str) -> bool:
        tail = name.rsplit("::", 1)[-1].rsplit(".", 1)[-1]
        suffix = secret_masking._SUFFIX if tail[:1].isupper() else secret_masking._PLAIN_SUFFIX
        return bool(suffix.search(tail)) and not secret_masking._NOT_SECRET.search(tail)

    words = ["password", "Password", "PASSWD", "secret", "Secrets", "key", "Key", "keys",
             "kek", "passphrase", "token", "Tokens", "cookie", "authkey", "credential",
             "Credentials", "fsid", "hashsuffix", "private_key", "api_key", "apikey",
             "access_key", "secret_key", "name", "count", "s", "1", "2", "_", "::", ".",
             "Keystone", "Fernet", "Public", "key_name", "id", "X"]
    rnd = random.Random(1)
    secret = 0
    for _ in range(20000):
        name = "".join(rnd.choice(words) for _ in range(rnd.randint(1, 4)))
        secret_masking._secret_name.cache_clear()
        assert secret_masking._secret_name(name) == by_patterns(name), name
        secret += by_patterns(name)
    assert 1000 < secret < 19000, "both kinds of names were tried"


_SMALL_VALUES: list[Any] = [
    {"AdminPassword": "pw-123456", "Count": 2, "n": None, "b": True, "f": 1.5},
    {"passwords": {"Anything": "x", "Key": {"private_key": "k"}, "n": 3}},
    {"AdminPassword": "pw-123456", "copy": "url://admin:pw-123456@host"},
    {"config": ["line pw-abcdef line", ("t", "pw-abcdef")], "n": "ab", 7: "pw-abcdef"},
    {"Admin": {"hidden": "True", "default": "d-secret", "type": "string"}},
    {"Admin": {"NoEcho": "true", "value": ["d-secret", 4]}},
    {"state": "SUCCESS", "ctx": {"plan": "oc", "token": 1234567, "api_key": False},
     "next": ["t2"], "result": None},
    ["PW-ABCDEF", "reversed: fedcba-wp", "nothing"], "pw-abcdef inside", "", 0, None, True,
]


def _deep(levels: int, leaf: Any) -> Any:
    for _ in range(levels):
        leaf = [leaf] if levels % 2 else {"AdminPassword": leaf}
    return leaf


@pytest.mark.parametrize("value", [*_SMALL_VALUES, _deep(secret_masking.MAX_DEPTH + 3, "pw-abcdef"),
                                   _deep(secret_masking.MAX_DEPTH + 2, {"x": 1})])
@pytest.mark.parametrize("known", [(), ("pw-abcdef", "ab"), ("pw-123456", "d-secret", "ab")])
def test_masking_a_small_value_in_one_walk_gives_what_redaction_gives(
        value: Any, known: tuple[str, ...]) -> None:
    """:func:`secret_masking.mask_small` (one walk, the redactor's way for small values) gives
    the copy and the secrets :func:`secret_masking.redact_sorted` gives, once every secret it
    found is among the known ones; short of that the caller masks again."""
    masked, found = secret_masking.mask_small(value, secret_masking.needles(known), budget=10_000)
    expected, expected_found = secret_masking.redact_sorted(value, secret_masking.needles(known))
    assert found == expected_found
    if found <= set(known) | {s for s in found if len(s) < secret_masking.MIN_LENGTH}:
        assert masked == expected
    again, _ = secret_masking.mask_small(value, secret_masking.needles({*known, *found}),
                                         budget=10_000)
    assert again == expected


def test_masking_in_one_walk_stops_past_its_budget() -> None:
    with pytest.raises(secret_masking.TooLarge):
        secret_masking.mask_small({"k": "x" * 100}, secret_masking.needles(()), budget=50)
    with pytest.raises(secret_masking.TooLarge):
        secret_masking.mask_small(list(range(100)), secret_masking.needles(()), budget=50)
    assert secret_masking.mask_small({"k": "x" * 10}, secret_masking.needles(()), budget=50)[0] == {
        "k": "x" * 10}


@pytest.mark.parametrize("value", _SMALL_VALUES)
def test_the_redactor_masks_small_values_as_it_masks_them_by_parts(value: Any) -> None:
    """A small value takes the one-walk way; forcing it through the remembered parts
    (a budget of nothing) gives the same row, and both learn the same secrets."""
    quick, by_parts = Redactor(), Redactor()
    for redactor in (quick, by_parts):
        redactor.learn(["pw-abcdef"])
    by_parts_small = redaction._REMEMBER_FROM
    try:
        expected = [by_parts.value(value) for _ in range(2)]
        redaction._REMEMBER_FROM = 0  # every part is remembered: the by-parts way
        forced = [Redactor.value(by_parts, value) for _ in range(2)]
    finally:
        redaction._REMEMBER_FROM = by_parts_small
    assert [quick.value(value), quick.value(value)] == expected
    assert json.loads(json.dumps(expected)) == json.loads(json.dumps(forced))  # as stored
    assert quick._known == by_parts._known
