"""Mistral's standard actions that reach other machines: ``std.email`` (SMTP) and
``std.ssh`` (a command over SSH).

Each connects from the machine the workflow runs on to a host the workbook names,
with credentials the workbook gives, so an execution started over the HTTP API
refuses them unless the server allows it (``[api] allow_outbound_actions``,
checked in :mod:`tripleo_flow.flows.action_atom` through
:attr:`~tripleo_flow.actions.base.Action.connects_out`).  A sent mail or a run
command cannot be taken back: their reverts do nothing.
"""

from __future__ import annotations

import smtplib
from email.header import Header
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.exceptions import ActionFailed

#: Seconds an SMTP or SSH connection may take to answer.
CONNECT_TIMEOUT = 30


def _addresses(name: str, value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise exceptions.InvalidInput(
            f"std.email {name!r} must be an address or a list of addresses (got {value!r}).")
    if any("\n" in v or "\r" in v for v in value):
        raise exceptions.InvalidInput(f"std.email {name!r}: an address holds a line break.")
    return list(value)


def _server(smtp_server: Any) -> tuple[str, int]:
    """``host`` or ``host:port`` (Mistral's form), port 25 by default."""
    if not isinstance(smtp_server, str) or not smtp_server.strip():
        raise exceptions.InvalidInput(
            f"std.email 'smtp_server' must be HOST or HOST:PORT (got {smtp_server!r}).")
    host, sep, port = smtp_server.strip().rpartition(":")
    if not sep or not port.isdigit() or not host:
        return smtp_server.strip(), 25
    return host.strip("[]"), int(port)


class Email(Action):
    """Send an email through an SMTP server (with ``smtp_password``: STARTTLS, then
    login as ``from_addr``).  Returns None, as Mistral's."""

    rerun = Rerun.CALLER
    connects_out = True

    def execute(self, from_addr: str, to_addrs: list[str], smtp_server: str,
                reply_to: list[str] | None = None, cc_addrs: list[str] | None = None,
                bcc_addrs: list[str] | None = None, smtp_password: str | None = None,
                subject: str | None = None, body: str | None = None,
                html_body: str | None = None) -> None:
        sender = _addresses("from_addr", from_addr)
        if len(sender) != 1:
            raise exceptions.InvalidInput("std.email 'from_addr' must be one address.")
        to, cc = _addresses("to_addrs", to_addrs), _addresses("cc_addrs", cc_addrs)
        bcc, replies = _addresses("bcc_addrs", bcc_addrs), _addresses("reply_to", reply_to)
        if not to + cc + bcc:
            raise exceptions.InvalidInput("std.email needs at least one recipient "
                                          "(to_addrs, cc_addrs or bcc_addrs).")
        text = body or "<No body>"
        message: MIMEText | MIMEMultipart
        if html_body:
            message = MIMEMultipart("alternative")
            message.attach(MIMEText(text, "plain", _charset="utf-8"))
            message.attach(MIMEText(html_body, "html", _charset="utf-8"))
        else:
            message = MIMEText(text, _charset="utf-8")
        message["Subject"] = Header(subject or "<No subject>", "utf-8").encode()
        message["From"] = sender[0]
        message["To"] = ", ".join(to)
        if replies:
            message["Reply-To"] = ", ".join(replies)
        if cc:
            message["Cc"] = ", ".join(cc)
        host, port = _server(smtp_server)
        try:
            with smtplib.SMTP(host, port, timeout=CONNECT_TIMEOUT) as smtp:
                if smtp_password is not None:
                    smtp.ehlo()
                    smtp.starttls()
                    smtp.ehlo()
                    smtp.login(sender[0], smtp_password)
                smtp.sendmail(sender[0], cc + bcc + to, message.as_string())
        except (smtplib.SMTPException, OSError) as exc:
            raise ActionFailed(f"std.email could not send through {host}:{port}: "
                               f"{exc}") from exc
