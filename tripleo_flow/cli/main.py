"""The ``tripleo-flow`` command: a thin cliff app over :mod:`tripleo_flow.client`.

Commands are listed in :mod:`tripleo_flow.cli.command_table` (also registered under
the entry point namespace ``tripleo_flow.cli``: ``plan_create`` is ``tripleo-flow
plan create``); a command's module is imported only when it runs.  Errors print one
line and exit with the code of their kind (:func:`tripleo_flow.exceptions.exit_code`);
``--debug`` shows the traceback.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import Any

from cliff.app import App
from cliff.commandmanager import CommandManager

from tripleo_flow import __version__, exceptions
from tripleo_flow.cli import command_table, help_list, hint_words


class TableEntry:
    """A command of :mod:`~tripleo_flow.cli.command_table`, as cliff's command manager
    holds an entry point: ``load()`` imports its module (only then)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.value = command_table.target(name)
        #: Its line of ``tripleo-flow --help``.
        self.summary = command_table.COMMANDS[name][1]

    def load(self) -> Any:
        from importlib import import_module

        module, _, attr = self.value.partition(":")
        return getattr(import_module(module), attr)

    def __repr__(self) -> str:
        return f"TableEntry({self.name!r}, {self.value!r})"


class LazyCommandManager(CommandManager):  # type: ignore[misc]
    """cliff's command manager over the command table: it imports a command's module
    only when the command runs (or ``help NAME`` describes it) and reads no entry
    point metadata at start (cliff's imports every command module of the namespace,
    found by reading the metadata of every installed distribution).  A name not in
    the table is looked up in the namespace's entry points, as cliff would."""

    def load_commands(self, namespace: str) -> None:
        self.group_list.append(namespace)
        if namespace == "tripleo_flow.cli":
            for name in command_table.COMMANDS:
                self.commands[name] = TableEntry(name)  # type: ignore[assignment]
        else:
            self._load_entry_points(namespace)

    def _load_entry_points(self, namespace: str) -> None:
        """Add the namespace's entry points that the table does not name."""
        import importlib.metadata

        for entry_point in importlib.metadata.entry_points(group=namespace):
            name = entry_point.name.replace("_", " ") if self.convert_underscores \
                else entry_point.name
            self.commands.setdefault(name, entry_point)

    def find_command(self, argv: list[str]) -> Any:
        try:
            return super().find_command(argv)
        except ValueError:
            if getattr(self, "_scanned", False):
                raise
            self._scanned = True
            for namespace in self.group_list:
                self._load_entry_points(namespace)
            return super().find_command(argv)


class TripleoFlowApp(App):  # type: ignore[misc]
    #: Every command this app runs is tripleo-flow's (``ClientMixin.get_epilog``).
    own_commands = True

    def __init__(self) -> None:
        super().__init__(
            description="Plans, workflows and ephemeral Heat for TripleO-style deployments.",
            version=__version__,
            command_manager=LazyCommandManager("tripleo_flow.cli"),
            deferred_help=True,
        )
        self._client: Any = None
        self._error: BaseException | None = None
        self.command_manager.add_command("help", help_list.HelpCommand)

    def print_help_if_requested(self) -> None:
        """``tripleo-flow --help``: the commands listed from the command table
        (:mod:`~tripleo_flow.cli.help_list`), none of their modules imported."""
        if self.deferred_help and self.options.deferred_help:
            help_list.print_help(self)

    def build_option_parser(
        self, description: str | None, version: str | None, argparse_kwargs: Any = None
    ) -> Any:
        parser = super().build_option_parser(description, version, argparse_kwargs)
        parser.add_argument(
            "--config-file", action="append", default=[], metavar="FILE",
            help="Configuration file (may be repeated). Default: "
                 "/etc/tripleo-flow/tripleo-flow.conf or ~/.config/tripleo-flow/tripleo-flow.conf.",
        )
        return parser

    def configure_logging(self) -> None:
        super().configure_logging()
        if not self.options.debug:
            # Third-party INFO chatter (alembic migrations, stevedore, taskflow) is not for users.
            for name in ("alembic", "stevedore", "taskflow", "tooz", "swiftclient"):
                logging.getLogger(name).setLevel(logging.WARNING)

    @property
    def client(self) -> Any:
        """The Python API session every command calls (built on first use)."""
        if self._client is None:
            from tripleo_flow import client as api

            self._client = api.Client.from_config_files(self.options.config_file)
        return self._client

    def clean_up(self, cmd: Any, result: int, err: BaseException | None) -> None:
        self._error = err
        if self._client is not None:
            self._client.close()
            self._client = None

    def run_subcommand(self, argv: list[str]) -> int:
        """Run one command; cliff prints the error line, we pick the exit code of its kind."""
        self._error = None
        result = int(super().run_subcommand(argv) or 0)
        if self._error is not None:
            return exceptions.exit_code(self._error)
        return result


def main(argv: Sequence[str] | None = None) -> int:
    # cliff's App sets the root logger to DEBUG and adds a console handler on this call's
    # stderr: a caller in the same process (an embedding program, the tests) gets the
    # root logger back as it was, not one more handler per call on a stream that may be
    # closed by then, nor every library's debug records made from then on.
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    hint_words.install()  # errors name their next steps as tripleo-flow commands
    try:
        app = TripleoFlowApp()
        return int(app.run(list(sys.argv[1:] if argv is None else argv)))
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)


def console_main() -> None:
    """The ``tripleo-flow`` console script: :func:`main`, then the process ends as soon
    as its output is out.

    Once the command is done, what is left of a normal interpreter exit is tearing down
    every object the command loaded (TaskFlow, SQLAlchemy, networkx ...: about a quarter
    of a workflow-running command's CPU).  So the exit handlers run (logging's flush,
    temporary directories' clean-up, every ``atexit`` hook), standard streams are
    flushed, and the process exits without that teardown.  Only when nothing else is
    running: a non-daemon thread still alive gets the interpreter's normal exit, which
    waits for it.  Callers in the same process (tests, embedding programs) call
    :func:`main`, which never exits.
    """
    code = main()
    fast_exit(code)


def fast_exit(code: int) -> None:
    """End the process with ``code`` after the exit handlers, without the interpreter's
    teardown of its objects (see :func:`console_main`)."""
    import atexit
    import os
    import threading

    others = [t for t in threading.enumerate()
              if t is not threading.current_thread() and not t.daemon and t.is_alive()]
    if others:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or a reader that went away (| head)
            code = code or 1
    os._exit(code)


if __name__ == "__main__":
    console_main()
