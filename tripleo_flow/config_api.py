"""The options of ``[api]`` (the HTTP API server: address, TLS, authentication,
threads, paging) and ``[limits]`` (what any interface accepts: sizes, depths, counts,
time budgets); :mod:`tripleo_flow.config` registers them with the others."""

from __future__ import annotations

from oslo_config import cfg

#: The default of ``[api] executions_page_max`` (the OpenAPI schema of ``limit`` says it).
EXECUTIONS_PAGE_MAX = 1000
#: The default of ``[api] action_executions_allowed``: the actions of the shipped
#: one-action workflows (``tripleo_flow.client.workbooks.ACTION_WORKFLOWS``).
ACTION_EXECUTIONS_ALLOWED = (
    "heat.launch", "heat.kill", "heat.dump_db", "heat.restore_db", "parameters.update",
    "parameters.reset", "passwords.rotate", "plan.delete", "plan.restore",
    "templates.process", "plan.export", "capabilities.update", "environments.add",
    "environments.remove", "deployed_servers.update")

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
               "after their execution (tripleo.heat.launch, tripleo.heat.restore_db, and "
               "the action executions of heat.launch and heat.restore_db) "
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
    cfg.ListOpt("action_executions_allowed", default=list(ACTION_EXECUTIONS_ALLOWED),
                help="The actions an HTTP API user may run as an action execution (POST "
                "/v1/action_executions, or a shipped workflow that runs one action, such "
                "as tripleo.heat.launch); any other is refused (400) before anything "
                "starts. The default lists those the shipped one-action workflows run. "
                "Every input of a listed action that names a server path is checked as a "
                "workflow's (uploads, the work and download areas, allowed_paths); std.* "
                "actions are refused whatever this says. The CLI and the Python API are "
                "not concerned."),
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
