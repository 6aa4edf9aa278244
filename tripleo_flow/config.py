"""Configuration through oslo.config.

``tripleo-flow --config-file FILE`` (or ``/etc/tripleo-flow/tripleo-flow.conf``
and ``~/.config/tripleo-flow/tripleo-flow.conf`` when present) sets these
options; ``etc/tripleo-flow.conf.sample`` is generated from :func:`list_opts`
with ``oslo-config-generator --namespace tripleo_flow``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from oslo_config import cfg

from tripleo_flow.config_api import API_OPTS, LIMITS_OPTS

DEFAULT_OPTS = [
    cfg.StrOpt(
        "data_dir",
        help="Where local state lives (the local plan store, locks, executions). "
        "Default: $XDG_DATA_HOME/tripleo-flow or ~/.local/share/tripleo-flow.",
    ),
]

PLAN_STORE_OPTS = [
    cfg.StrOpt(
        "backend",
        default="local",
        choices=["local", "swift"],
        help="Where plans are kept: 'local' (a directory under data_dir) or 'swift'.",
    ),
    cfg.StrOpt("local_root", help="Directory of the local plan store (default: data_dir/plans)."),
    cfg.FloatOpt(
        "lock_timeout", default=120.0, help="Seconds to wait for a plan's write lock."
    ),
    cfg.StrOpt(
        "lock_url",
        help="tooz coordination URL for plan locks (default: [jobboard] backend_url when "
        "set, else file://data_dir/locks). Use redis:// or mysql:// when several hosts share "
        "one Swift.",
    ),
]

SWIFT_OPTS = [
    cfg.StrOpt("auth_url", help="Swift auth URL (tempauth v1: http://HOST:PORT/auth/v1.0; "
               "Keystone v3: http://HOST:5000/v3)."),
    cfg.StrOpt("auth_version", default="1", choices=["1", "3"], help="Auth version."),
    cfg.StrOpt("user", help="User (tempauth: account:user)."),
    cfg.StrOpt("key", secret=True, help="Password or key."),
    cfg.StrOpt("project_name", help="Keystone v3 project name."),
    cfg.StrOpt("user_domain_name", default="Default", help="Keystone v3 user domain."),
    cfg.StrOpt("project_domain_name", default="Default", help="Keystone v3 project domain."),
    cfg.IntOpt("upload_threads", default=8, help="Parallel uploads for template trees."),
    cfg.IntOpt("retries", default=3, help="Retries of a failed Swift request."),
]


WORKFLOWS_OPTS = [
    cfg.StrOpt(
        "connection",
        help="SQLAlchemy URL of the executions database (default: "
        "sqlite:///<data_dir>/executions.sqlite; MariaDB: mysql+pymysql://USER:PASS@HOST/DB).",
        secret=True,
    ),
    cfg.StrOpt(
        "workbooks_dir",
        help="Directory of user workbooks, kept beside the shipped ones "
        "(default: data_dir/workbooks).",
    ),
    cfg.IntOpt(
        "executor_threads", default=8, min=1,
        help="Threads that run the tasks of executions (and with-items items).",
    ),
]


#: Running workflows as jobs on a TaskFlow jobboard, claimed by conductors.
JOBBOARD_OPTS = [
    cfg.StrOpt(
        "backend_url", secret=True,
        help="TaskFlow jobboard that workflow runs are posted to as jobs, for "
        "'tripleo-flow conductor' processes to claim and run: redis://[:PASSWORD@]HOST:PORT[/DB] "
        "or zookeeper://HOST:PORT[,HOST:PORT...]. Unset (the default): workflows run in the "
        "process that starts them. Every process must share [workflows] connection (MariaDB "
        "when they are on several hosts); plan locks then default to this service.",
    ),
    cfg.StrOpt("namespace", default="tripleo-flow",
               help="Name of the board: the Redis key prefix, or the ZooKeeper path "
               "/NAMESPACE/jobs. Processes sharing jobs use the same one."),
    cfg.FloatOpt("claim_expiry", default=30.0, min=1.0,
                 help="Redis: seconds a conductor's claim on a job lasts unless its heartbeat "
                 "renews it; a conductor that died loses its jobs to the others after this. "
                 "Must exceed twice heartbeat_interval, so that a late heartbeat never lets "
                 "two conductors run one job. (ZooKeeper frees a dead conductor's jobs when "
                 "its session expires.)"),
    cfg.FloatOpt("heartbeat_interval", default=10.0, min=0.1,
                 help="Redis: seconds between a conductor's renewals of its claims."),
    cfg.FloatOpt("poll_interval", default=0.5, min=0.05,
                 help="Seconds between looks at the board (conductor) or at a running "
                 "execution's record (a 'workflow run' that waits)."),
]


HEAT_OPTS = [
    cfg.StrOpt("heat_type", default="processes",
               choices=["native", "processes", "container", "pod", "installed"],
               help="How the ephemeral Heat runs when a command does not say and its "
               "work dir (heat-dir) records none: a deployment's later commands (deploy "
               "again, scale, update, upgrade, launch heat, --restore-db) use the type "
               "its Heat dump was made with, so changing this never breaks a deployment "
               "made with another type."),
    cfg.BoolOpt("pace_leaves", default=False,
                help="Keep Heat's one-second wait after starting each leaf resource of a "
                "stack (heat-all/heat-engine as shipped). Default false: the native and "
                "processes types run Heat with that wait off (the same stack, created "
                "sooner; see tripleo_flow/heat/unpaced.py)."),
    cfg.BoolOpt("quick_rpc_replies", default=True,
                help="Look for the reply to an RPC call of Heat's services (heat-api asking "
                "heat-engine, an engine asking another; the processes type's RabbitMQ) after "
                "1 ms, then twice as long each time up to 0.5 s. False: oslo.messaging's own "
                "wait, a fixed 0.5 s between looks, so every call takes at least half a "
                "second (THT 18.0.0's stack took 23% longer). See "
                "tripleo_flow/heat/unpaced.py."),
    cfg.StrOpt("venv", help="Heat's own virtualenv (made by: tripleo-flow heat install). "
               "Default: $TRIPLEO_FLOW_HEAT_VENV, else data_dir/heat-venv."),
    cfg.StrOpt("python", help="Interpreter the Heat virtualenv is made with (default: the one "
               "running tripleo-flow)."),
    cfg.PortOpt("api_port",
                help="Fixed port of every launched Heat's API on 127.0.0.1 (tripleoclient's "
                "8006, say). Unset or 0 (the default): each launched Heat takes a free port "
                "of its own, recorded in its heat-dir (run.json, heatrc, clouds.yaml), so "
                "several Heats (two deployments, parameter-schema reads, a Heat launched "
                "with 'launch heat') run at once. With a fixed port only one Heat runs at a "
                "time: a launch while it is taken is refused."),
    cfg.FloatOpt("api_timeout", default=120.0,
                 help="Seconds to wait for a launched Heat to be ready (API and engine)."),
    cfg.StrOpt("database", default="sqlite", choices=["sqlite", "mariadb"],
               help="Database of a launched Heat: SQLite on a fast directory, or MariaDB."),
    cfg.StrOpt("sqlite_dir", help="Directory of the SQLite database (default: /dev/shm when "
               "writable, since SQLite on disk is fsync-bound, else the heat-launcher dir)."),
    cfg.StrOpt("mariadb_url", secret=True,
               help="Admin URL of the MariaDB server a Heat database and user are created on "
               "(mysql+pymysql://root:PASSWORD@127.0.0.1:3306). Needed when database=mariadb."),
    cfg.StrOpt("endpoint", help="Heat API URL of an installed Heat (heat_type installed), "
               "e.g. http://127.0.0.1:8004/v1/admin."),
    cfg.StrOpt("clouds_yaml", help="clouds.yaml that gets the 'heat' entry (default: "
               "~/.config/openstack/clouds.yaml)."),
    cfg.StrOpt("base_image", default="localhost/tripleo-flow/debian:bookworm",
               help="Local Debian base image (built by: tripleo-flow heat image build)."),
    cfg.StrOpt("image", default="localhost/tripleo-flow/heat:24.1.2",
               help="Local Heat image (built by: tripleo-flow heat image build). "
               "$TRIPLEO_FLOW_HEAT_IMAGE replaces the default."),
    cfg.StrOpt("services_image", default="localhost/tripleo-flow/heat-services:bookworm",
               help="Local image with MariaDB and RabbitMQ for a pod's own database and broker "
               "(built by: tripleo-flow heat image build)."),
    cfg.StrOpt("podman_url", help="Podman API socket URL (default: unix:///run/podman/podman.sock "
               "for root; started with 'podman system service' when absent)."),
    cfg.IntOpt("engine_workers", default=4, min=1,
               help="heat-engine workers of heat types processes and pod (heat-api and "
               "heat-engine on a private MariaDB and RabbitMQ). 4 created THT 18.0.0's stack "
               "fastest on 2 cores (pod: 154.5 s, against 367 s for one heat-all)."),
    cfg.IntOpt("schema_launches_max", default=1, min=1,
               help="Most ephemeral Heats (about 330 MB each) one process starts at once to "
               "read a plan's parameter schema when it is not cached; a further request "
               "waits for one to end, up to api_timeout seconds, then gets 503. More than "
               "1 needs api_port unset (each Heat on a port of its own)."),
    cfg.StrOpt("rabbitmq_url", secret=True, help="transport_url of an existing RabbitMQ for pod "
               "mode (default: the pod runs its own)."),
]

IRONIC_OPTS = [
    cfg.StrOpt("endpoint", help="Bare metal (Ironic) API URL of an existing Ironic, e.g. "
               "http://127.0.0.1:6385 (noauth). Unset: the Ironic launched in ironic_dir "
               "(tripleo-flow launch ironic)."),
    cfg.StrOpt("ironic_dir", help="Work directory of the local Ironic the node commands use "
               "when endpoint is unset (default: data_dir/ironic)."),
    cfg.StrOpt("venv", help="Ironic's own virtualenv (made by tools/setup-ironic.sh). "
               "Default: $TRIPLEO_FLOW_IRONIC_VENV, else data_dir/ironic-venv."),
    cfg.FloatOpt("api_timeout", default=60.0,
                 help="Seconds to wait for a launched Ironic's API to answer."),
    cfg.FloatOpt("wait_timeout", default=1800.0,
                 help="Seconds a node may take to reach the state an operation waits for "
                 "(manage, inspect, provide, clean)."),
    cfg.IntOpt("concurrency", default=8, min=1,
               help="Nodes a node workflow works on at the same time."),
]

#: How config-download is run (``deploy --run-ansible``).
ANSIBLE_OPTS = [
    cfg.StrOpt("venv", help="An Ansible virtualenv (made by tools/setup-ansible.sh: ansible "
               "with its collections, and tripleo-ansible) to run config-download with: "
               "its ansible-playbook, and tripleo-ansible's roles, modules and plugins "
               "from <venv>/share/ansible. Default: $TRIPLEO_FLOW_ANSIBLE_VENV, else the "
               "ansible-playbook beside tripleo-flow's Python or on PATH, without "
               "tripleo-ansible."),
    cfg.StrOpt("ssh_user", default="tripleo-admin",
               help="The user Ansible logs in as on the overcloud servers: config-download's "
               "inventory (ansible_ssh_user) and ansible.cfg (remote_user) name it. A "
               "deploy's overcloud_ssh_user (--overcloud-ssh-user) overrides it."),
    cfg.StrOpt("ssh_private_key",
               help="The private key file Ansible logs in with (config-download's "
               "ansible_ssh_private_key_file and ansible.cfg private_key_file). Default: "
               "none named, Ansible's own (ssh's default identities). A deploy's "
               "overcloud_ssh_key (--overcloud-ssh-key) overrides it."),
]


#: TripleO's validations (``validation run``; ``deploy --run-validations``).
VALIDATIONS_OPTS = [
    cfg.StrOpt("venv", help="The validations virtualenv (made by tools/setup-validations.sh: "
               "ansible-core, validations-libs, validations-common, tripleo-validations): its "
               "ansible-playbook runs the playbooks of <venv>/share/ansible/"
               "validation-playbooks. Default: $TRIPLEO_FLOW_VALIDATIONS_VENV, else "
               "~/.local/share/tripleo-flow/validations-venv."),
    cfg.ListOpt("validations_dirs", default=[],
                help="More directories of validation playbooks (each with the framework's "
                "metadata), searched before the virtualenv's; a name found twice is taken "
                "from the first."),
]


#: The control plane subnet that pre-provisioned servers' addresses come from
#: (``deploy --baremetal-deployment``); TripleO reads it from the undercloud.
CTLPLANE_OPTS = [
    cfg.StrOpt("cidr", default="192.168.24.0/24", help="The control plane subnet."),
    cfg.StrOpt("gateway_ip", default="192.168.24.1",
               help="Its gateway (also the default route of the servers)."),
    cfg.StrOpt("allocation_start", default="192.168.24.5",
               help="First address given to servers without a fixed_ip, and to the VIP."),
    cfg.StrOpt("allocation_end", default="192.168.24.24",
               help="Last address of the allocation pool."),
    cfg.ListOpt("dns_nameservers", default=["192.168.24.1"],
                help="DNS servers of the control plane subnet."),
    cfg.StrOpt("dns_domain", default="ctlplane.localdomain.",
               help="DNS domain of the control plane network."),
    cfg.IntOpt("mtu", default=1500, min=576, help="MTU of the control plane network."),
]


def list_opts() -> list[tuple[str, list[Any]]]:
    """Options for oslo-config-generator."""
    return [
        ("DEFAULT", DEFAULT_OPTS),
        ("plan_store", PLAN_STORE_OPTS),
        ("swift", SWIFT_OPTS),
        ("workflows", WORKFLOWS_OPTS),
        ("jobboard", JOBBOARD_OPTS),
        ("heat", HEAT_OPTS),
        ("ironic", IRONIC_OPTS),
        ("ansible", ANSIBLE_OPTS),
        ("validations", VALIDATIONS_OPTS),
        ("api", API_OPTS),
        ("limits", LIMITS_OPTS),
        ("ctlplane", CTLPLANE_OPTS),
    ]


def secret_values(conf: Any) -> set[str]:
    """The values of the options marked ``secret`` (Swift key, API token, database
    URLs...): what the workflow engine must mask wherever they appear."""
    from tripleo_flow.common import secret_masking

    found: set[str] = set()
    for group, opts in list_opts():
        section = conf if group == "DEFAULT" else getattr(conf, group, None)
        for opt in opts:
            if opt.secret and section is not None:
                value = getattr(section, opt.dest, None)
                found.update(secret_masking.leaves(value) if value else ())
    return found


#: Environment variables that give an option its default (a config file still wins).
ENVIRONMENT_DEFAULTS = {
    "TRIPLEO_FLOW_HEAT_VENV": ("heat", "venv"),
    "TRIPLEO_FLOW_HEAT_IMAGE": ("heat", "image"),
    "TRIPLEO_FLOW_IRONIC_VENV": ("ironic", "venv"),
    "TRIPLEO_FLOW_ANSIBLE_VENV": ("ansible", "venv"),
    "TRIPLEO_FLOW_VALIDATIONS_VENV": ("validations", "venv"),
}
#: The configuration file used when none is named on the command line.
CONFIG_FILE_ENV = "TRIPLEO_FLOW_CONFIG_FILE"


def new_conf() -> cfg.ConfigOpts:
    """A fresh ConfigOpts with every tripleo-flow option registered.

    The variables of :data:`ENVIRONMENT_DEFAULTS`, when set and not empty,
    replace the built-in defaults of their options.
    """
    conf = cfg.ConfigOpts()
    for group, opts in list_opts():
        conf.register_opts(opts, group=None if group == "DEFAULT" else group)
    for variable, (group, name) in ENVIRONMENT_DEFAULTS.items():
        value = os.environ.get(variable)
        if value:
            conf.set_default(name, value, group=group)
    return conf


def load(config_files: Sequence[str] = (), args: Sequence[str] = ()) -> cfg.ConfigOpts:
    """Build the configuration from ``config_files``; when empty, the file named by
    ``$TRIPLEO_FLOW_CONFIG_FILE``, else the default locations that exist."""
    conf = new_conf()
    from_env = os.environ.get(CONFIG_FILE_ENV)
    files = list(config_files) or ([from_env] if from_env else []) or [
        f for f in ("/etc/tripleo-flow/tripleo-flow.conf",
                    str(Path.home() / ".config/tripleo-flow/tripleo-flow.conf"))
        if os.path.isfile(f)
    ]
    conf(list(args), project="tripleo-flow", default_config_files=files,
         default_config_dirs=[], validate_default_values=True)
    return conf


def data_dir(conf: cfg.ConfigOpts) -> Path:
    """The state directory: data_dir, $XDG_DATA_HOME/tripleo-flow or ~/.local/share/..."""
    if conf.data_dir:
        return Path(conf.data_dir)
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "share"
    return base / "tripleo-flow"
