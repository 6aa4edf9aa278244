"""Which heat type a command that names none uses: the heat-dir's records (its running
Heat's run.json, else the type that wrote its dump), else the deployment status', else
``[heat] heat_type`` (real files in a heat-dir, no Heat)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tripleo_flow import config
from tripleo_flow.heat import make_launcher, resolve_type
from tripleo_flow.heat.workdir import HeatDir


def _conf(default: str):  # type: ignore[no-untyped-def]
    conf = config.new_conf()
    conf([], project="tripleo-flow", default_config_files=[], default_config_dirs=[])
    conf.set_override("heat_type", default, group="heat")
    return conf


def _heat_dir(root: Path, run: str | None, dump: str | None, dump_file: bool) -> HeatDir:
    work = HeatDir(root)
    work.ensure()
    if dump_file:
        work.write_private(work.dump_file, "BEGIN TRANSACTION;\nCOMMIT;\n")
    if dump:
        work.note_dump_type(dump)
    if run:
        work.write_run({"heat_type": run})
    return work


CASES = [
    # given,      run.json,    dump's type,  dump there, deployed,     default -> used
    ("native",    "processes", "processes",  True,       "processes",  "processes", "native"),
    (None,        "pod",       "processes",  True,       "container",  "native", "pod"),
    (None,        None,        "processes",  True,       "native",     "native", "processes"),
    (None,        None,        "processes",  False,      None,         "native", "native"),
    (None,        None,        None,         True,       "processes",  "native", "processes"),
    (None,        None,        None,         True,       None,         "processes", "processes"),
    (None,        None,        None,         False,      None,         "native", "native"),
]


@pytest.mark.parametrize("given,run,dump,dump_file,deployed,default,used", CASES)
def test_resolve_type(tmp_path: Path, given: str | None, run: str | None, dump: str | None,
                      dump_file: bool, deployed: str | None, default: str,
                      used: str) -> None:
    work = _heat_dir(tmp_path, run, dump, dump_file)
    assert resolve_type(_conf(default), given, work.given, deployed) == used


def test_the_launcher_of_a_heat_dir_is_the_type_that_wrote_its_dump(tmp_path: Path) -> None:
    work = _heat_dir(tmp_path, None, "processes", True)
    assert make_launcher(_conf("native"), None, work.given).heat_type == "processes"
    assert make_launcher(_conf("native"), "native", work.given).heat_type == "native"
    # Once the dump is gone (a deployment started afresh), its record no longer counts.
    work.dump_file.unlink()
    assert make_launcher(_conf("native"), None, work.given).heat_type == "native"


def test_the_dump_type_record_is_private(tmp_path: Path) -> None:
    work = _heat_dir(tmp_path, None, "processes", True)
    assert work.dump_type_file.stat().st_mode & 0o777 == 0o600
    assert work.dump_type() == "processes"


@pytest.mark.parametrize("configured,launched", [
    ("processes", "native"), ("native", "native"), ("container", "container"),
    ("pod", "pod"), ("installed", "installed")])
def test_a_plan_is_validated_on_the_heat_that_starts_soonest(configured: str,
                                                              launched: str) -> None:
    """A parameter schema's Heat only validates: the default processes (built for a
    stack create's throughput) gives native, from the same virtualenv."""
    from tripleo_flow.actions.schema import validation_heat_type

    assert validation_heat_type(configured) == launched
