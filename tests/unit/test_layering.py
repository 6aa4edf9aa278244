"""The packages depend downwards only: actions never import the workflow engine
(``tripleo_flow.flows``), the API or the interfaces; ``core`` imports none of those."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "tripleo_flow"

#: package -> packages of tripleo_flow it must not import
FORBIDDEN = {
    "actions": ("flows", "api", "cli", "http"),
    "core": ("actions", "flows", "api", "cli", "http"),
    # an error's hints name operations; the interfaces spell them (test_hint_words.py)
    "exceptions": ("actions", "flows", "api", "cli", "http", "openstack"),
}

#: The interfaces: nothing else imports them (they register what they word themselves).
INTERFACES = ("cli", "http", "openstack")


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_package_imports_nothing_above_it(package: str) -> None:
    modules = sorted((PACKAGE / package).rglob("*.py"))
    assert len(modules) > 5
    bad = {}
    for module in modules:
        above = sorted(name for name in _imports(module)
                       if any(name == f"tripleo_flow.{p}" or name.startswith(f"tripleo_flow.{p}.")
                              for p in FORBIDDEN[package]))
        if above:
            bad[str(module.relative_to(PACKAGE))] = above
    assert bad == {}


def test_nothing_below_the_interfaces_imports_them() -> None:
    below = sorted(m for m in PACKAGE.rglob("*.py")
                   if m.relative_to(PACKAGE).parts[0] not in INTERFACES)
    assert len(below) > 100
    bad = {str(m.relative_to(PACKAGE)): sorted(
        n for n in _imports(m) if any(n == f"tripleo_flow.{i}" or n.startswith(
            f"tripleo_flow.{i}.") for i in INTERFACES)) for m in below}
    assert {k: v for k, v in bad.items() if v} == {}


def test_the_check_sees_an_import_from_above(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from tripleo_flow import flows\nimport tripleo_flow.api.deploy\n")
    assert {"tripleo_flow.flows", "tripleo_flow.api.deploy"} <= _imports(module)


#: Reference implementations the tests run as oracles: never imported by the product.
ORACLES = ("tripleo_common", "mistral", "tests")


def test_the_product_imports_no_oracle() -> None:
    """tripleo-common (and the tests' oracles) run only in the tests' own virtualenvs."""
    modules = sorted(PACKAGE.rglob("*.py"))
    bad = {str(m.relative_to(PACKAGE)): sorted(
        n for n in _imports(m) if n.split(".")[0] in ORACLES) for m in modules}
    assert {k: v for k, v in bad.items() if v} == {}
    assert len(modules) > 100
