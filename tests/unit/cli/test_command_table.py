"""The command table (:mod:`tripleo_flow.cli.command_table`) says what the entry points
and the command classes say, and ``tripleo-flow --help`` printed from it reads as
cliff's own listing (which imports every command to print it)."""

from __future__ import annotations

import argparse
import configparser
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cliff import help as cliff_help

from tripleo_flow.cli import command_table, help_list
from tripleo_flow.cli.main import TableEntry, TripleoFlowApp

ROOT = Path(__file__).resolve().parents[3]


def entry_points() -> dict[str, str]:
    """setup.cfg's ``tripleo_flow.cli`` entry points: command name -> target."""
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    found = {}
    for line in parser["options.entry_points"]["tripleo_flow.cli"].strip().splitlines():
        name, _, target = (part.strip() for part in line.partition("="))
        found[name.replace("_", " ")] = target
    return found


def test_the_table_names_every_entry_point_and_no_other_command() -> None:
    table = {name: command_table.target(name) for name in command_table.COMMANDS}
    assert table == entry_points(), (
        "tripleo_flow/cli/command_table.py and setup.cfg's tripleo_flow.cli entry points "
        "must name the same commands (add the row or the entry point that is missing)")


@pytest.mark.parametrize("name", sorted(command_table.COMMANDS))
def test_a_summary_is_the_first_line_of_its_command_s_docstring(name: str) -> None:
    command = TableEntry(name).load()
    described = command(TripleoFlowApp(), None, cmd_name=name).get_description()
    first, _, _ = described.partition("\n\n")
    assert "\n" not in first.strip(), (
        f"the docstring of {name!r} starts with a paragraph of several lines: --help "
        "shows only its first line, cut mid-sentence; make that line a whole summary")
    assert command_table.COMMANDS[name][1] == first.strip().rstrip("."), (
        f"change the summary of {name!r} in tripleo_flow/cli/command_table.py to the "
        "first line of its class's docstring")


def test_the_renamed_commands_are_in_the_table_under_both_names() -> None:
    for old, new in command_table.RENAMED.items():
        assert command_table.COMMANDS[old] == command_table.COMMANDS[new]


def listing(print_help: object) -> str:
    app = TripleoFlowApp()
    app.stdout = io.StringIO()
    app.options = argparse.Namespace(debug=False, deferred_help=True)
    with pytest.raises(cliff_help.HelpExit):
        print_help(app)  # type: ignore[operator]
    return app.stdout.getvalue()


def test_the_help_printed_from_the_table_is_cliff_s() -> None:
    def cliff_print_help(app: TripleoFlowApp) -> None:
        cliff_help.HelpAction([], argparse.SUPPRESS, default=app)(
            app.parser, app.options, None, None)

    ours = listing(help_list.print_help)
    assert ours == listing(cliff_print_help)
    assert "  plan create    Create a plan from a template directory" in ours
    assert "  roles list " not in ours and "  role list " in ours  # renamed: left out
    assert "  complete       print bash completion command (cliff)" in ours


PLUGIN_COMMAND = '''
from cliff.command import Command


class Hello(Command):
    """Say hello (a command of another distribution)"""

    def take_action(self, parsed_args):
        self.app.stdout.write("hello from a plugin\\n")
'''


def test_a_command_registered_only_as_an_entry_point_still_runs(tmp_path: Path) -> None:
    """A command the table does not name (another distribution's, or an entry point
    merged without its row) is found in the entry points when it is run."""
    (tmp_path / "hello_plugin.py").write_text(PLUGIN_COMMAND)
    info = tmp_path / "hello_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hello-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[tripleo_flow.cli]\nplugin_hello = hello_plugin:Hello\n")
    env = dict(os.environ, HOME=str(tmp_path), PYTHONPATH=os.pathsep.join(
        [str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "tripleo_flow.cli.main", "plugin", "hello"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello from a plugin\n"
    unknown = subprocess.run([sys.executable, "-m", "tripleo_flow.cli.main", "plugin", "bye"],
                             capture_output=True, text=True, env=env, timeout=120, check=False)
    assert unknown.returncode == 2
