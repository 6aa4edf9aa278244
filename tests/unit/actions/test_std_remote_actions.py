"""Mistral's standard actions std.echo (delay), std.test_dict and std.email, run in
workflows on the real engine; std.email against a real SMTP server (aiosmtpd) on
loopback.  Actions that connect out are refused to HTTP API users unless allowed."""

from __future__ import annotations

import email
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from tests.engine_helpers import ACTIONS, Host
from tests.unit.engine.test_mistral_conformance import Run
from tripleo_flow import exceptions
from tripleo_flow.actions import std, std_remote
from tripleo_flow.actions.base import Action, Rerun


class _Inbox:
    """aiosmtpd handler keeping every message it receives."""

    def __init__(self) -> None:
        self.received: list[tuple[str, list[str], email.message.Message]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.received.append((envelope.mail_from, list(envelope.rcpt_tos),
                              email.message_from_bytes(envelope.content)))
        return "250 OK"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def smtp() -> Iterator[tuple[str, _Inbox]]:
    inbox = _Inbox()
    port = _free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield f"127.0.0.1:{port}", inbox
    finally:
        controller.stop()


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    actions: dict[str, type[Action]] = {**ACTIONS, "std.test_dict": std.TestDict,
                                        "std.email": std_remote.Email}
    host = Host(tmp_path / "data", actions)
    yield host
    host._session.close_workflows()


def test_echo_waits_its_delay_and_test_dict_builds_a_mapping(host: Host, tmp_path: Path
                                                           ) -> None:
    """Mistral's EchoAction(output, delay) and TestDictAction(size, key_prefix, val)."""
    started = time.monotonic()
    run = Run(host, tmp_path, """
        wf:
          output:
            said: <% $.said %>
            dict: <% $.dict %>
          tasks:
            task1:
              action: std.echo
              input:
                output: Hi
                delay: 0.3
              publish:
                said: <% task().result %>
              on-success: [task2]
            task2:
              action: std.test_dict size=3 key_prefix="key" val="value"
              publish:
                dict: <% task().result %>
        """)
    assert run.state == "SUCCESS"
    assert run.output == {"said": "Hi",
                          "dict": {"key0": "value", "key1": "value", "key2": "value"}}
    assert time.monotonic() - started >= 0.3


def test_echo_refuses_a_negative_delay(host: Host, tmp_path: Path) -> None:
    run = Run(host, tmp_path, """
        wf:
          tasks:
            task1:
              action: std.echo output="Hi" delay=<% -1 %>
        """)
    assert run.state == "ERROR" and run.error is not None
    assert "std.echo 'delay' must be a number of seconds >= 0 (got -1)" in str(run.error)


EMAIL = """
    wf:
      input:
        - server
      tasks:
        send:
          action: std.email
          input:
            from_addr: flow@example.com
            to_addrs: [ops@example.com]
            cc_addrs: [lead@example.com]
            bcc_addrs: [audit@example.com]
            reply_to: [noreply@example.com]
            smtp_server: <% $.server %>
            subject: Deployment <% execution().name %> done
            body: The overcloud is up.
            html_body: <p>The overcloud is up.</p>
    """


def test_email_is_delivered_to_a_real_smtp_server(host: Host, tmp_path: Path,
                                                  smtp: tuple[str, _Inbox]) -> None:
    server, inbox = smtp
    run = Run(host, tmp_path, EMAIL, server=server)
    assert run.state == "SUCCESS", run.error
    [(sender, recipients, message)] = inbox.received
    assert sender == "flow@example.com"
    assert sorted(recipients) == ["audit@example.com", "lead@example.com", "ops@example.com"]
    assert message["To"] == "ops@example.com" and message["Cc"] == "lead@example.com"
    assert message["Bcc"] is None and message["Reply-To"] == "noreply@example.com"
    assert str(email.header.make_header(email.header.decode_header(message["Subject"]))) \
        == f"Deployment {host.executions.list()[-1].workflow} done"
    parts = {p.get_content_type(): p.get_payload(decode=True).decode()
             for p in message.walk() if not p.is_multipart()}
    assert parts == {"text/plain": "The overcloud is up.",
                     "text/html": "<p>The overcloud is up.</p>"}


def test_email_to_a_server_that_does_not_answer_fails_the_task(host: Host,
                                                               tmp_path: Path) -> None:
    port = _free_port()  # nothing listens there
    run = Run(host, tmp_path, EMAIL, server=f"127.0.0.1:{port}")
    assert run.state == "ERROR" and run.error is not None
    assert f"std.email could not send through 127.0.0.1:{port}" in str(run.error)


def test_email_refuses_a_header_with_a_line_break(host: Host, tmp_path: Path,
                                                  smtp: tuple[str, _Inbox]) -> None:
    server, inbox = smtp
    run = Run(host, tmp_path, EMAIL.replace("ops@example.com",
                                            '"ops@example.com\\nBcc: evil@example.com"'),
              server=server)
    assert run.state == "ERROR" and "line break" in str(run.error)
    assert inbox.received == []


def test_an_api_user_cannot_send_email_unless_the_server_allows_it(
        host: Host, tmp_path: Path, smtp: tuple[str, _Inbox]) -> None:
    server, inbox = smtp
    path = tmp_path / "api.yaml"
    path.write_text("version: '2.0'\nname: api\nworkflows:\n" + "\n".join(
        "  " + line[4:] for line in EMAIL.strip("\n").splitlines()) + "\n")
    host.workbooks.create(path)
    with pytest.raises(exceptions.WorkflowFailed) as failed:
        host.executions.create("api.wf", {"server": server}, api_user=True)
    assert "[api] allow_outbound_actions" in str(failed.value)
    assert "'send' (action std.email)" in str(failed.value)
    assert inbox.received == []
    host._session.close_workflows()
    host.conf.set_override("allow_outbound_actions", True, group="api")
    assert host.executions.create("api.wf", {"server": server}, api_user=True).state == "SUCCESS"
    assert len(inbox.received) == 1
    assert std_remote.Email.connects_out and not std.Http.connects_out
    assert isinstance(exceptions.OutboundActionNotAllowed("std.email", "send"),
                      exceptions.PlanCodeNotAllowed)


def test_a_second_run_sends_the_email_again(host: Host, tmp_path: Path,
                                            smtp: tuple[str, _Inbox]) -> None:
    """std.email is Rerun.CALLER: a resumed task sends its mail once more (a workflow
    whose mail must not be repeated marks its task ``safe-rerun: false``)."""
    assert std_remote.Email.rerun is Rerun.CALLER
    server, inbox = smtp
    for _ in range(2):
        assert Run(host, tmp_path / str(len(inbox.received)), EMAIL,
                   server=server).state == "SUCCESS"
    assert len(inbox.received) == 2
