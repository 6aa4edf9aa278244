"""Local images with no registry (``tripleo-flow heat image build``).

1. Base: a Debian bookworm rootfs made by ``mmdebstrap --variant=essential``
   (python3-venv, ca-certificates, netbase, libstdc++6, tini), imported into
   podman through the API as ``[heat] base_image``.
2. Heat: ``[heat] image`` built on it: a virtualenv in /opt/heat with
   openstack-heat and PyMySQL from PyPI under tripleo-flow's constraints.  The
   host's CA bundle is copied into the build context (PyPI needs it inside the
   build container).
3. Services (pod type): ``[heat] services_image``, another mmdebstrap rootfs
   with Debian's mariadb-server and rabbitmq-server (the essential variant has
   no apt to install them in a build), for a pod's own database and broker.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.heat.install import HEAT_VERSION, constraints_text

BUILD_COMMAND = exceptions.Hint("Create it with", "heat.image_build")
DEBIAN_MIRROR = "http://deb.debian.org/debian"
BASE_PACKAGES = "python3-venv,ca-certificates,netbase,libstdc++6,tini"
SERVICES_PACKAGES = "mariadb-server,mariadb-client,rabbitmq-server,netbase,tini"
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")

CONTAINERFILE = """\
FROM {base}
COPY constraints.txt ca-bundle.crt /tmp/build/
RUN python3 -m venv /opt/heat \\
 && PIP_CERT=/tmp/build/ca-bundle.crt PIP_CONFIG_FILE=/dev/null \\
    /opt/heat/bin/pip install --no-cache-dir --disable-pip-version-check \\
    -c /tmp/build/constraints.txt openstack-heat=={version} PyMySQL \\
 && rm -rf /tmp/build
ENV PATH=/opt/heat/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ENTRYPOINT ["/usr/bin/tini", "--"]
"""



@dataclass(frozen=True)
class BuiltImages:
    base_image: str
    image: str
    services_image: str
    built: list[str]

    def as_dict(self) -> dict[str, object]:
        return {"base_image": self.base_image, "image": self.image,
                "services_image": self.services_image, "built": self.built}


def build(client: Any, base_image: str, image: str, services_image: str,
          force: bool = False) -> BuiltImages:
    """Build what is missing (or everything with ``force``); return what was built."""
    built = []
    with tempfile.TemporaryDirectory(prefix="tripleo-flow-image-") as tmp:
        if force or not client.images.exists(base_image):
            _import_rootfs(client, base_image, BASE_PACKAGES, Path(tmp))
            built.append(base_image)
        if force or built or not client.images.exists(image):
            _build_heat(client, base_image, image, Path(tmp) / "context")
            built.append(image)
        if force or not client.images.exists(services_image):
            _import_rootfs(client, services_image, SERVICES_PACKAGES, Path(tmp))
            built.append(services_image)
    return BuiltImages(base_image, image, services_image, built)


def _import_rootfs(client: Any, reference: str, packages: str, tmp: Path) -> None:
    """mmdebstrap a bookworm rootfs with ``packages`` and import it as ``reference``."""
    tool = shutil.which("mmdebstrap")
    if not tool:
        raise exceptions.HeatNotInstalled("mmdebstrap", "apt-get install mmdebstrap")
    tarball = tmp / "rootfs.tar"
    proc = subprocess.run([tool, "--variant=essential", f"--include={packages}",
                           "--mode=root", "bookworm", str(tarball), DEBIAN_MIRROR],
                          stdin=subprocess.DEVNULL, capture_output=True, check=False)
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-5:]
        raise exceptions.HeatError(f"mmdebstrap failed to build the rootfs of {reference}:\n"
                                   + "\n".join(tail))
    with open(tarball, "rb") as data:
        response = client.api.post("/images/import", params={"reference": reference},
                                   data=data, headers={"Content-Type": "application/x-tar"})
    tarball.unlink()
    if response.status_code >= 400:
        raise exceptions.HeatError(
            f"podman refused to import the image {reference}: {response.text}"
        )


def _build_heat(client: Any, base_image: str, image: str, context: Path) -> None:
    context.mkdir()
    (context / "Containerfile").write_text(
        CONTAINERFILE.format(base=base_image, version=HEAT_VERSION))
    (context / "constraints.txt").write_text(constraints_text())
    shutil.copyfile(HOST_CA_BUNDLE, context / "ca-bundle.crt")
    _podman_build(client, context, image)


def _podman_build(client: Any, context: Path, image: str) -> None:
    from podman import errors

    try:
        client.images.build(path=str(context), dockerfile="Containerfile", tag=image,
                            network_mode="host", rm=True, forcerm=True)
    except (errors.BuildError, errors.APIError) as exc:
        log = getattr(exc, "build_log", None) or []
        tail = [line if isinstance(line, str) else str(line) for line in list(log)[-8:]]
        raise exceptions.HeatError(
            f"Building the Heat image {image} failed: {exc}\n" + "".join(tail)
        ) from exc


def require(client: Any, image: str) -> None:
    """Raise :class:`HeatNotInstalled` naming the build command when ``image`` is missing."""
    if not client.images.exists(image):
        raise exceptions.HeatNotInstalled(f"The Heat image {image}", BUILD_COMMAND)
