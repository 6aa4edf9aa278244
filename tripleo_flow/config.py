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

#: The default of ``[api] executions_page_max`` (the OpenAPI schema of ``limit`` says it).
EXECUTIONS_PAGE_MAX = 1000

API_OPTS = [
    cfg.HostAddressOpt("host", default="127.0.0.1",
                       help="Address the HTTP API (tripleo-flow api serve) listens on."),
    cfg.PortOpt("port", default=8787, help="Port of the HTTP API."),
    cfg.StrOpt("auth_token", secret=True,
               help="Token clients send as X-Auth-Token (when auth_strategy is token). "
               "Requests without it get 401; the API refuses to start without one."),
    cfg.StrOpt("auth_strategy", default="token", choices=["token", "keystone"],
               help="'token' checks auth_token; 'keystone' validates tokens with "
               "keystonemiddleware (options in [keystone_authtoken]; pip install "
               "keystonemiddleware)."),
    cfg.IntOpt("threads", default=8, min=1, help="Request threads of the WSGI server."),
    cfg.ListOpt("reader_roles", default=["reader", "member", "admin"],
                help="With auth_strategy keystone: a token needs one of these roles (or a "
                "writer role) to read (GET)."),
    cfg.ListOpt("writer_roles", default=["member", "admin"],
                help="With auth_strategy keystone: a token needs one of these roles to "
                "change anything (POST, PUT, PATCH, DELETE)."),
    cfg.ListOpt("project_ids", default=[],
                help="With auth_strategy keystone: accept only tokens scoped to one of these "
                "project ids (empty: any project)."),
    cfg.IntOpt("max_upload_size", default=256 << 20, min=0,
               help="Largest request body in bytes (an uploaded or plan .tar.gz); larger "
               "ones get 413 and nothing is kept. 0 means no limit."),
    cfg.IntOpt("backup_passphrase_min_length", default=12, min=1,
               help="Fewest characters of the passphrase a backup made over the HTTP API "
               "(POST /v1/backups) is encrypted with; a shorter one, or none, is refused "
               "(400): a backup holds every password of the cloud, and only an encrypted "
               "one may leave the server."),
    cfg.IntOpt("max_stored_backups", default=10, min=1,
               help="Most backups the server keeps (POST /v1/backups); one more is refused "
               "(409) until one is deleted: each holds the whole data directory."),
    cfg.IntOpt("stale_backup_age", default=3600, min=1,
               help="Seconds after which the partial file of a backup being written to "
               "the server's backups directory is stale and removed, at the next backup "
               "made or listed, also when the process writing it still runs; one whose "
               "process has ended (killed while writing) is removed at once."),
    cfg.IntOpt("connection_limit", default=500, min=1,
               help="Most connections the HTTP API keeps open at once (idle, still sending "
               "their request, or streaming events); further ones wait until one closes. "
               "Each needs a file descriptor: keep it below the process's open-files "
               "limit (ulimit -n)."),
    cfg.IntOpt("connections_per_client", default=32, min=0,
               help="Most connections one client address may hold open at once (part of "
               "connection_limit): a further one from that address gets 503 at once and is "
               "closed, so that one client's idle or half-open connections cannot keep "
               "others out. Behind a proxy every client has the proxy's address: raise it "
               "there. 0 means no limit."),
    cfg.IntOpt("client_ipv6_prefix", default=64, min=1, max=128,
               help="IPv6 clients are counted by network for connections_per_client: "
               "the addresses sharing their first this many bits are one client (a "
               "/64 is one site's: its holder may use any address in it). IPv4 "
               "clients are counted by address (an IPv4-mapped IPv6 address as its "
               "IPv4 one)."),
    cfg.IntOpt("channel_timeout", default=60, min=1,
               help="Seconds an idle connection (no request running, nothing arriving) is "
               "kept open before the server closes it."),
    cfg.FloatOpt("header_timeout", default=10.0, min=0,
                 help="Seconds a client has to send a request's headers, from the "
                 "connection's opening or the request's first byte; a connection still "
                 "sending them then is closed, so that half-open connections cannot fill "
                 "connection_limit. 0 means no limit."),
    cfg.IntOpt("max_event_streams", default=4, min=1,
               help="Most execution event streams (GET /v1/executions/{id}/events) open "
               "at once: each holds a request thread until its execution ends or its "
               "client leaves. Always kept below threads, so that other requests find a "
               "thread; a further stream gets 503."),
    cfg.IntOpt("launched_heats_max", default=2, min=0,
               help="Most Heats that workflows started over the HTTP API launch to run on "
               "after their execution (tripleo.heat.launch, tripleo.heat.restore_db) "
               "running at once on this server; each holds memory (330 MB for native, "
               "more for processes) until tripleo.heat.kill. A further start is refused "
               "(409) naming the Heats that run. 0 refuses every such launch over HTTP. "
               "Deployments' own Heats (stopped with their execution) and the CLI are not "
               "counted."),
    cfg.IntOpt("executions_page_size", default=100, min=1,
               help="Executions on a page of GET /v1/executions (and execution list) "
               "when the request names no limit."),
    cfg.IntOpt("executions_page_max", default=EXECUTIONS_PAGE_MAX, min=1,
               help="Most executions a request may ask for on one page (limit); a larger "
               "limit is refused (400)."),
    cfg.IntOpt("executions_page_max_bytes", default=8 << 20, min=0,
               help="Largest page of GET /v1/executions (and execution list), in bytes "
               "of the executions' stored records (input, output, error): a page ends "
               "before the execution that would take it past this, and always holds "
               "one; its next link (--marker) names the rest. The records past it are "
               "not read. 0 means no limit but the page size."),
    cfg.IntOpt("max_json_size", default=8 << 20, min=0,
               help="Largest JSON request body in bytes (workflow inputs, parameters, "
               "environment files); a larger one gets 413 before it is read. 0 means no "
               "limit."),
    cfg.IntOpt("upload_ttl", default=86400, min=0,
               help="Seconds an upload (POST /v1/uploads) is kept; older ones are deleted "
               "when the server starts and whenever a new upload arrives. 0 keeps them "
               "until they are deleted with DELETE /v1/uploads/{id}."),
    cfg.IntOpt("idempotency_key_ttl", default=86400, min=1,
               help="Seconds an Idempotency-Key of a workflow start is remembered (in the "
               "executions database, so API servers sharing it share keys); a start with "
               "an expired key starts a new execution."),
    cfg.ListOpt("allowed_paths", default=[],
                help="Server directories a workflow started over the HTTP API may read "
                "templates from (an input-path input) or use as a work directory, besides "
                "uploads (POST /v1/uploads). Empty (the default): uploads only. Outputs "
                "always go to the server's download area (GET /v1/downloads/{id}), kept "
                "upload_ttl seconds."),
    cfg.BoolOpt("allow_plan_code", default=False,
                help="Let workflows started over the HTTP API run actions that run code "
                "taken from the plan on this server (deploy with run_ansible: "
                "ansible-playbook on the plan's config-download, whose tasks run here with "
                "ansible_connection local, delegate_to localhost or a lookup plugin). "
                "Off (the default), such an execution is refused before the action runs. "
                "Turn it on only for a server whose every API writer may run any code as "
                "the user this server runs as. The CLI and the Python API are not "
                "concerned."),
    cfg.BoolOpt("allow_outbound_actions", default=False,
                help="Let workflows started over the HTTP API run the actions that "
                "connect from this server to a host the workbook names, by a protocol "
                "other than HTTP: std.ssh (runs a command there) and std.email (sends mail "
                "through an SMTP server). They reach whatever this server reaches (its "
                "own network, services on localhost). Off (the default), such an "
                "execution is refused before the action runs. The CLI and the Python API "
                "are not concerned."),
]

LIMITS_OPTS = [
    cfg.IntOpt("yaml_max_nodes", default=1_000_000, min=1,
               help="Largest YAML or JSON document accepted (plan-environment, templates, "
               "parameter files, workbooks, yaml_parse, request bodies), counted in nodes "
               "after alias expansion: a 'billion laughs' document is refused, not expanded."),
    cfg.IntOpt("yaml_max_depth", default=100, min=1,
               help="Deepest nesting of mappings and lists accepted in a YAML or JSON document "
               "(workflow inputs, parameters, templates)."),
    cfg.IntOpt("archive_max_size", default=128 << 20, min=1,
               help="Largest total uncompressed size, in bytes, of a plan tarball's members "
               "(a tripleo-heat-templates tree is about 6 MB)."),
    cfg.IntOpt("archive_max_members", default=20_000, min=1,
               help="Most members a plan tarball may hold (a tripleo-heat-templates tree has "
               "about 1,800)."),
    cfg.IntOpt("workbook_max_size", default=1 << 20, min=1,
               help="Largest workbook accepted, in bytes."),
    cfg.IntOpt("workbook_max_tasks", default=1000, min=1,
               help="Most tasks a workbook may declare, over all its workflows."),
    cfg.IntOpt("render_max_size", default=16 << 20, min=1,
               help="Largest string, in characters, that rendering a plan template (jinja2) "
               "may build, including constant folding while a template is checked; also the "
               "largest value one workflow expression (Jinja or YAQL, in bytes) may build."),
    cfg.FloatOpt("render_timeout", default=60.0, min=0,
                 help="Seconds rendering a plan's templates (jinja2) may take, all of them: "
                 "a render still running then stops with an error naming the template and "
                 "line, and frees its thread (tripleo-heat-templates 18.0.0 renders in about "
                 "2 s). 0 means no limit."),
    cfg.FloatOpt("expression_timeout", default=10.0, min=0,
                 help="Seconds one workflow expression (Jinja or YAQL) may take: one still "
                 "running then fails its task with an error naming this option. 0 means no "
                 "limit."),
    cfg.IntOpt("expression_max_items", default=100_000, min=1,
               help="Most items a YAQL workflow expression may build or walk in one "
               "collection (range(), select(), ...)."),
    cfg.IntOpt("input_max_items", default=100_000, min=1,
               help="Most entries one mapping or list in a workflow execution's inputs "
               "or environment may hold (parameter set of that many parameters, a node "
               "list...), at any depth: a larger one is refused before the execution is "
               "recorded. YAQL expressions walk no more than expression_max_items anyway."),
    cfg.IntOpt("input_max_size", default=2 << 20, min=1,
               help="Largest input of a workflow execution (all its values together), "
               "and largest environment (env), in bytes of the JSON the executions "
               "database stores: a larger one is refused (400 over HTTP) before the "
               "execution is recorded, whoever starts it. Its record keeps the input "
               "several times over (task inputs, published values, output), so this "
               "bounds what one execution adds to the database. The inputs of shipped "
               "workflows whose actions take at most parameters_max_size (parameter "
               "values, user environment files) are checked against it then too."),
    cfg.IntOpt("parameters_max_size", default=1 << 20, min=1,
               help="Largest parameter values one change may set, together, and largest "
               "user environment file (with the files it brings), in characters of their "
               "JSON: a larger one is refused before anything is written. Every later "
               "change of the plan reads and writes its plan-environment whole."),
    cfg.IntOpt("plan_history_max", default=100, min=2,
               help="Versions kept of each object of a plan (its plan-environment above all), "
               "the current one included; the oldest is pruned when a new version is "
               "written. At least 2: undoing a change reads the version before it."),
    cfg.IntOpt("nodes_max", default=1000, min=1,
               help="Most nodes one node import file (instackenv.json, nodes YAML) may "
               "describe, most servers (role counts) one baremetal deployment file "
               "may ask for, and the largest role count a plan may set (a role's "
               "CountDefault in roles_data.yaml, a <Role>Count parameter value)."),
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
