"""Backup sealing (pure): what opens and what is refused."""

from __future__ import annotations

import pytest

from tripleo_flow.common import sealing

DATA = b"\x1f\x8b a backup archive " * 50
SEALED = sealing.seal(DATA, "pass phrase")
HEADER = len(sealing.MAGIC) + 16 + 12


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]


def test_opens_with_its_passphrase_and_is_not_the_plain_text() -> None:
    assert sealing.is_sealed(SEALED) and DATA[:20] not in SEALED
    assert sealing.unseal(SEALED, "pass phrase") == DATA
    # a fresh salt and nonce each time
    assert sealing.seal(DATA, "pass phrase") != SEALED


@pytest.mark.parametrize(("data", "passphrase", "said"), [
    (SEALED, "pass phrasE", "passphrase is wrong"),
    (_flip(SEALED, len(sealing.MAGIC) + 3), "pass phrase", "changed"),  # the salt
    (_flip(SEALED, HEADER - 1), "pass phrase", "changed"),  # the nonce
    (_flip(SEALED, HEADER + 5), "pass phrase", "changed"),  # the ciphertext
    (_flip(SEALED, len(SEALED) - 1), "pass phrase", "changed"),  # the tag
    (SEALED[:-1], "pass phrase", "truncated"),
    (SEALED[:HEADER + 15], "pass phrase", "truncated"),
    (DATA, "pass phrase", "not an encrypted"),
    (SEALED, "", "empty"),
], ids=["wrong-passphrase", "salt-changed", "nonce-changed", "ciphertext-changed",
        "tag-changed", "one-byte-short", "header-only", "plain-data", "empty-passphrase"])
def test_refused(data: bytes, passphrase: str, said: str) -> None:
    with pytest.raises(sealing.SealError, match=said):
        sealing.unseal(data, passphrase)
