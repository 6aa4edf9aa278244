"""``tripleo-flow api serve``."""

from __future__ import annotations

import argparse

from cliff.command import Command

from tripleo_flow.cli.common import ClientMixin


class ServeApi(ClientMixin, Command):
    """Serve the HTTP API (JSON under /v1/, the GUI backend) until interrupted."""

    def get_parser(self, prog_name: str) -> argparse.ArgumentParser:
        parser = super().get_parser(prog_name)
        parser.add_argument("--host", help="Address to listen on (default: [api] host, "
                                           "127.0.0.1).")
        parser.add_argument("--port", type=int, help="Port (default: [api] port, 8787).")
        return parser

    def take_action(self, parsed_args: argparse.Namespace) -> int:
        from tripleo_flow.http import server

        api = self.client
        srv = server.make_server(api, parsed_args.host, parsed_args.port)
        self.app.stdout.write(f"tripleo-flow API on http://{srv.effective_host}:"
                              f"{srv.effective_port}/v1/ (Ctrl-C stops it)\n")
        self.app.stdout.flush()
        try:
            srv.run()
        except KeyboardInterrupt:
            pass
        finally:
            srv.close()
        return 0
