"""Secrets spelled out in Heat's errors, however a template cut them up (issue 29): every
spelling of a generated password below is masked, whatever the length of its pieces,
and ordinary messages (words, CamelCase names, ids, numbers) are left as they are,
also beside secrets made of words."""

from __future__ import annotations

import random
import re
import string
import uuid
from collections.abc import Callable

import pytest

from tripleo_flow.common import secret_masking
from tripleo_flow.core.plan.passwords import fernet_key, ssh_key_pair
from tripleo_flow.core.plan.spelled import Spelling
from tripleo_flow.core.plan.stack_request import request_secrets

MASK = secret_masking.MASK
_ALPHABET = string.ascii_letters + string.digits


def _passwords(count: int, seed: int, length: int = 25) -> list[str]:
    """Generated-like passwords (as :func:`passwords.random_password`), the same each run."""
    rng = random.Random(seed)
    return ["".join(rng.choice(_ALPHABET) for _ in range(length)) for _ in range(count)]


def _chunks(size: int, join: str = "", index: bool = True) -> Callable[[str], str]:
    def spell(password: str) -> str:
        return join.join(f"{i if index else ''}{password[i:i + size]}"
                         for i in range(0, len(password), size))
    return spell


#: How a template can cut a password up (what Heat then quotes in its error).
ATTACKS: dict[str, Callable[[str], str]] = {
    "as it is": lambda p: p,
    "spaced out": " ".join,
    "reversed, comma-separated": lambda p: ",".join(reversed(p)),
    "a digit after each character": "0".join,
    "a letter after each character, reversed": lambda p: "Q".join(reversed(p)),
    "three letters after each character": lambda p: "".join(c + "abc" for c in p),
    "seven characters after each character": lambda p: "".join(c + "x1y2z3w" for c in p),
    "each character alone, fillers between": lambda p: ", ".join(
        f"{c}, z{i}" for i, c in enumerate(p)),
    "chunks of 4 after their index": _chunks(4),
    "chunks of 5 after their index, separated": _chunks(5, "-"),
    "chunks of 4 after their index, reversed": lambda p: _chunks(4)(p[::-1]),
    "chunks of 6 between words": lambda p: " and ".join(
        p[i:i + 6] for i in range(0, len(p), 6)),
    "in a list": lambda p: str(list(p)),
}


def _left(password: str, masked: str) -> int:
    """The longest run of the password's characters, in order, left in ``masked``
    (anything between them allowed)."""
    plain = re.sub(r"[^0-9a-z]", "", masked.replace(MASK, "|").lower())
    target, best = password.lower(), 0
    for start in range(len(target)):
        at, got = 0, 0
        for char in target[start:]:
            found = plain.find(char, at)
            if found < 0 or (got and found - at > 8):
                break
            at, got = found + 1, got + 1
        best = max(best, got)
    return best


@pytest.mark.parametrize("attack", ATTACKS)
def test_every_spelling_of_a_password_is_masked(attack: str) -> None:
    """Among 62 passwords (a plan's), each of 40 spelled out in a Heat error is masked,
    and what is left holds no run of its characters in order longer than a piece."""
    plan = _passwords(62, seed=29)
    spelling = Spelling.of(plan)
    missed = []
    for password in plan[:40]:
        quoted = ATTACKS[attack](password)
        message = (f"Property error: resources.Leak.properties.length: Value '{quoted}' "
                   "is not an integer")
        masked = spelling.mask(message)
        if MASK not in masked or _left(password, masked) > 7:
            missed.append((password, masked))
        assert masked.startswith("Property error: resources.Leak")
        assert masked.endswith("is not an integer")
    # Pieces spread out count when two of them look random (a letter and a digit, or
    # letters in mixed case): a password of 25 random characters is nearly always such.
    assert len(missed) <= 1, missed


def test_pieces_spread_over_several_reasons_count_together() -> None:
    password = _passwords(1, seed=3)[0]
    spelling = Spelling.of([password])
    reasons = [f"Resource Leak{i} failed: {i}:{password[i:i + 5]}"
               for i in range(0, len(password), 5)]
    masked = spelling.mask_all(reasons)
    assert len(masked) == len(reasons)
    assert all(text.startswith("Resource Leak") for text in masked)
    assert _left(password, "\n".join(masked)) <= 7
    for reason in reasons:  # alone, each piece is too short to tell
        assert spelling.mask(reason) == reason


def _ordinary() -> list[str]:
    rng = random.Random(7)
    texts = [
        "Resource CREATE failed: StackValidationFailed: resources.Controller: Property "
        "error: Controller.Properties.flavor: Error validating value 'baremetal'",
        "The Parameter (AdminPassword) was not provided. KeystoneSecret, SuperSecret",
        "Stack overcloud CREATE_FAILED: Resource CREATE failed: Error: resources[0]: "
        "Deployment to server failed: deploy_status_code : Deployment exited with "
        "non-zero status code: 2",
        "image 192.168.24.1:8787/tripleomaster/openstack-nova-compute:current-tripleo "
        "port 13000 year 2026 version 18.0.0",
        "MySQL root PASSWORD for mysql+pymysql://root:PASSWORD@127.0.0.1:3306/heat",
        "The SSH user and private key file config-download's inventory names; "
        "-----BEGIN OPENSSH PRIVATE KEY----- is not a valid key",
        "a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3 4 5 6 7 8 9",
        "Secret parameters: password, passphrase, token, SecretKey, ApiKey, CamelCaseName",
    ]
    for _ in range(300):
        texts.append(f"Resource {rng.choice(['CREATE', 'UPDATE'])} failed: stack "
                     f"{uuid.UUID(int=rng.getrandbits(128))} resource "
                     f"{uuid.UUID(int=rng.getrandbits(128)).hex} sha256:"
                     f"{rng.getrandbits(256):064x}")
    return texts


def test_ordinary_messages_stay_as_they_are() -> None:
    """A plan's secrets (62 passwords, a 4096-character key, Fernet keys, an SSH key)
    and secrets made of words (a user's) mask none of these messages."""
    plan = [*_passwords(62, seed=11), *_passwords(1, seed=12, length=4096),
            fernet_key(), fernet_key(), ssh_key_pair()["private_key"],
            "SuperSecretPassword123", "Known-Param-Secret-77aa31", "MySecretKey-2026"]
    spelling = Spelling.of(plan)
    for text in _ordinary():
        assert spelling.mask(text) == text


def test_nothing_to_look_for() -> None:
    assert not Spelling.of([])
    assert not Spelling.of(["short"])  # under MIN_LENGTH: not looked for
    assert Spelling.of([]).mask_all(["a", "b"]) == ["a", "b"]


def test_the_secrets_a_stack_request_sends() -> None:
    base = "http://heat.example/plan/"
    request = {
        "files": {base + "user.yaml": "parameter_defaults:\n  AdminPassword: pw-admin-1\n"
                                      "  NtpServer: pool.ntp.org\n",
                  base + "env.yaml": "parameter_defaults:\n  db_password: pw-db-2\n",
                  base + "broken.yaml": "[not: yaml",
                  base + "unused.yaml": "parameter_defaults:\n  AdminPassword: unused-3\n"},
        "environment_files": [base + "user.yaml", base + "env.yaml", base + "broken.yaml"],
        "environment": {"parameter_defaults": {"HorizonSecret": "pw-horizon-4"}},
        "parameters": {"RabbitPassword": "pw-rabbit-5", "ControllerCount": 1},
    }
    assert request_secrets(request) == {"pw-admin-1", "pw-db-2", "pw-horizon-4",
                                        "pw-rabbit-5"}
