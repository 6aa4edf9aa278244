"""Render the jinja2 templates of a TripleO plan.

TripleO keeps parts of its Heat templates as jinja2 so that they follow the
roles (``roles_data.yaml``) and networks (``network_data.yaml``) of a plan.
Three kinds of templates are rendered:

``*.role.j2.yaml``
    once per role, into ``<dir>/<role name lower>-<stem>.yaml``
    (``puppet/role.role.j2.yaml`` -> ``puppet/controller-role.yaml``).  Under
    ``network/config`` the file is ``<dir>/<role name lower>.yaml`` or the
    role's ``deprecated_nic_config_name``.  Variables: ``role`` (the role's
    mapping, or just its name for legacy templates that never use
    ``role.<attribute>``) and ``networks``.
``*.network.j2.yaml``
    once per enabled network (``enabled`` missing means true); ``network`` (or
    ``port`` in a ``ports`` directory) in the file name is replaced by the
    network's ``name_lower``.  Variable: ``network``.
other ``*.j2.yaml``
    once, into the same path without ``.j2``.  Variables: ``roles`` and
    ``networks`` (all networks, each with ``idx`` and ``name_lower``).

Output paths listed under ``name:`` in ``j2_excludes.yaml`` are skipped.
``{% include %}`` and ``{% import %}`` resolve against the template's own
directory first, then the plan root.  Every output must parse as YAML.

Templates render in :class:`~tripleo_flow.common.template_sandbox.TemplateSandbox`:
no Python internals, read-only input, no value or output larger than
``max_size`` characters (``[limits] render_max_size``), and the whole plan
rendered within ``timeout`` seconds (``[limits] render_timeout``).
"""

from __future__ import annotations

import copy
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import TracebackType
from typing import Any, NoReturn

import jinja2
import yaml

from tripleo_flow import exceptions
from tripleo_flow.common import time_budget
from tripleo_flow.common.safe_yaml import check_yaml_text, describe_yaml_error, load_yaml
from tripleo_flow.common.template_sandbox import DEFAULT_MAX_SIZE, SecurityError, TemplateSandbox

#: Default of ``[limits] render_timeout``: seconds a whole plan may take to render
#: (tripleo-heat-templates 18.0.0 takes about 2 s on one core).
DEFAULT_TIMEOUT = 60.0

ROLES_FILE = "roles_data.yaml"
NETWORKS_FILE = "network_data.yaml"
EXCLUDES_FILE = "j2_excludes.yaml"

ROLE_SUFFIX = ".role.j2.yaml"
NETWORK_SUFFIX = ".network.j2.yaml"
J2_SUFFIX = ".j2.yaml"

#: A template that reads role attributes gets the role mapping, else its name.
_ROLE_ATTRIBUTE = re.compile(r"\brole\s*(\.|\[)")


def _decode(data: bytes | str, path: str) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise exceptions.InvalidTemplate(path, f"not UTF-8 text ({exc.reason})") from exc


def _load_list(files: Mapping[str, bytes], path: str, what: str) -> list[dict[str, Any]]:
    if path not in files:
        return []
    data = load_yaml(files[path], path)
    if data is None:
        return []
    if not isinstance(data, list):
        raise exceptions.InvalidTemplate(
            path, f"must be a list of {what}, not {type(data).__name__}."
        )
    for index, item in enumerate(data, start=1):
        if not isinstance(item, dict):
            raise exceptions.InvalidTemplate(path, f"entry {index} is not a mapping: {item!r}.")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise exceptions.InvalidTemplate(
                path, f"entry {index} has no 'name' (every {what[:-1]} needs one)."
            )
    return data


def load_roles(files: Mapping[str, bytes], path: str = ROLES_FILE) -> list[dict[str, Any]]:
    """The roles of a plan, as listed in ``roles_data.yaml`` (``[]`` if absent).

    :raises InvalidTemplate: on malformed YAML, a non-list document or an
        entry that is not a mapping with a ``name``.
    """
    return _load_list(files, path, "roles")


def load_networks(files: Mapping[str, bytes], path: str = NETWORKS_FILE) -> list[dict[str, Any]]:
    """The networks of a plan, as listed in ``network_data.yaml`` (``[]`` if absent).

    Disabled networks are included; see :func:`enabled_networks`.

    :raises InvalidTemplate: as :func:`load_roles`.
    """
    return _load_list(files, path, "networks")


def is_enabled(network: Mapping[str, Any]) -> bool:
    """Whether ``network`` is enabled (``enabled`` missing means true)."""
    return network.get("enabled") is not False


def enabled_networks(networks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The enabled ones among ``networks``."""
    return [network for network in networks if is_enabled(network)]


def load_excludes(files: Mapping[str, bytes], path: str = EXCLUDES_FILE) -> set[str]:
    """Output paths listed under ``name:`` in ``j2_excludes.yaml``."""
    if path not in files:
        return set()
    data = load_yaml(files[path], path)
    if data is None:
        return set()
    if not isinstance(data, dict):
        raise exceptions.InvalidTemplate(path, "must be a mapping with a 'name' list.")
    names = data.get("name") or []
    if not isinstance(names, list):
        raise exceptions.InvalidTemplate(path, "'name' must be a list of paths.")
    return {str(name) for name in names if name is not None}


class PlanLoader(jinja2.BaseLoader):
    """Resolve includes from the plan's files: the template's directory, then the root."""

    def __init__(self, files: Mapping[str, bytes], directory: str,
                 looked: set[str] | None = None) -> None:
        self.files = files
        self.searchpath = [directory, ""] if directory else [""]
        #: Every path looked for, found or not (None: not kept).
        self.looked = looked

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        pieces = jinja2.loaders.split_template_path(template)
        for base in self.searchpath:
            path = posixpath.join(base, *pieces) if base else posixpath.join(*pieces)
            if self.looked is not None:
                self.looked.add(path)
            if path in self.files:
                return _decode(self.files[path], path), path, lambda: True
        raise jinja2.TemplateNotFound(template)


def _raise_helper(message: str) -> NoReturn:
    raise jinja2.TemplateError(message)


def _template_line(tb: TracebackType | None, files: Mapping[str, bytes]) -> tuple[str, int]:
    """The innermost template file and line in a traceback jinja2 rewrote."""
    where = ("", 0)
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name in files:
            where = (name, tb.tb_lineno)
        tb = tb.tb_next
    return where


class _Renderer:
    def __init__(self, files: Mapping[str, bytes], max_size: int = DEFAULT_MAX_SIZE,
                 looked: set[str] | None = None) -> None:
        self.files = files
        self.max_size = max_size
        self.looked = looked
        self._environments: dict[str, TemplateSandbox] = {}
        self._templates: dict[str, jinja2.Template] = {}

    def environment(self, directory: str) -> TemplateSandbox:
        env = self._environments.get(directory)
        if env is None:
            env = TemplateSandbox(
                loader=PlanLoader(self.files, directory, self.looked),
                keep_trailing_newline=True,
                max_size=self.max_size,
            )
            env.globals["raise"] = _raise_helper
            self._environments[directory] = env
        return env

    def _refused(self, source: str, exc: SecurityError) -> NoReturn:
        path, line = _template_line(exc.__traceback__, self.files)
        if path and path != source:
            where = f"at line {line} of {path} (included)"
        else:
            where = f"at line {line}" if line else "(no line: the template as a whole)"
        reason = str(exc).rstrip(".")
        raise exceptions.InvalidTemplate(
            source, f"refused by the template sandbox {where}: {reason}. Plan templates may "
            "not reach Python internals, change their input data or build values over "
            "[limits] render_max_size; remove that expression."
        ) from exc

    def _syntax_error(self, source: str, exc: jinja2.TemplateSyntaxError) -> NoReturn:
        culprit = exc.filename or exc.name
        where = f" in {culprit}" if culprit and culprit != source else ""
        raise exceptions.InvalidTemplate(
            source, f"jinja2 syntax error{where} at line {exc.lineno}: {exc.message}"
        ) from exc

    def template(self, source: str) -> jinja2.Template:
        """The compiled template of ``source`` (compiled once per render)."""
        template = self._templates.get(source)
        if template is None:
            text = _decode(self.files[source], source)
            env = self.environment(posixpath.dirname(source))
            try:
                code = env.compile(text, name=source, filename=source)
                template = env.template_class.from_code(env, code, env.make_globals(None))
            except jinja2.TemplateSyntaxError as exc:
                self._syntax_error(source, exc)
            except SecurityError as exc:
                self._refused(source, exc)
            except time_budget.TimeLimitExceeded as exc:  # folding constants
                self._too_long(source, exc)
            self._templates[source] = template
        return template

    def _too_long(self, source: str, exc: time_budget.TimeLimitExceeded) -> NoReturn:
        path, line = _template_line(exc.__traceback__, self.files)
        where = f"at line {line} of {path}" if path else f"in {source}"
        raise exceptions.InvalidTemplate(
            source, f"rendering the plan was stopped {where}: {exc}. A template's loops "
            "or macros run too long; make them smaller, or raise [limits] render_timeout "
            "in the configuration of what renders the plan."
        ) from exc

    def render(self, source: str, out_path: str, data: Mapping[str, Any]) -> bytes:
        directory = posixpath.dirname(source)
        template = self.template(source)
        self.environment(directory).freeze(data)
        try:
            rendered = template.render(**data)
        except time_budget.TimeLimitExceeded as exc:
            self._too_long(source, exc)
        except jinja2.TemplateSyntaxError as exc:  # in an included template
            self._syntax_error(source, exc)
        except SecurityError as exc:
            self._refused(source, exc)
        except jinja2.TemplateNotFound as exc:
            looked = f"{directory}/ and the plan root" if directory else "the plan root"
            raise exceptions.InvalidTemplate(
                source, f"included template {exc.name!r} not found (looked in {looked})."
            ) from exc
        except jinja2.TemplateError as exc:
            raise exceptions.InvalidTemplate(
                source, f"rendering {out_path} failed: {exc}"
            ) from exc
        except Exception as exc:  # a template tripping over unexpected data
            raise exceptions.InvalidTemplate(
                source, f"rendering {out_path} failed: {type(exc).__name__}: {exc}"
            ) from exc
        try:
            check_yaml_text(rendered)
        except yaml.YAMLError as exc:
            raise exceptions.InvalidTemplate(
                out_path, f"rendered from {source} but is not valid YAML: "
                f"{describe_yaml_error(exc)}"
            ) from exc
        return rendered.encode("utf-8")


def role_output_path(source: str, role: Mapping[str, Any]) -> str:
    """Where the role template ``source`` is rendered for ``role``."""
    directory, base = posixpath.split(source)
    name = str(role["name"]).lower()
    if "network/config" in directory:
        out = role.get("deprecated_nic_config_name") or f"{name}.yaml"
    else:
        out = f"{name}-{base[: -len(ROLE_SUFFIX)]}.yaml"
    return posixpath.join(directory, out)


def network_output_path(source: str, network: Mapping[str, Any]) -> str:
    """Where the network template ``source`` is rendered for ``network``."""
    directory, base = posixpath.split(source)
    out = base[: -len(NETWORK_SUFFIX)] + ".yaml"
    token = "port" if directory.endswith("ports") else "network"
    if token not in out:
        raise exceptions.InvalidTemplate(
            source,
            f"a network template's name must contain {token!r}, which is replaced by each "
            f"network's name_lower (e.g. {token}.network.j2.yaml).",
        )
    out = out.replace(token, str(network["name_lower"]))
    return posixpath.join(directory, out)


def _hidden(path: str) -> bool:
    return any(part.startswith(".") for part in path.split("/"))


def _prepare_networks(networks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    prepared = copy.deepcopy(networks)
    for index, network in enumerate(prepared):
        network["idx"] = index
        if not network.get("name_lower"):
            network["name_lower"] = str(network["name"]).lower()
    return prepared


def templates(names: Iterable[str]) -> list[str]:
    """The templates :func:`render_plan` renders among a plan's files ``names``."""
    return sorted(n for n in names if n.endswith(J2_SUFFIX) and not _hidden(n))


def render_inputs(names: Iterable[str], *, roles_file: str = ROLES_FILE,
                  networks_file: str = NETWORKS_FILE,
                  excludes_file: str = EXCLUDES_FILE) -> list[str]:
    """Which of a plan's files ``names`` :func:`render_plan` reads (its templates'
    includes aside): the data files and every template it renders."""
    names = list(names)
    data = {roles_file, networks_file, excludes_file}
    return sorted({n for n in names if n in data} | set(templates(names)))


class Rendered(Mapping[str, bytes]):
    """A plan's files with the outputs of a render in place of the ones it holds
    (read from ``files`` only when asked for)."""

    def __init__(self, files: Mapping[str, bytes], outputs: Mapping[str, bytes]) -> None:
        self.files, self.outputs = files, outputs

    def __getitem__(self, name: str) -> bytes:
        return self.outputs[name] if name in self.outputs else self.files[name]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*self.files, *self.outputs}))

    def __len__(self) -> int:
        return len({*self.files, *self.outputs})


def render_plan(
    files: Mapping[str, bytes],
    *,
    roles_file: str = ROLES_FILE,
    networks_file: str = NETWORKS_FILE,
    excludes_file: str = EXCLUDES_FILE,
    max_size: int = DEFAULT_MAX_SIZE,
    timeout: float = DEFAULT_TIMEOUT,
    reads: set[str] | None = None,
) -> dict[str, bytes]:
    """Render every j2 template of a plan.

    :param files: every file of the plan, path -> content.
    :param roles_file: the roles data file (a plan without it renders nothing,
        as in TripleO).
    :param networks_file: the network data file (optional: no networks).
    :param excludes_file: the file listing output paths not to render.
    :param max_size: the largest value or output, in characters, a template
        may build (``[limits] render_max_size``).
    :param timeout: seconds the whole render may take (``[limits] render_timeout``;
        0: no limit).
    :param reads: filled (when given) with the name of every file whose content or
        absence the render depended on: the data files, every template it rendered,
        every path an include or import looked for.  Files with the same names and
        contents render the same, whatever else the plan holds.
    :returns: the rendered files, path -> content.
    :raises InvalidTemplate: naming the file at fault, for malformed data
        files, jinja2 errors (with their line), missing includes, outputs
        that are not valid YAML, what the sandbox refuses (with its line), and
        a render that runs past ``timeout``.
    """
    looked = set() if reads is None else reads
    looked.add(roles_file)
    if roles_file not in files:
        return {}
    with time_budget.limit(timeout, "[limits] render_timeout"):
        return _render_all(files, roles_file, networks_file, excludes_file, max_size,
                           looked)


def _render_all(files: Mapping[str, bytes], roles_file: str, networks_file: str,
                excludes_file: str, max_size: int, looked: set[str]) -> dict[str, bytes]:
    looked.update((networks_file, excludes_file))
    roles = copy.deepcopy(load_roles(files, roles_file))
    networks = _prepare_networks(load_networks(files, networks_file))
    enabled = enabled_networks(networks)
    excludes = load_excludes(files, excludes_file)
    renderer = _Renderer(files, max_size, looked)
    outputs: dict[str, bytes] = {}
    origin: dict[str, str] = {}

    def emit(source: str, out_path: str, data: Mapping[str, Any]) -> None:
        if out_path in excludes:
            return
        if out_path in origin:
            raise exceptions.InvalidTemplate(
                source, f"renders {out_path}, which {origin[out_path]} renders too."
            )
        origin[out_path] = source
        # each template gets its own copy: one cannot change what the next sees
        outputs[out_path] = renderer.render(source, out_path, copy.deepcopy(data))

    for source in templates(files):
        looked.add(source)
        if source.endswith(ROLE_SUFFIX):
            text = _decode(files[source], source)
            by_mapping = bool(_ROLE_ATTRIBUTE.search(text))
            for role in roles:
                data = {"role": role if by_mapping else role["name"], "networks": networks}
                emit(source, role_output_path(source, role), data)
        elif source.endswith(NETWORK_SUFFIX):
            for network in enabled:
                emit(source, network_output_path(source, network), {"network": network})
        else:
            emit(source, source[: -len(J2_SUFFIX)] + ".yaml",
                 {"roles": roles, "networks": networks})
    return outputs
