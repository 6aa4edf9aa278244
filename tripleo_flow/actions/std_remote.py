"""Mistral's standard actions that reach other machines: ``std.email`` (SMTP) and
``std.ssh`` (a command over SSH, with OpenSSH's ``ssh`` client: no Python SSH
library; as Mistral's, it does not check the host key).

Each connects from the machine the workflow runs on to a host the workbook names,
with credentials the workbook gives, so an execution started over the HTTP API
refuses them unless the server allows it (``[api] allow_outbound_actions``,
checked in :mod:`tripleo_flow.flows.action_atom` through
:attr:`~tripleo_flow.actions.base.Action.connects_out`).  A sent mail or a run
command cannot be taken back: their reverts do nothing.
"""

from __future__ import annotations

import os
import shutil
import smtplib
import subprocess
import tempfile
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


def _ssh_word(name: str, value: Any) -> str:
    """A host or user name that ssh cannot read as an option or a second word."""
    if not isinstance(value, str) or not value or value.startswith("-") or \
            any(c.isspace() for c in value):
        raise exceptions.InvalidInput(
            f"std.ssh {name!r} must be a name without spaces, not starting with '-' "
            f"(got {value!r}).")
    return value


class Ssh(Action):
    """Run ``cmd`` over SSH on ``host`` (or on each host of a list) as ``username``,
    authenticated by a private key (a file or its text) or a password.  Returns the
    command's standard output (a list for a list of hosts); a non-zero exit fails the
    task unless ``return_result_on_error``, which returns ``{stdout, stderr,
    exit_code}`` per host instead, as Mistral's.  ``port`` (ours) defaults to 22."""

    rerun = Rerun.CALLER
    connects_out = True

    def execute(self, cmd: str, host: str | list[str], username: str, password: str = "",
                private_key_filename: str | None = None, private_key: str | None = None,
                return_result_on_error: bool = False, port: int = 22) -> Any:
        if not isinstance(cmd, str) or not cmd:
            raise exceptions.InvalidInput("std.ssh 'cmd' must be a command line (text).")
        hosts = [host] if isinstance(host, str) else host
        if not isinstance(hosts, list) or not hosts:
            raise exceptions.InvalidInput("std.ssh 'host' must be a host or a list of hosts.")
        hosts = [_ssh_word("host", h) for h in hosts]
        _ssh_word("username", username)
        if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
            raise exceptions.InvalidInput(f"std.ssh 'port' must be 1-65535 (got {port!r}).")
        client = shutil.which("ssh")
        if client is None:
            raise ActionFailed("std.ssh needs OpenSSH's ssh client on the machine the "
                               "workflow runs on: install openssh-client.")
        with tempfile.TemporaryDirectory(prefix="tf-ssh-") as tmp:
            args, env = self._auth(tmp, client, password, private_key_filename, private_key)
            args += ["-p", str(port), "-l", username]
            results = [self._run(args, env, name, cmd, return_result_on_error)
                       for name in hosts]
        return results if isinstance(host, list) else results[0]

    @staticmethod
    def _auth(tmp: str, client: str, password: str, key_file: str | None,
              key_text: str | None) -> tuple[list[str], dict[str, str]]:
        """The ssh command line and environment for this authentication (secrets go in
        0600 files of ``tmp``, never on a command line)."""
        args = [client, "-F", "/dev/null", "-T", "-o", "StrictHostKeyChecking=no",
                "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
                "-o", f"ConnectTimeout={CONNECT_TIMEOUT}", "-o", "NumberOfPasswordPrompts=1"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("SSH_")}
        if key_text:
            key_file = os.path.join(tmp, "key")
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(key_text if key_text.endswith("\n") else key_text + "\n")
        if key_file:
            args += ["-i", str(key_file), "-o", "IdentitiesOnly=yes"]
        if password:
            secret = os.path.join(tmp, "password")
            fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(password)
            askpass = os.path.join(tmp, "askpass")
            fd = os.open(askpass, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o700)
            with os.fdopen(fd, "w") as handle:
                handle.write(f"#!/bin/sh\nexec cat {secret!r}\n")
            env.update(SSH_ASKPASS=askpass, SSH_ASKPASS_REQUIRE="force", DISPLAY=":0")
        else:
            args += ["-o", "BatchMode=yes"]
        return args, env

    @staticmethod
    def _run(args: list[str], env: dict[str, str], host: str, cmd: str,
             keep_errors: bool) -> Any:
        done = subprocess.run([*args, "--", host, cmd], env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, errors="replace",
                              check=False, start_new_session=True)
        if keep_errors:
            return {"stdout": done.stdout, "stderr": done.stderr, "exit_code": done.returncode}
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [""])[-1][:300]
            what = "could not connect or log in" if done.returncode == 255 else \
                f"exited with {done.returncode}"
            raise ActionFailed(f"std.ssh command {cmd[:200]!r} on {host}: {what}"
                               + (f": {last}" if last else ""))
        return done.stdout
