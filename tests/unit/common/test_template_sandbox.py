"""Plan templates render in a sandbox: no Python internals, no huge values.

Each case is a template a hostile plan could ship; rendering must refuse it
with InvalidTemplate naming the file and the line, quickly and without
allocating what the template asks for.
"""

from __future__ import annotations

import pytest
import yaml

from tripleo_flow import exceptions
from tripleo_flow.core.plan import rendering

ROLES = b"- name: Controller\n  tags: [primary]\n- name: Compute\n"
LIMIT = 1000


def render(template: str, max_size: int = LIMIT, **extra: bytes) -> dict[str, bytes]:
    files = {"roles_data.yaml": ROLES, "t.j2.yaml": template.encode(), **extra}
    return rendering.render_plan(files, max_size=max_size)


def refused(template: str, **extra: bytes) -> exceptions.InvalidTemplate:
    with pytest.raises(exceptions.InvalidTemplate) as info:
        render(template, **extra)
    assert info.value.path == "t.j2.yaml"
    assert "refused by the template sandbox" in str(info.value)
    return info.value


ESCAPES = [
    "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ self._TemplateReference__context }}",
    "{{ lipsum.__globals__['os'] }}",
    "{{ joiner.__init__.__globals__ }}",
    "{{ namespace.__init__.__globals__ }}",
    "{{ raise.__globals__ }}",
    "{{ roles.__class__ }}",
    "{{ '{0.__class__}'.format(roles) }}",
    "{% set _ = roles.append({'name': 'Evil'}) %}",
    "{% set _ = roles[0].update({'name': 'Evil'}) %}",
    "{% set _ = roles[0].tags.pop() %}",
    "{% set _ = networks.clear() %}",
    # a function printed is its repr, with the server's memory address in it
    "{{ ''.format_map }}",
    "{{ lipsum }}",
    "{{ roles[0].get }}",
]


@pytest.mark.parametrize("payload", ESCAPES)
def test_sandbox_escapes_are_refused_with_the_line(payload: str) -> None:
    error = refused("a: 1\n\nb: " + payload + "\n")
    assert "at line 3" in str(error)


GROWTH = [
    ("{{ 'a' * 3000000000 }}", "'*'"),
    ("{{ 3000000000 * ['a'] }}", "'*'"),
    ("{{ 10 ** 3000000000 }}", "'**'"),
    ("{{ '%3000000000s' % 'a' }}", "'%'"),
    ("{{ '%*s' % (3000000000, 'a') }}", "'%'"),
    ("{{ '%3000000000s'|format('a') }}", "'format'"),
    ("{{ '{:3000000000}'.format('a') }}", "str.format"),
    ("{{ '{:{w}}'.format('a', w=3000000000) }}", "str.format"),
    ("{{ 'a'.center(3000000000) }}", "str.center"),
    ("{{ 'a'.zfill(3000000000) }}", "str.zfill"),
    ("{{ ('\t' * 100).expandtabs(3000000) }}", "str.expandtabs"),
    ("{{ ('a' * 100).replace('a', 'b' * 100) }}", "str.replace"),
    ("{{ ('a' * 500).join(['x'] * 100) }}", "str.join"),
    ("{{ 'a'|center(3000000000) }}", "'center'"),
    ("{{ ('a\\n' * 200)|indent(3000000000) }}", "'indent'"),
    ("{{ 'a'|replace('a', 'aaaaaaaaaa')|replace('a', 'aaaaaaaaaa')"
     "|replace('a', 'aaaaaaaaaa') }}", "'replace'"),
    ("{{ (['a'] * 100)|join('b' * 100) }}", "'join'"),
    ("{{ [1]|batch(3000000000, 'x')|list }}", "'batch'"),
    ("{{ [1]|slice(3000000000, 'x')|list }}", "'slice'"),
    ("{{ ('a ' * 300)|wordwrap(1, wrapstring='b' * 100) }}", "'wordwrap'"),
    ("{{ {'a': [[1]]}|tojson(indent=3000000000) }}", "'tojson'"),
    ("{% set ns = namespace(s='ab') %}{% for i in range(40) %}"
     "{% set ns.s = ns.s ~ ns.s %}{% endfor %}", "'~'"),
    ("{% set ns = namespace(s='ab') %}{% for i in range(40) %}"
     "{% set ns.s = ns.s + ns.s %}{% endfor %}", "'+'"),
    ("{% set l = [1] %}{% for i in range(40) %}{% set _ = l.extend(l) %}{% endfor %}",
     "extend()"),
    ("{% set l = [] %}{% for i in range(40) %}{% set _ = l.append('a' * 100) %}{% endfor %}"
     "{{ l }}", "append()"),
    ("{% set l = ['a' * 100] * 9 %}{% set m = [l] * 9 %}{{ m }}", "'*'"),
    ("{{ range(100)|map('string')|map('replace', '', 'b' * 100)|list }}", "'list'"),
    ("{{ 'x'.join(range(100)|map('string')|map('replace', '', 'b' * 100)) }}", "str.join"),
    ("{{ lipsum(3000000000) }}", "lipsum"),
    ("{% for i in range(100) %}{{ 'abcdefghijklmnopqrstuvwxyz' }}{% endfor %}",
     "the rendered output"),
    ("{% set x %}{% for i in range(100) %}{{ 'abcdefghijklmnopqrstuvwxyz' }}"
     "{% endfor %}{% endset %}", "the rendered output"),
]


@pytest.mark.parametrize(("payload", "what"), GROWTH)
def test_values_over_render_max_size_are_refused(payload: str, what: str) -> None:
    error = refused("a: 1\nb: " + payload + "\n")
    assert what in str(error)
    assert f"over the limit of {LIMIT} ([limits] render_max_size)" in str(error)
    if what != "the rendered output":  # the whole output has no one line
        assert "at line 2" in str(error)


def test_refusal_in_an_included_template_names_it() -> None:
    error = refused("a: 1\nb: {% include 'inc.j2' %}\n",
                    **{"inc.j2": b"\n\n{{ lipsum.__globals__ }}"})
    assert "line 3 of inc.j2 (included)" in str(error)


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        # what TripleO's own templates do: change lists and dicts they built
        ("{% set l = [] %}{% for r in roles %}{% set _ = l.append(r.name) %}{% endfor %}"
         "a: {{ l }}", {"a": ["Controller", "Compute"]}),
        ("{% set d = {} %}{% set _ = d.update({'k': roles[0].name}) %}a: {{ d.k }}",
         {"a": "Controller"}),
        ("{% set p = [roles[0]] %}{% set _ = p.pop() %}a: {{ p|length }}", {"a": 0}),
        # values up to the limit are fine
        ("a: {{ 'x' * 990 }}", {"a": "x" * 990}),
        ("a: '{{ '%5s' % 'x' }}{{ '{:>5}'.format('y') }}{{ 'z'|center(5) }}'",
         {"a": "    x    y  z  "}),
        ("a: {{ (roles|map(attribute='name'))|join(', ') }}", {"a": "Controller, Compute"}),
        ("a: {{ ', '.join(roles|map(attribute='name')) }}", {"a": "Controller, Compute"}),
        ("a: {{ roles|map(attribute='name')|first }}", {"a": "Controller"}),
        ("a: {{ (lipsum(1, html=False, min=5, max=6)|wordcount) in [5, 6] }}", {"a": True}),
    ],
)
def test_what_templates_may_still_do(template: str, expected: dict) -> None:
    assert yaml.safe_load(render(template + "\n")["t.yaml"]) == expected


def test_input_data_stays_read_only_even_when_aliased() -> None:
    refused("{% set mine = roles %}{% set _ = mine.append(1) %}a: 1\n")


@pytest.mark.parametrize("template", [
    "x: {% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}1\n",
    "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}"
    "x: '{{ f(40) }}'\n",
    "{% set l = range(100000)|list %}x: {% for i in l %}{{ l|sum }}{% endfor %}1\n",
])
def test_a_render_stops_at_its_time_limit(template: str) -> None:
    files = {"roles_data.yaml": ROLES, "t.j2.yaml": template.encode()}
    with pytest.raises(exceptions.InvalidTemplate) as info:
        rendering.render_plan(files, timeout=0.2)
    assert info.value.path == "t.j2.yaml"
    assert "over 0.2 s ([limits] render_timeout)" in str(info.value)
    assert "at line 1 of t.j2.yaml" in str(info.value)


def test_loops_within_the_time_limit_render_as_before() -> None:
    template = ("x: [{% for r in roles %}{{ loop.index }}/{{ loop.length }}"
                "{{ ',' if not loop.last }}{% endfor %}]\n")
    assert yaml.safe_load(render(template)["t.yaml"]) == {"x": ["1/2", "2/2"]}
