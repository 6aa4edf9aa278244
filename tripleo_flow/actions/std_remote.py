"""Mistral's standard actions that reach other machines: ``std.email`` (SMTP),
``std.ssh`` and ``std.ssh_proxied`` (a command over SSH, directly or through a
gateway host, with OpenSSH's ``ssh`` client: no Python SSH library; as Mistral's,
they do not check host keys) and ``std.mistral_http`` (``std.http`` naming the
execution in Mistral's headers).

Each connects from the machine the workflow runs on to a host the workbook names,
with credentials the workbook gives, so an execution started over the HTTP API
refuses them unless the server allows it (``[api] allow_outbound_actions``,
checked in :mod:`tripleo_flow.engine.compile.action_atom` through
:attr:`~tripleo_flow.actions.base.Action.connects_out`).  A sent mail or a run
command cannot be taken back: their reverts do nothing.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import smtplib
import subprocess
import tempfile
from email.header import Header
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, ActionContext, Rerun
from tripleo_flow.actions.std import Http
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
        return self._ssh(cmd, host, username, password, private_key_filename, private_key,
                         return_result_on_error, port, None)

    def _ssh(self, cmd: str, host: str | list[str], username: str, password: str,
             key_file: str | None, key_text: str | None, keep_errors: bool, port: int,
             gateway: tuple[str, str, int] | None) -> Any:
        """Run ``cmd`` on each host; ``gateway``: ``(host, user, port)`` to go through."""
        if not isinstance(cmd, str) or not cmd:
            raise exceptions.InvalidInput("std.ssh 'cmd' must be a command line (text).")
        hosts = [host] if isinstance(host, str) else host
        if not isinstance(hosts, list) or not hosts:
            raise exceptions.InvalidInput("std.ssh 'host' must be a host or a list of hosts.")
        hosts = [_ssh_word("host", h) for h in hosts]
        _ssh_word("username", username)
        _check_port("port", port)
        client = shutil.which("ssh")
        if client is None:
            raise ActionFailed("std.ssh needs OpenSSH's ssh client on the machine the "
                               "workflow runs on: install openssh-client.")
        with tempfile.TemporaryDirectory(prefix="tf-ssh-") as tmp:
            args, env = self._auth(tmp, client, password, key_file, key_text)
            if gateway is not None:
                # The gateway's ssh: the same options and credentials, forwarding to %h:%p
                # (a ProxyCommand, read by a shell: every word quoted).
                proxy = [*args, "-p", str(gateway[2]), "-l", gateway[1], "-W", "%h:%p",
                         "--", gateway[0]]
                args += ["-o", "ProxyCommand=" + " ".join(shlex.quote(a) for a in proxy)]
            args += ["-p", str(port), "-l", username]
            results = [self._run(args, env, name, cmd, keep_errors) for name in hosts]
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


#: A gateway host or user name as written in an ssh ProxyCommand: nothing its shell
#: or ssh's ``%`` tokens would read.
_GATEWAY_WORD = re.compile(r"[A-Za-z0-9_.:\[\]-]+")


class SshProxied(Ssh):
    """Run ``cmd`` over SSH on ``host`` reached through ``gateway_host`` (a bastion:
    ssh to the gateway, and from there a tunnel to the host's SSH port), as Mistral's
    ``std.ssh_proxied``; the gateway takes the same key or password as the host and
    ``gateway_username`` (default: ``username``).  Mistral's ``proxy_command`` (a
    command run on the machine the workflow runs on) is refused."""

    def execute(self, cmd: str, host: str | list[str], username: str,  # type: ignore[override]
                gateway_host: str, private_key_filename: str | None = None,
                gateway_username: str | None = None, password: str = "",
                proxy_command: str | None = None, private_key: str | None = None,
                return_result_on_error: bool = False, port: int = 22,
                gateway_port: int = 22) -> Any:
        if proxy_command is not None:
            raise exceptions.InvalidInput(
                "std.ssh_proxied 'proxy_command' is not supported: it would run a command "
                "on the machine the workflow runs on. Give 'gateway_host' (and "
                "'gateway_username', 'gateway_port') instead.")
        for name, value in (("gateway_host", gateway_host),
                            ("gateway_username", gateway_username or username)):
            if not isinstance(value, str) or not _GATEWAY_WORD.fullmatch(value) or \
                    value.startswith("-"):
                raise exceptions.InvalidInput(
                    f"std.ssh_proxied {name!r} must be a host or user name (letters, "
                    f"digits, '.', '_', '-', ':', brackets), got {value!r}.")
        _check_port("gateway_port", gateway_port)
        return self._ssh(cmd, host, username, password, private_key_filename, private_key,
                         return_result_on_error, port,
                         (gateway_host, gateway_username or username, gateway_port))


def _check_port(name: str, port: Any) -> None:
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise exceptions.InvalidInput(f"std.ssh {name!r} must be 1-65535 (got {port!r}).")


class MistralHttp(Http):
    """``std.http`` that also tells the server which workflow execution and task sent
    the request, in Mistral's headers (``Mistral-Workflow-Name``,
    ``Mistral-Workflow-Execution-Id``, ``Mistral-Task-Id``,
    ``Mistral-Action-Execution-Id``).  Unlike Mistral's, it completes when the
    response comes (no ``Mistral-Callback-URL``)."""

    connects_out = True

    def execute(self, url: str, method: str = "GET",  # type: ignore[override]
                params: dict[str, Any] | None = None, body: Any = None, json: Any = None,
                headers: dict[str, str] | None = None,
                timeout: float | None = None) -> dict[str, Any]:
        sent = dict(headers or {})
        info = self.context.execution if isinstance(self.context, ActionContext) else None
        if info is not None:
            sent.update({"Mistral-Workflow-Name": info.workflow_name,
                         "Mistral-Workflow-Execution-Id": info.execution_id,
                         "Mistral-Task-Id": info.task_id,
                         # one action execution per task execution here
                         "Mistral-Action-Execution-Id": info.task_id})
        return super().execute(url, method, params, body, json, sent, timeout)
