"""Passphrase encryption of a backup archive: AES-256-GCM under a key derived from the
passphrase with scrypt (a fresh salt and nonce per archive).

Layout: ``MAGIC`` (8 bytes), the scrypt salt (16), the GCM nonce (12), then the
ciphertext with its 16-byte tag.  The header is authenticated with the data, so a
changed byte anywhere, or a wrong passphrase, fails to open.  Pure: bytes in, bytes out.
"""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

MAGIC = b"TFBKAE1\n"
_SALT, _NONCE = 16, 12
#: scrypt cost: about 32 MiB and a tenth of a second per derivation.
_N, _R, _P = 1 << 15, 8, 1


class SealError(ValueError):
    """The data is not sealed, or does not open with this passphrase."""


def _key(passphrase: str, salt: bytes) -> bytes:
    if not passphrase:
        raise SealError("the passphrase is empty")
    return Scrypt(salt=salt, length=32, n=_N, r=_R, p=_P).derive(passphrase.encode())


def is_sealed(data: bytes) -> bool:
    """Whether ``data`` starts as :func:`seal` output does."""
    return data.startswith(MAGIC)


def seal(data: bytes, passphrase: str) -> bytes:
    """``data`` encrypted and authenticated under ``passphrase``."""
    salt, nonce = os.urandom(_SALT), os.urandom(_NONCE)
    header = MAGIC + salt + nonce
    return header + AESGCM(_key(passphrase, salt)).encrypt(nonce, data, header)


def unseal(data: bytes, passphrase: str) -> bytes:
    """The data :func:`seal` encrypted.

    :raises SealError: not sealed, truncated, changed, or another passphrase.
    """
    size = len(MAGIC) + _SALT + _NONCE
    if not is_sealed(data) or len(data) < size + 16:
        raise SealError("it is not an encrypted tripleo-flow backup, or it is truncated")
    header = data[:size]
    salt, nonce = header[len(MAGIC):len(MAGIC) + _SALT], header[len(MAGIC) + _SALT:]
    try:
        return AESGCM(_key(passphrase, salt)).decrypt(nonce, data[size:], header)
    except InvalidTag:
        raise SealError("the passphrase is wrong, or the archive was changed or "
                        "truncated") from None


__all__ = ["MAGIC", "SealError", "is_sealed", "seal", "unseal"]
