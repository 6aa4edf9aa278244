"""The ``tripleo-flow`` command: a thin cliff app over :mod:`tripleo_flow.api`.

Commands are registered under the entry point namespace ``tripleo_flow.cli``
(``plan_create`` becomes ``tripleo-flow plan create``).  Errors print one line
and exit with the code of their kind (:func:`tripleo_flow.exceptions.exit_code`);
``--debug`` shows the traceback.
"""

from __future__ import annotations

import importlib.metadata
import logging
import sys
from collections.abc import Sequence
from typing import Any

from cliff.app import App
from cliff.commandmanager import CommandManager

from tripleo_flow import __version__, exceptions


class LazyCommandManager(CommandManager):  # type: ignore[misc]
    """cliff's command manager, which imports a command's module only when the command
    runs (or ``help`` describes it): cliff's own imports every command module of the
    namespace at start, so each command paid for all the others."""

    def load_commands(self, namespace: str) -> None:
        self.group_list.append(namespace)
        for entry_point in importlib.metadata.entry_points(group=namespace):
            name = entry_point.name.replace("_", " ") if self.convert_underscores \
                else entry_point.name
            self.commands[name] = entry_point


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
            from tripleo_flow import api

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
    try:
        app = TripleoFlowApp()
        return int(app.run(list(sys.argv[1:] if argv is None else argv)))
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)


if __name__ == "__main__":
    sys.exit(main())
