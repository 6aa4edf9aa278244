"""The one rule that keeps secrets out of records: which names hold a secret, and a
copy of a value with every secret masked.

A name holds a secret when it ends in a word that means one: a parameter name
(capitalised) ending in ``Password``, ``Secret``, ``Key``, ``Passphrase``,
``Token``, ``Cookie``, ``FSID``... (digits after it allowed: ``KeystoneFernetKey0``),
or a lower-case name (a workflow's own data, a hiera key) ending in a word that
means a secret anywhere (``password``, ``secret``, ``passphrase``, ``token``,
``private_key``, ``api_key``...): ``key1: value2`` in a workflow's context is
ordinary data, as it is in Mistral.  The values of a Heat parameter schema entry
marked ``hidden`` (``NoEcho``) are secret too.  (TripleO's password names all end
so: ``tests/unit/test_secrets.py`` checks it.)

:func:`redact` is what the executions database stores and what the API
returns: a copy where every value under a secret name, every string holding a
known secret value, and every value of a result declared secret reads
:data:`MASK`.  It also tells which secret values it saw, so the caller can
mask them wherever else they appear (a published copy, a rendered config).
Pure functions, no I/O.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

#: What a secret reads as in a persisted record or an API response.
MASK = "<secret>"
#: What stands for a value nested deeper than :data:`MAX_DEPTH` (refused at every
#: interface, so only an older record can hold one): too deep to look into, so it
#: is not kept.
TOO_DEEP = "<nested too deep>"
#: The deepest nesting redaction looks into (Python's recursion limit is 1000).
MAX_DEPTH = 200
#: Secret values shorter than this are not looked for inside other strings
#: (they still are masked under a secret name): "1" would mask everything.
MIN_LENGTH = 6
#: A string holding this many letters and digits of a secret in a row, once everything
#: else is taken out of both and case is ignored, holds the secret: also its characters
#: split apart ("a b c", "['a', 'b', 'c']"), reversed, or in base64, as a
#: template can make Heat quote a value derived from a password in its error.
RUN = 10
#: The pieces of a secret looked up (every :data:`_STEP`-th piece of a string is: a run
#: of :data:`RUN` characters holds one at a checked offset; a third of the work).
WINDOW = 8
_STEP = RUN - WINDOW + 1
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_SUFFIX = re.compile(
    r"(password|passwd|secret|key|kek|passphrase|token|cookie|authkey|credential|"
    r"fsid|hashsuffix|private_key)s?\d*$", re.IGNORECASE)
#: What a lower-case name (a workflow's own data: ``key1``, ``cache_key``) must end
#: with to be secret: words that mean a secret whatever the context.  ``key``,
#: ``cookie``... make a secret only in a parameter's name (``KeystoneFernetKey0``).
_PLAIN_SUFFIX = re.compile(
    r"(password|passwd|secret|passphrase|token|private_key|api_?key|access_?key|secret_?key)"
    r"s?\d*$", re.IGNORECASE)
#: Names ending like a secret that are not (identifiers of keys, not key material).
_NOT_SECRET = re.compile(r"(^key$|keyname|key_name|keytype|key_type|keyid|key_id|publickey|"
                         r"public_key)", re.IGNORECASE)
#: A Heat parameter schema entry with one of these true is hidden: its values are secret.
_HIDDEN = ("hidden", "NoEcho")
_VALUES = ("default", "value", "Default")


def is_secret_name(name: Any) -> bool:
    """Whether a parameter (or mapping key) of this name holds a secret."""
    if not isinstance(name, str):
        return False
    return _secret_name(name)


#: The last word of every name :data:`_SUFFIX` or :data:`_PLAIN_SUFFIX` can find (a
#: name ending in none of them is not secret: no regular expression needed).
_ENDINGS = ("password", "passwd", "secret", "key", "kek", "passphrase", "token", "cookie",
            "credential", "fsid", "hashsuffix")


@functools.lru_cache(maxsize=8192)
def _secret_name(name: str) -> bool:
    """:func:`is_secret_name` of a string (a record repeats the same keys: remembered)."""
    tail = name.rsplit("::", 1)[-1].rsplit(".", 1)[-1]
    word = tail.rstrip("0123456789").lower()
    if not word.endswith(_ENDINGS) and not (word.endswith("s")
                                            and word[:-1].endswith(_ENDINGS)):
        return False  # most names: P123, ComputeCount (a plan may hold 100,000 of them)
    suffix = _SUFFIX if tail[:1].isupper() else _PLAIN_SUFFIX
    return bool(suffix.search(tail)) and not _NOT_SECRET.search(tail)


def leaves(value: Any, depth: int = 0) -> Iterable[str]:
    """Every string (and number, as text) inside ``value`` (to :data:`MAX_DEPTH`)."""
    if depth > MAX_DEPTH:
        return
    if isinstance(value, Mapping):
        for item in value.values():
            yield from leaves(item, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from leaves(item, depth + 1)
    elif isinstance(value, str):
        yield value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield str(value)


def redact(value: Any, known: Iterable[str] = (), *, everything: bool = False,
           min_length: int = MIN_LENGTH) -> tuple[Any, set[str]]:
    """A copy of ``value`` without secrets, and the secret values it held.

    Masked: values under a secret name (and all of ``value`` with
    ``everything``: a result declared secret), and strings that hold one of
    the ``known`` secrets or of the secrets found in ``value`` itself (at
    least ``min_length`` characters), as it is or derived (:class:`Needles`).
    Keys are kept.
    """
    return redact_sorted(value, needles(known, min_length), everything=everything,
                         min_length=min_length)


def _plain(text: str) -> str:
    """``text``'s letters and digits, in lower case."""
    return _NOT_ALNUM.sub("", text.lower())


def _forms(secret: str) -> list[str]:
    """The plain forms of a secret a derived copy can take: as it is, reversed, in
    base64 (at each alignment inside a longer encoded text).  Not hex: its pieces
    would be found in the digests and ids records are full of."""
    raw = secret.encode()
    forms = [secret, secret[::-1]]
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + raw).decode()
        forms.append(encoded[(pad + 2) // 3 * 4:])
    return [_plain(form) for form in forms]


def _mixed(piece: str) -> bool:
    """Whether ``piece`` holds a letter and a digit: a piece of a random secret, not of
    a word ("password" in a user's "my-password-1" would mask every record naming
    a password parameter)."""
    return not piece.isdigit() and not piece.isalpha()


@dataclasses.dataclass(frozen=True)
class Needles:
    """The secrets looked for inside strings, built once for many strings.

    A string holds a secret when it contains it, or when its :func:`_plain` form
    (letters and digits, lower case) contains :data:`RUN` characters in a row of
    a plain form of the secret (:func:`_forms`), or the whole plain form of a
    secret shorter than that.  Only pieces holding both letters and digits count
    (:func:`_mixed`), so a secret made of words does not mask every text holding
    one of them.  A template cannot make Heat quote a generated password spaced
    out, reversed or encoded without the copy being masked.
    """

    secrets: frozenset[str] = frozenset()
    literal: tuple[str, ...] = ()
    windows: frozenset[str] = frozenset()
    whole: tuple[str, ...] = ()

    @classmethod
    def of(cls, values: Iterable[str]) -> Needles:
        """The needles of these secret values (all of them: filter the short ones first)."""
        found = frozenset(values)
        windows: set[str] = set()
        whole: set[str] = set()
        for secret in found:
            for form in _forms(secret):
                if len(form) >= RUN:
                    windows.update(piece for piece in (form[i:i + WINDOW] for i in
                                                       range(len(form) - WINDOW + 1))
                                   if _mixed(piece))
                elif len(form) >= MIN_LENGTH and _mixed(form):
                    whole.add(form)
        return cls(found, tuple(sorted(found, key=len, reverse=True)), frozenset(windows),
                   tuple(sorted(whole)))

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def extended(self, values: Iterable[str]) -> Needles:
        """These needles and those of ``values``."""
        new = frozenset(values) - self.secrets
        return self if not new else Needles.of(self.secrets | new)

    def found_in(self, text: str) -> bool:
        """Whether ``text`` holds one of the secrets, as it is or derived."""
        for needle in self.literal:
            if needle in text:
                return True
        if len(text) < MIN_LENGTH:
            return False
        plain = _plain(text)
        if any(needle in plain for needle in self.whole):
            return True
        last = len(plain) - WINDOW + 1
        return not self.windows.isdisjoint(
            map(plain.__getitem__, map(slice, range(0, last, _STEP),
                                       range(WINDOW, last + WINDOW, _STEP))))


def needles(known: Iterable[str], min_length: int = MIN_LENGTH) -> Needles:
    """The secret values :func:`redact` looks for inside strings."""
    return Needles.of(s for s in known if isinstance(s, str) and len(s) >= min_length)


def redact_sorted(value: Any, known_needles: Needles | Iterable[str], *,
                  everything: bool = False, min_length: int = MIN_LENGTH,
                  mask: Any = MASK) -> tuple[Any, set[str]]:
    """:func:`redact` with the known secrets given as :func:`needles` (a caller that
    redacts many values against the same secrets builds them once); ``mask`` is what
    stands where a secret was."""
    if not isinstance(known_needles, Needles):
        known_needles = needles(known_needles, min_length)
    found: set[str] = set()
    _collect(value, everything, found)
    looked_for = known_needles.extended(s for s in found if len(s) >= min_length)
    return _mask(value, everything, looked_for, mask=mask), found


def entry_is_secret(mapping: Mapping[Any, Any], key: Any) -> bool:
    """Whether the value under ``key`` of ``mapping`` is secret as a whole (a secret
    name, or the value of a hidden parameter's schema entry)."""
    return is_secret_name(key) or _hidden(mapping, key)


def collect_secrets(value: Any, secret: bool = False, depth: int = 0) -> set[str]:
    """The secret values inside ``value`` (all of its leaves when ``secret``), as
    :func:`redact_sorted` finds them; ``depth``: how deep ``value`` lies in the value
    being redacted (:data:`MAX_DEPTH` counts from there)."""
    found: set[str] = set()
    _collect(value, secret, found, depth)
    return found


def mask_part(value: Any, secret: bool, known_needles: Needles, depth: int = 0) -> Any:
    """``value`` masked as :func:`redact_sorted` masks it at ``depth`` of the value being
    redacted, ``known_needles`` holding every secret that value holds
    (:func:`collect_secrets` of each of its parts, learned first)."""
    return _mask(value, secret, known_needles, depth)


#: Types of the values that are neither a mapping nor a list (checked first: cheaper).
_SCALARS = frozenset({str, int, float, bool, type(None)})


class TooLarge(Exception):
    """:func:`mask_small` met more text than it was allowed to walk."""


def mask_small(value: Any, known_needles: Needles, budget: int) -> tuple[Any, set[str]]:
    """:func:`mask_part` and :func:`collect_secrets` of ``value`` (as a whole, not
    secret) in one walk: ``value`` masked with ``known_needles`` and the secret values
    it holds.  Masked with only those needles, the result is what :func:`redact_sorted`
    gives when every secret found is among the secrets ``known_needles`` were built
    from; otherwise mask ``value`` again once they are known.

    :raises TooLarge: once the walk has met ``budget`` characters of keys and text (a
        value counting one each) in all: a large value, to mask by parts
    """
    found: set[str] = set()
    left = [budget]
    return _mask_small(value, False, known_needles, found, left, 0), found


def _mask_small(value: Any, secret: bool, needles: Needles, found: set[str], left: list[int],
                depth: int) -> Any:
    """:func:`_mask` and :func:`_collect` together (see :func:`mask_small`)."""
    kind = type(value)
    if kind not in _SCALARS and (kind is dict or isinstance(value, Mapping)):
        if depth > MAX_DEPTH:
            return TOO_DEEP
        out = {}
        for key, item in value.items():
            if isinstance(key, str):
                left[0] -= len(key)
            out[key] = _mask_small(item, secret or is_secret_name(key) or _hidden(value, key),
                                   needles, found, left, depth + 1)
        return out
    if kind not in _SCALARS and isinstance(value, (list, tuple)):
        if depth > MAX_DEPTH:
            return TOO_DEEP
        return [_mask_small(item, secret, needles, found, left, depth + 1) for item in value]
    left[0] -= len(value) + 1 if kind is str else 1
    if left[0] < 0:
        raise TooLarge
    if secret and depth <= MAX_DEPTH:
        found.update(v for v in leaves(value) if v)
    if secret and value is not None and not isinstance(value, bool):
        return MASK
    if isinstance(value, str) and needles and needles.found_in(value):
        return MASK
    return value


def _hidden(value: Mapping[Any, Any], key: Any) -> bool:
    """Whether ``key`` of ``value`` is the value of a hidden (``NoEcho``) parameter."""
    return key in _VALUES and any(str(value.get(h, "")).lower() == "true" for h in _HIDDEN)


def _collect(value: Any, secret: bool, found: set[str], depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            _collect(item, secret or is_secret_name(key) or _hidden(value, key), found,
                     depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, secret, found, depth + 1)
    elif secret:
        found.update(v for v in leaves(value) if v)


def _mask(value: Any, secret: bool, needles: Needles, depth: int = 0, mask: Any = MASK) -> Any:
    if depth > MAX_DEPTH and isinstance(value, (Mapping, list, tuple)):
        return TOO_DEEP if mask is MASK else mask
    if isinstance(value, Mapping):
        return {key: _mask(item, secret or is_secret_name(key) or _hidden(value, key), needles,
                           depth + 1, mask)
                for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_mask(item, secret, needles, depth + 1, mask) for item in value]
    if secret and value is not None and not isinstance(value, bool):
        return mask
    if isinstance(value, str) and needles and needles.found_in(value):
        return mask
    return value


def is_masked(value: Any) -> bool:
    """Whether ``value`` holds a :data:`MASK` (a secret a record did not keep)."""
    return any(leaf == MASK for leaf in leaves(value))
