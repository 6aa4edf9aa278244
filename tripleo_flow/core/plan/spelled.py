"""Secrets spelled out in a text a template controls: Heat's errors (issue 29).

A template can make Heat quote a value it computed from a password where Heat
wants a number (``Value '...' is not an integer``), and compute it so that no run
of the password's characters is long enough for :class:`~.secrets.Needles` (which
every record goes through): one character at a time with the same filler after
each, or chunks with an index between them.  The texts Heat writes (its refusals,
the reasons of a stack, of its failed resources and events) are therefore looked
at harder, at the edge where they arrive, with the secrets Heat was sent: Heat
can spell nothing else.

:class:`Spelling` looks in the letters and digits of a text (case ignored) for a
secret, as it is or reversed:

- :data:`RUN` characters in a row, at every offset;
- :data:`RUN` characters at a constant step of up to :data:`MAX_STEP`: each character
  followed by the same filler (``a0b0c0``, ``a-xy-b-xy-c``);
- :data:`RUN` characters that each stand alone between separators, whatever stands
  between them (``a, x12, b, x3, c``);
- pieces of :data:`PIECE` characters or more in the secret's order, anywhere in the
  texts looked at together, covering half of the secret and :data:`COVER`
  characters at least (``0:ab3d 4:c9f8 8:...``).

What spells a secret (from its first character to its last) reads
:data:`~.secrets.MASK`; the rest of the message stays.  Only what looks random in
the secret as written is looked for (:func:`_strong`: a run whose neighbouring
characters change kind, digit, lower or upper case, half of the time; two such
pieces among spread ones), so words, CamelCase names and numbers of ordinary
messages stay, even when a secret is made of words ("Password123"); a generated
password is random through and through.  Not caught: a secret turned into other
characters (their codes, shifted letters, a digest), chunks shorter than
:data:`PIECE` with fillers of varying length, pieces in another order, a secret
with no random-looking run; such a template still leaks through its errors.
Pure functions, no I/O.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Sequence

from tripleo_flow.common.secret_masking import MASK, MIN_LENGTH

#: Characters of a secret in a row (or at a constant step) that spell it.
RUN = 8
#: The largest step between the characters of a spelled secret looked for.
MAX_STEP = 8
#: The shortest piece counted when pieces are spread out.
PIECE = 4
#: Spread pieces spell a secret when they cover this many of its characters, and half.
COVER = 12
#: Pieces of only digits count from this length (numbers: ports, years).
_PLAIN_PIECE = 6
#: Spread pieces spell a secret when this many of them look random (:func:`_strong`:
#: the words of a secret made of words are in ordinary messages: "Secret").
_STRONG_PIECES = 2
_ALNUM = re.compile(r"[0-9A-Za-z]+")

Span = tuple[int, int]


def _mixed(piece: str) -> bool:
    return not piece.isdigit() and not piece.isalpha()


def _kind(char: str) -> int:
    return 0 if char.isdigit() else 1 if char.islower() else 2


def _strong(piece: str) -> bool:
    """Whether ``piece`` of a secret (its letters and digits, as written) looks random:
    half of its neighbouring characters change kind (digit, lower, upper case) or
    more, which words, words in CamelCase and words with a number (``Password123``)
    do not."""
    changes = sum(_kind(a) != _kind(b) for a, b in zip(piece, piece[1:], strict=False))
    return changes * 2 >= len(piece) - 1


def _plain(text: str) -> tuple[str, list[int]]:
    """``text``'s ASCII letters and digits in lower case, and where each stands in it."""
    chars: list[str] = []
    where: list[int] = []
    for match in _ALNUM.finditer(text):
        chars.append(match.group().lower())
        where.extend(range(match.start(), match.end()))
    return "".join(chars), where


@dataclasses.dataclass(frozen=True)
class Spelling:
    """The secrets looked for in hostile texts, built once for many texts."""

    forms: tuple[str, ...] = ()
    #: each form's letters and digits as written (case kept)
    written: tuple[str, ...] = ()
    #: a run of :data:`RUN` characters of a form -> (form, offset) where it stands
    runs: dict[str, tuple[tuple[int, int], ...]] = dataclasses.field(default_factory=dict)
    #: a piece of :data:`PIECE` characters of a form -> (form, offset) where it stands
    pieces: dict[str, tuple[tuple[int, int], ...]] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, values: Iterable[str]) -> Spelling:
        """The spelling of these secret values (those under
        :data:`~.secrets.MIN_LENGTH` characters are left out: too short to look for)."""
        written: list[str] = []
        for value in sorted({v for v in values if isinstance(v, str)}):
            alnum = "".join(_ALNUM.findall(value))
            if len(alnum) >= MIN_LENGTH:
                written += [alnum, alnum[::-1]]
        forms = [form.lower() for form in written]
        runs: dict[str, list[tuple[int, int]]] = {}
        pieces: dict[str, list[tuple[int, int]]] = {}
        for index, form in enumerate(forms):
            for offset in range(len(form) - PIECE + 1):
                pieces.setdefault(form[offset:offset + PIECE], []).append((index, offset))
                run = form[offset:offset + RUN]
                if len(run) == RUN and _strong(written[index][offset:offset + RUN]):
                    runs.setdefault(run, []).append((index, offset))
        return cls(tuple(forms), tuple(written),
                   *({k: tuple(v) for k, v in found.items()}
                     for found in (runs, pieces)))

    def __bool__(self) -> bool:
        return bool(self.forms)

    def mask(self, text: str) -> str:
        """``text`` with what spells a secret replaced by :data:`~.secrets.MASK`."""
        return self.mask_all([text])[0]

    def mask_all(self, texts: Sequence[str]) -> list[str]:
        """``texts`` masked as :meth:`mask` does, looked at together (pieces spread
        over several of them count together), each in its place."""
        texts = [str(text) for text in texts]
        if not self.forms or not texts:
            return texts
        joined = "\n".join(texts)
        spans = _merged(self.spans(joined))
        if not spans:
            return texts
        out, start = [], 0
        for text in texts:
            end = start + len(text)
            out.append(_replace(text, [(max(a, start) - start, min(b, end) - start)
                                       for a, b in spans if a < end and b > start]))
            start = end + 1
        return out

    def spans(self, text: str) -> list[Span]:
        """Where ``text`` spells a secret: (start, end) of each place, maybe overlapping."""
        plain, where = _plain(text)
        if len(plain) < MIN_LENGTH:
            return []
        found: list[Span] = []
        for step in range(1, MAX_STEP + 1):
            for first in range(min(step, len(plain))):
                for a, b in self._runs(plain[first::step]):
                    found.append((where[first + a * step], where[first + (b - 1) * step] + 1))
        singles = [m for m in _ALNUM.finditer(text) if m.end() - m.start() == 1]
        lone = "".join(m.group().lower() for m in singles)
        for a, b in self._runs(lone):
            found.append((singles[a].start(), singles[b - 1].end()))
        pieces = [(where[a], where[b - 1] + 1) for a, b in sorted(self._spread(plain))]
        for (_, b), (c, _) in zip(pieces, pieces[1:], strict=False):
            # what stands between two pieces of one spelling in one text, a short
            # filler, goes with them (a fragment shorter than a piece may be in it)
            if c - b <= _NEAR and "\n" not in text[b:c]:
                found.append((b, c))
        return found + pieces

    def _runs(self, seq: str) -> list[Span]:
        """Runs of :data:`RUN` characters or more of a form in ``seq``, whole."""
        found: list[Span] = []
        covered = 0
        for at in range(len(seq) - RUN + 1):
            if at < covered:
                continue
            for index, offset in self.runs.get(seq[at:at + RUN], ()):
                form = self.forms[index]
                a, o = at, offset
                while a > 0 and o > 0 and seq[a - 1] == form[o - 1]:
                    a, o = a - 1, o - 1
                b, o = at, offset
                while b < len(seq) and o < len(form) and seq[b] == form[o]:
                    b, o = b + 1, o + 1
                found.append((a, b))
                covered = max(covered, b - RUN + 1)
        return found

    def _spread(self, plain: str) -> list[Span]:
        """Pieces of a form in its order covering :data:`COVER` characters and half of it
        (two of them random-looking), with the uncounted ones next to them: each piece."""
        pieces: dict[int, list[list[int]]] = {}
        open_: dict[tuple[int, int], list[int]] = {}
        for at in range(len(plain) - PIECE + 1):
            for index, offset in self.pieces.get(plain[at:at + PIECE], ()):
                key = (index, at - offset)
                piece = open_.get(key)
                if piece is not None and piece[0] + piece[2] - PIECE == at - 1:
                    piece[2] += 1
                else:
                    piece = [at, offset, PIECE]
                    pieces.setdefault(index, []).append(piece)
                    open_[key] = piece
        found: list[Span] = []
        for index, listed in pieces.items():
            need = max(COVER, math.ceil(len(self.forms[index]) / 2))
            counted = [p for p in listed if p[2] >= _PLAIN_PIECE
                       or not plain[p[0]:p[0] + p[2]].isdigit()]
            if sum(p[2] for p in counted) < need:
                continue
            chain, covers = _best_chain(counted)
            written = self.written[index]
            if covers >= need and sum(_strong(piece) or _mixed(piece) for piece in (
                    written[p[1]:p[1] + p[2]] for p in chain)) >= _STRONG_PIECES:
                found += [(at, at + length) for at, _, length in _widened(chain, listed)]
        return found


#: Characters between a spelling and an uncounted piece of the same secret just
#: before or after it (in both orders) that is masked with it; between two pieces of
#: a spelling in one text, masked with them.
_NEAR = 32


def _widened(chain: list[list[int]], pieces: list[list[int]]) -> list[list[int]]:
    """``chain`` with the pieces of its secret next to it that did not count (only
    digits) on either side."""
    chain = list(chain)
    grown = True
    while grown:
        grown = False
        first, last = chain[0], chain[-1]
        for piece in pieces:
            at, offset, length = piece
            if at + length <= first[0] and offset < first[1] \
                    and first[0] - (at + length) <= _NEAR:
                chain.insert(0, piece)
                grown = True
                break
            if at >= last[0] + last[2] and offset + length > last[1] + last[2] \
                    and at - (last[0] + last[2]) <= _NEAR:
                chain.append(piece)
                grown = True
                break
    return chain


def _best_chain(pieces: list[list[int]]) -> tuple[list[list[int]], int]:
    """The pieces (text position, form offset, length) that follow each other in the
    text and go forward in the form (they may overlap there: a filler can repeat the
    character a piece starts with) covering the most characters, and how many."""
    pieces = sorted(pieces)
    best: list[int] = []
    before: list[int] = []
    for k, (at, offset, length) in enumerate(pieces):
        best.append(length)
        before.append(-1)
        for m in range(k):
            p_at, p_offset, p_length = pieces[m]
            if p_at + p_length <= at and p_offset < offset \
                    and p_offset + p_length <= offset + length:
                covers = best[m] + length - max(0, p_offset + p_length - offset)
                if covers > best[k]:
                    best[k], before[k] = covers, m
    k = max(range(len(pieces)), key=best.__getitem__)
    covers = best[k]
    chain = []
    while k >= 0:
        chain.append(pieces[k])
        k = before[k]
    return chain[::-1], covers


def _merged(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _replace(text: str, spans: list[Span]) -> str:
    """``text`` with each of the (sorted, disjoint) ``spans`` replaced by MASK."""
    parts, last = [], 0
    for a, b in spans:
        if b > a:
            parts += [text[last:a], MASK]
            last = b
    return "".join(parts) + text[last:]
