"""The packages depend downwards only: actions never import the workflow engine
(``tripleo_flow.engine``) but its action contract, which they implement, nor the API or
the interfaces; ``core`` imports none of those; the workflow engine imports nothing of
TripleO (its remaining debt listed, shrinking)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "tripleo_flow"

#: package -> packages of tripleo_flow it must not import
FORBIDDEN = {
    "actions": ("flows", "engine", "client", "cli", "http"),
    "core": ("actions", "flows", "engine", "client", "cli", "http"),
    "common": ("core", "plans", "actions", "flows", "engine", "client", "cli", "http",
               "openstack", "heat", "ironic", "workspace", "validations"),
    # an error's hints name operations; the interfaces spell them (test_hint_words.py)
    "exceptions": ("actions", "flows", "engine", "client", "cli", "http", "openstack"),
}

#: The interfaces: nothing else imports them (they register what they word themselves).
INTERFACES = ("cli", "http", "openstack")


#: The engine's action contract, which actions implement: the one part of the engine
#: below them (``Action``, ``Rerun``, ``reverter``).
CONTRACT = "tripleo_flow.engine.lang.action"


def _imports(path: Path) -> frozenset[str]:
    """The modules ``path`` imports (each text parsed once: the tests here read every
    module of the package, several times)."""
    return _imports_of(path.read_text(), str(path))


@functools.cache
def _imports_of(text: str, name: str) -> frozenset[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(text, name)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return frozenset(found)


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_package_imports_nothing_above_it(package: str) -> None:
    modules = sorted((PACKAGE / package).rglob("*.py"))
    assert len(modules) >= 3
    bad = {}
    for module in modules:
        above = sorted(name for name in _imports(module)
                       if any(name == f"tripleo_flow.{p}" or name.startswith(f"tripleo_flow.{p}.")
                              for p in FORBIDDEN[package])
                       and name != CONTRACT and not name.startswith(f"{CONTRACT}."))
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


#: The TripleO packages: the workflow engine (``engine/``; ``flows/`` until the move)
#: imports none of them, they are injected from above (issue 28).
TRIPLEO = ("core", "plans", "actions", "client", "cli", "http", "openstack", "heat", "ironic",
           "workspace", "validations", "sample_plan", "config", "config_api")
ENGINES = ("engine", "flows")

#: The engine's imports of TripleO still to be replaced by the engine's own contract or
#: an injected hook (issue 28 item 1): this list only shrinks.
ENGINE_DEBT: dict[str, list[str]] = {}


def _tripleo_imports(module: Path) -> list[str]:
    """The TripleO modules ``module`` imports (a package's submodules folded into it)."""
    names = {name for name in _imports(module)
             if any(name == f"tripleo_flow.{p}" or name.startswith(f"tripleo_flow.{p}.")
                    for p in TRIPLEO)}
    return sorted(n for n in names if n.rsplit(".", 1)[0] not in names)


def test_the_engine_imports_nothing_of_tripleo() -> None:
    modules = [m for e in ENGINES for m in sorted((PACKAGE / e).rglob("*.py"))]
    assert len(modules) > 40
    found = {str(m.relative_to(PACKAGE)): _tripleo_imports(m) for m in modules}
    assert {k: v for k, v in found.items() if v} == ENGINE_DEBT


def test_the_check_sees_an_import_from_above(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from tripleo_flow import client\nimport tripleo_flow.cli.deploy\n")
    assert {"tripleo_flow.client", "tripleo_flow.cli.deploy"} <= _imports(module)


#: Reference implementations the tests run as oracles: never imported by the product.
ORACLES = ("tripleo_common", "mistral", "tests")


def test_the_product_imports_no_oracle() -> None:
    """tripleo-common (and the tests' oracles) run only in the tests' own virtualenvs."""
    modules = sorted(PACKAGE.rglob("*.py"))
    bad = {str(m.relative_to(PACKAGE)): sorted(
        n for n in _imports(m) if n.split(".")[0] in ORACLES) for m in modules}
    assert {k: v for k, v in bad.items() if v} == {}
    assert len(modules) > 100
