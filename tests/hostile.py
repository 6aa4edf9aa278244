"""Hypothesis strategies for hostile input: what a user of the API or CLI may send.

Values mix ordinary JSON with the inputs that broke tripleo-flow before (issue 10):
lone surrogates, NaN and infinities, 900-level nesting, names past 255
characters, path segments, YAML alias bombs, Jinja that reaches for Python
internals.  Archives are .tar.gz built in memory from such names and contents.
"""

from __future__ import annotations

import io
import json
import tarfile
from typing import Any

from hypothesis import strategies as st

#: A Jinja expression that runs a shell command outside the sandbox.
JINJA_ESCAPE = "{{ cycler.__init__.__globals__.os.popen('id').read() }}"
#: A 1 KB YAML document whose aliases expand to 10**9 strings.
BILLION_LAUGHS = "\n".join(
    ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]"
       for i in range(8)]) + "\n"
RECURSIVE_ANCHOR = "a: &a [*a]\n"


class Nested:
    """A list nested ``depth`` levels deep, once serialized by :func:`json_bytes` (short
    to print when hypothesis reports an example)."""

    def __init__(self, depth: int) -> None:
        self.depth = depth

    def __repr__(self) -> str:
        return f"Nested({self.depth})"

    def value(self) -> Any:
        value: Any = "x"
        for _ in range(self.depth):
            value = [value]
        return value


HOSTILE_STRINGS = ["\ud800", "a\udfffb", "", " ", "../x", "../../../../etc/passwd", "/etc/passwd",
                   "A B", "-rf", "x" * 256, "é" * 200, "\x00", "a\nb", "%2e%2e%2f",
                   JINJA_ESCAPE, BILLION_LAUGHS, RECURSIVE_ANCHOR, "{{ 'a' * 3000000000 }}",
                   "<script>", "NaN", "null", "0x10", "1e400"]

surrogates = st.text(st.characters(categories=["Cs"]), min_size=1, max_size=3)
strings = st.one_of(st.sampled_from(HOSTILE_STRINGS), st.text(max_size=20), surrogates)
#: Names of things (parameters, roles, environments): mostly plausible, some hostile.
names = st.one_of(st.from_regex(r"\A[A-Za-z][A-Za-z0-9_]{0,15}\Z"), strings)
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=2**64),
                    st.floats(allow_nan=True, allow_infinity=True), strings)
#: JSON values (scalars, lists, maps) of a few levels: what :data:`values` draws but the
#: deep nesting, drawn directly (a filter that refused the ``Nested`` ones made hypothesis
#: throw away most of the cases it drew, up to 3 for each one kept).
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(names, inner, max_size=3)), max_leaves=8)
values = st.one_of(json_values, st.sampled_from([Nested(900), Nested(50)]))


#: Values without the 900-level nesting: a workflow input nested that deep overflows the
#: C stack of the thread running it (yaql) and aborts the whole server process, so the
#: test run with it (branch http adds the depth limit; see the report of branch fuzz).
shallow_values = values.filter(lambda v: not (isinstance(v, Nested) and v.depth > 100))


def json_bytes(body: Any) -> bytes:
    """``body`` as JSON text, NaN and lone surrogates included (escaped, as a client may)."""
    return json.dumps(body, allow_nan=True, default=lambda n: n.value()).encode()


def _tar(members: list[tuple[str, bytes | None]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if data is None:  # a symlink out of the tree
                info.type = tarfile.SYMTYPE
                info.linkname = "/etc/passwd"
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


member_names = st.one_of(
    st.sampled_from(["overcloud.yaml", "plan-environment.yaml", "roles_data.yaml",
                     "network_data.yaml", "capabilities-map.yaml", "x.j2.yaml", "a/b.yaml",
                     "a", "../x.yaml", "/abs.yaml", ".tmp-x.yaml", "x" * 300 + ".yaml",
                     "a/" * 60 + "b.yaml"]),
    st.from_regex(r"\A[a-z]{1,8}(/[a-z]{1,8}){0,2}\.yaml\Z"))
member_data = st.one_of(
    st.sampled_from([b"heat_template_version: rocky\n", b"{}\n", b"- 1\n", b"\xff\xfe\x00",
                     BILLION_LAUGHS.encode(), RECURSIVE_ANCHOR.encode(),
                     f"x: {JINJA_ESCAPE}\n".encode(), b"a: [\n", None]),
    st.binary(max_size=64))
#: .tar.gz archives with hostile member names and contents.
tarballs = st.lists(st.tuples(member_names, member_data), max_size=5).map(_tar)
