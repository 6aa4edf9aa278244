"""Throwaway hosts for a real Ansible run: podman containers of a Debian image with
sshd, one loopback address each (host network, ``127.0.0.N``), reached over SSH as
``tripleo-admin`` (passwordless sudo) with a key generated for the run.

The inventory of config-download names the servers by their ctlplane addresses;
an SSH client configuration (``ANSIBLE_SSH_ARGS=-F ...``) sends each of those to
its container, so the project runs unmodified.  That configuration names no key
(``IdentitiesOnly``, no ``IdentityFile``): the key must come from the project's
inventory (``deploy --overcloud-ssh-key``), or the hosts are unreachable.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

IMAGE = "localhost/tripleo-flow/testhost:bookworm"
PACKAGES = "openssh-server,python3,sudo,iproute2,procps,passwd,login"
MIRROR = "http://deb.debian.org/debian"
USER = "tripleo-admin"
#: podman as ENVIRONMENT.md found it works here: runc, ulimits at most the host's.
PODMAN = ["podman", "--runtime", "runc"]
LIMITS = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"]


@dataclasses.dataclass(frozen=True)
class Hosts:
    """Running test hosts: name -> loopback address, and how SSH reaches them."""

    addresses: dict[str, str]
    port: int
    key: Path
    ssh_config: Path
    containers: dict[str, str]

    def ssh_args(self) -> str:
        """``ANSIBLE_SSH_ARGS`` that route the ctlplane addresses to the containers."""
        return f"-F {self.ssh_config} -o ControlMaster=auto -o ControlPersist=60s"

    def run(self, name: str, command: str) -> subprocess.CompletedProcess[str]:
        """Run ``command`` inside host ``name`` (as root, not over SSH: for checks)."""
        return subprocess.run(["podman", "exec", self.containers[name], "sh", "-c", command],
                              capture_output=True, text=True, check=False, timeout=60)


def ensure_image() -> None:
    """Build the image once (mmdebstrap of bookworm, imported: about 15 s)."""
    if subprocess.run(["podman", "image", "exists", IMAGE], check=False).returncode == 0:
        return
    with tempfile.TemporaryDirectory(prefix="tripleo-flow-testhost-") as tmp:
        rootfs = Path(tmp) / "rootfs.tar"
        subprocess.run(["mmdebstrap", "--variant=essential", f"--include={PACKAGES}",
                        "--mode=root", "bookworm", str(rootfs), MIRROR],
                       check=True, capture_output=True, stdin=subprocess.DEVNULL)
        subprocess.run(["podman", "import", str(rootfs), IMAGE], check=True,
                       capture_output=True)


def _free_port(addresses: list[str]) -> int:
    for _ in range(50):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        try:
            for address in addresses:
                with socket.socket() as probe:
                    probe.bind((address, port))
        except OSError:
            continue
        return port
    raise RuntimeError("no port free on every test host address")


def _wait_ssh(address: str, port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((address, port), timeout=1) as conn:
                if conn.recv(4).startswith(b"SSH-"):
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"sshd did not answer on {address}:{port}")


@contextmanager
def running(ctlplane: Mapping[str, str], work: Path) -> Iterator[Hosts]:
    """Start one host per ``name -> ctlplane address``; remove them all afterwards."""
    ensure_image()
    work.mkdir(parents=True, exist_ok=True)
    key = work / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
                   check=True)
    public = (work / "id_ed25519.pub").read_text().strip()
    addresses = {name: f"127.0.0.{index}" for index, name in enumerate(ctlplane, start=2)}
    port = _free_port(list(addresses.values()))
    containers: dict[str, str] = {}
    try:
        for name, address in addresses.items():
            setup = " && ".join([
                f"useradd -m -s /bin/bash {USER}",
                f"mkdir -p /home/{USER}/.ssh",
                f"echo {shlex.quote(public)} > /home/{USER}/.ssh/authorized_keys",
                f"chown -R {USER} /home/{USER}/.ssh", f"chmod 700 /home/{USER}/.ssh",
                f"echo '{USER} ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/{USER}",
                f"echo '127.0.1.1 {name}' >> /etc/hosts",
                "mkdir -p /run/sshd", "ssh-keygen -A >/dev/null",
                f"exec /usr/sbin/sshd -D -e -p {port} -o ListenAddress={address}"])
            container = f"tripleo-flow-testhost-{name}-{os.getpid()}"
            subprocess.run([*PODMAN, "run", "-d", "--rm", "--network", "host",
                            "--hostname", name, *LIMITS, "--name", container, IMAGE,
                            "/bin/sh", "-c", setup], check=True, capture_output=True)
            containers[name] = container
        for address in addresses.values():
            _wait_ssh(address, port)
        config = work / "ssh_config"
        lines = [f"Host {ctlplane[name]}\n  HostName {address}\n"
                 for name, address in addresses.items()]
        lines.append(f"Host *\n  Port {port}\n  IdentitiesOnly yes\n"
                     "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n"
                     "  LogLevel ERROR\n")
        config.write_text("".join(lines))
        yield Hosts(addresses, port, key, config, containers)
    finally:
        for container in containers.values():
            subprocess.run(["podman", "rm", "-f", "-t", "0", container], check=False,
                           capture_output=True)


_RECAP = re.compile(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+"
                    r"failed=(\d+)\s+skipped=(\d+)", re.MULTILINE)


def recap(log: str) -> dict[str, dict[str, int]]:
    """The PLAY RECAP of an ansible-playbook output: host -> ok, changed, ... counts."""
    keys = ("ok", "changed", "unreachable", "failed", "skipped")
    return {m.group(1): dict(zip(keys, map(int, m.groups()[1:]), strict=True))
            for m in _RECAP.finditer(log)}


def copy_project(project: Path, target: Path) -> Path:
    """A copy of a config-download project (a run writes into it)."""
    shutil.copytree(project, target, symlinks=True)
    return target
