"""``tripleo-flow --help`` and ``tripleo-flow help``: the command list, read from the
command table (:mod:`tripleo_flow.cli.command_table`).

cliff's own listing imports every command's module to read its docstring and reads
the metadata of every installed distribution to name the one each command comes
from: most of the 0.3 s of CPU ``--help`` cost.  This one prints the same lines (a
test compares them with cliff's) from the table; only a command the table does not
describe (``help``, cliff's ``complete``) is loaded, and one from another package is
marked with it, as cliff marks a command of another distribution.
"""

from __future__ import annotations

import argparse
import inspect
from typing import Any

import autopage.argparse
from cliff import help as cliff_help

from tripleo_flow.cli.command_table import RENAMED


def _line(app: Any, name: str, entry: Any, color: bool) -> str | None:
    """The line of command ``name`` (None: left out, as cliff leaves out a deprecated one)."""
    summary = getattr(entry, "summary", None)
    origin = ""
    if summary is not None:
        if name in RENAMED:
            return None
    else:
        try:
            factory = entry.load()
        except Exception:
            return f"Could not load {entry!r}\n"
        try:
            kwargs = {"cmd_name": name} if "cmd_name" in inspect.getfullargspec(
                factory.__init__).args else {}
            cmd = factory(app, None, **kwargs)
        except Exception as err:
            return f"Could not instantiate {entry!r}: {err}\n"
        if cmd.deprecated:
            return None
        summary = cmd.get_description().split("\n")[0].rstrip(".")
        package = factory.__module__.partition(".")[0]
        if package != "tripleo_flow":
            origin = f" ({package})"
            if color:
                origin = f"\033[90m{origin}\033[39m"
    padded = f"{name:<13}"
    if color:
        padded = f"\033[36m{padded}\033[39m"
    return f"  {padded}  {summary}{origin}\n"


def print_help(app: Any) -> None:
    """Print the app's usage and its commands, as cliff's ``HelpAction`` prints them,
    then leave (:class:`cliff.help.HelpExit`)."""
    pager = autopage.argparse.help_pager(app.stdout)
    color = pager.to_terminal()
    autopage.argparse.use_color_for_parser(app.parser, color)
    with pager as out:
        app.parser.print_help(out)
        title = ("\033[4m", "\033[0m") if color else ("", "")
        out.write("\n{}Commands{}:\n".format(*title))
        for name, entry in sorted(app.command_manager, key=lambda item: item[0]):
            line = _line(app, name, entry, color)
            if line is not None:
                out.write(line)
    raise cliff_help.HelpExit()


class HelpCommand(cliff_help.HelpCommand):  # type: ignore[misc]
    """print detailed help for another command"""

    def get_epilog(self) -> str:
        """cliff's epilog without its line naming the distribution of the command: this
        one is tripleo-flow's, and cliff finds that name by reading the metadata of
        every installed distribution (what made ``help`` cost 0.3 s of CPU)."""
        epilogs = [hook.obj.get_epilog() for hook in getattr(self, "_hooks", ())
                   if hook.obj is not None]
        return "\n\n".join([self._epilog or "", *(e for e in epilogs if e is not None)])

    def take_action(self, parsed_args: argparse.Namespace) -> int:
        if not parsed_args.cmd:
            print_help(self.app)
        return int(super().take_action(parsed_args) or 0)
