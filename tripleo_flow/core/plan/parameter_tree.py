"""The stack tree of a Heat request, walked without Heat (pure, no I/O).

Heat fails a stack create deep in its nested stacks (minutes after it
started) when a nested template's parameter has no value.  This module walks
the tree the way Heat would build it, from the request made by
:func:`heatfiles.build_request`: the root template, the resource registry of
the environments (in order, later wins), each resource whose type is a
template, the member of a ``ResourceGroup`` and each type of a
``ResourceChain``.  A nested template's parameter gets its value from its
parent's properties, else from ``parameter_defaults``, else from its default;
the root's from the environments' ``parameters``, ``parameter_defaults`` or its
default.  A parameter with none of them is missing, named with the template
that declares it and the resources that reach it.

Values are evaluated only as far as the walk needs them (``get_param``, the
conditions' ``equals``/``not``/``and``/``or``/``contains``, ``if``); anything
else is unknown, and an unknown condition or group count keeps the resource
(the walk never skips what Heat might create).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tripleo_flow.common.safe_yaml import load_yaml
from tripleo_flow.core.plan import heatfiles

GROUP = "OS::Heat::ResourceGroup"
CHAIN = "OS::Heat::ResourceChain"
_FUNCTIONS = frozenset({
    "get_param", "get_attr", "get_resource", "get_file", "list_join", "str_replace",
    "str_replace_strict", "str_replace_vstrict", "str_split", "map_merge", "map_replace",
    "repeat", "digest", "resource_facade", "yaql", "if", "equals", "not", "and", "or",
    "contains", "filter", "make_url", "list_concat", "list_concat_unique", "Ref",
    "Fn::GetAtt", "Fn::Join", "Fn::Select", "Fn::Split", "Fn::Replace", "Fn::Base64",
    "Fn::GetAZs", "Fn::MemberListToMap", "Fn::ResourceFacade"})
_REGISTRY_HOPS = 10


class _Unknown:
    """A value the walk cannot compute (an attribute, a yaql result...)."""

    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN: Any = _Unknown()
_NO_VALUE: Any = object()  # AWS::NoValue: the property is left out


@dataclass(frozen=True)
class Missing:
    """A parameter of a template that gets no value in the stack tree."""

    parameter: str
    template: str
    path: str

    def __str__(self) -> str:
        where = f" (reached through {self.path})" if self.path else ""
        return f"{self.parameter} of {self.template}{where}"


@dataclass
class Tree:
    """What a walk found: parameters each reached template declares, and the missing ones."""

    declared: dict[str, list[str]] = field(default_factory=dict)
    missing: list[Missing] = field(default_factory=list)
    stacks: int = 0


@dataclass
class _Environment:
    registry: dict[str, Any]
    parameters: dict[str, Any]
    parameter_defaults: dict[str, Any]


def _merged_environment(request: Mapping[str, Any]) -> _Environment:
    env = _Environment({}, {}, {})
    files = request.get("files") or {}
    sources = [files[url] for url in request.get("environment_files") or [] if url in files]
    for text in [*sources, request.get("environment") or {}]:
        data = text if isinstance(text, Mapping) else load_yaml(text, "environment")
        if not isinstance(data, Mapping):
            continue
        registry = data.get("resource_registry")
        if isinstance(registry, Mapping):
            env.registry.update({k: v for k, v in registry.items() if k != "resources"})
        env.parameters.update(data.get("parameters") or {})
        env.parameter_defaults.update(data.get("parameter_defaults") or {})
    return env


def _function(node: Any) -> tuple[str, Any] | None:
    if isinstance(node, Mapping) and len(node) == 1:
        key = next(iter(node))
        if key in _FUNCTIONS:
            return key, node[key]
    return None


class _Walker:
    def __init__(self, request: Mapping[str, Any]) -> None:
        self.files: Mapping[str, str] = request.get("files") or {}
        self.env = _merged_environment(request)
        self.parsed: dict[str, Any] = {}
        self.tree = Tree()
        self.seen_missing: set[tuple[str, str]] = set()

    # -- values ------------------------------------------------------------

    def value(self, node: Any, values: Mapping[str, Any], conditions: Mapping[str, Any]) -> Any:
        call = _function(node)
        if call is None:
            if isinstance(node, Mapping):
                return {k: self.value(v, values, conditions) for k, v in node.items()}
            if isinstance(node, list):
                return [self.value(v, values, conditions) for v in node]
            return node
        name, args = call
        if name in ("get_param", "Ref"):
            return self._get_param(args, values)
        if name == "if" and isinstance(args, list) and len(args) == 3:
            test = self.condition(args[0], values, conditions)
            if test is UNKNOWN:
                return UNKNOWN
            return self.value(args[1] if test else args[2], values, conditions)
        if name in ("equals", "not", "and", "or", "contains"):
            return self.condition(node, values, conditions)
        return UNKNOWN

    @staticmethod
    def _get_param(args: Any, values: Mapping[str, Any]) -> Any:
        path = args if isinstance(args, list) else [args]
        if not path or not isinstance(path[0], str):
            return UNKNOWN
        if path[0] == "AWS::NoValue":
            return _NO_VALUE
        current = values.get(path[0], UNKNOWN)
        for key in path[1:]:
            if isinstance(current, Mapping) and isinstance(key, str) and key in current:
                current = current[key]
            elif isinstance(current, list) and isinstance(key, int) and 0 <= key < len(current):
                current = current[key]
            else:
                return UNKNOWN
        return current

    def condition(self, node: Any, values: Mapping[str, Any],
                  conditions: Mapping[str, Any], depth: int = 0) -> Any:
        """True, False or UNKNOWN: a condition (a name of the template's conditions or an
        expression)."""
        if depth > 20:
            return UNKNOWN
        if isinstance(node, bool):
            return node
        if isinstance(node, str):
            if node in conditions:
                return self.condition(conditions[node], values, conditions, depth + 1)
            return UNKNOWN
        call = _function(node)
        if call is None:
            return UNKNOWN
        name, args = call
        if name == "equals" and isinstance(args, list) and len(args) == 2:
            left, right = (self.value(a, values, conditions) for a in args)
            return UNKNOWN if UNKNOWN in (left, right) or _contains_unknown(
                [left, right]) else left == right
        if name == "not":
            inner = self.condition(_one(args), values, conditions, depth + 1)
            return UNKNOWN if inner is UNKNOWN else not inner
        if name in ("and", "or") and isinstance(args, list):
            results = [self.condition(a, values, conditions, depth + 1) for a in args]
            decisive = name == "or"  # True decides an "or", False an "and"
            if decisive in results:
                return decisive
            return UNKNOWN if UNKNOWN in results else not decisive
        if name == "contains" and isinstance(args, list) and len(args) == 2:
            item, seq = (self.value(a, values, conditions) for a in args)
            if _contains_unknown([item, seq]) or not isinstance(seq, list):
                return UNKNOWN
            return item in seq
        return UNKNOWN

    # -- templates ---------------------------------------------------------

    def template(self, url: str) -> Mapping[str, Any] | None:
        if url not in self.parsed:
            text = self.files.get(url)
            data: Any = None
            if isinstance(text, str):
                try:
                    data = json.loads(text)
                except ValueError:
                    data = load_yaml(text, heatfiles.object_name(url))
            self.parsed[url] = data if isinstance(data, Mapping) else None
        result: Mapping[str, Any] | None = self.parsed[url]
        return result

    def resolve(self, kind: Any) -> str | None:
        """The URL of the template a resource type stands for, or None (a built-in type)."""
        for _ in range(_REGISTRY_HOPS):
            if not isinstance(kind, str):
                return None
            if kind in self.files:
                return kind
            if kind not in self.env.registry:
                return None
            kind = self.env.registry[kind]
        return None

    def stack(self, url: str, template: Mapping[str, Any], passed: Mapping[str, Any] | None,
              path: str, ancestors: frozenset[str]) -> None:
        self.tree.stacks += 1
        name = heatfiles.object_name(url)
        values: dict[str, Any] = {}
        for param, schema in (template.get("parameters") or {}).items():
            self.tree.declared.setdefault(param, [])
            if name not in self.tree.declared[param]:
                self.tree.declared[param].append(name)
            if passed is not None and param in passed:
                values[param] = passed[param]
            elif passed is None and param in self.env.parameters:
                values[param] = self.env.parameters[param]
            elif param in self.env.parameter_defaults:
                values[param] = self.env.parameter_defaults[param]
            elif isinstance(schema, Mapping) and "default" in schema:
                values[param] = schema["default"]
            else:
                values[param] = UNKNOWN
                if (param, name) not in self.seen_missing:
                    self.seen_missing.add((param, name))
                    self.tree.missing.append(Missing(param, name, path))
        conditions = template.get("conditions") or {}
        if not isinstance(conditions, Mapping):
            conditions = {}
        for resource, body in (template.get("resources") or {}).items():
            if isinstance(body, Mapping):
                self.resource(resource, body, values, conditions, path, ancestors | {url})

    def resource(self, resource: str, body: Mapping[str, Any], values: Mapping[str, Any],
                 conditions: Mapping[str, Any], path: str, ancestors: frozenset[str]) -> None:
        if "condition" in body and self.condition(body["condition"], values, conditions) is False:
            return
        here = f"{path}/{resource}" if path else resource
        props = body.get("properties") or {}
        if not isinstance(props, Mapping):
            return
        kind = body.get("type")
        children: list[tuple[Any, Any, str]] = []
        if kind == GROUP:
            count = self.value(props.get("count", 1), values, conditions)
            definition = props.get("resource_def") or {}
            if count != 0 and isinstance(definition, Mapping):
                children.append((definition.get("type"), definition.get("properties"),
                                 f"{here}/0"))
        elif kind == CHAIN:
            kinds = self.value(props.get("resources"), values, conditions)
            for index, member in enumerate(kinds if isinstance(kinds, list) else []):
                children.append((member, props.get("resource_properties"), f"{here}/{index}"))
        else:
            children.append((kind, props, here))
        for child_kind, child_props, child_path in children:
            url = self.resolve(child_kind)
            template = self.template(url) if url else None
            if url is None or template is None or url in ancestors:
                continue
            passed = {}
            for key, raw in (child_props or {}).items():
                evaluated = self.value(raw, values, conditions)
                if evaluated is not _NO_VALUE:
                    passed[key] = evaluated
            self.stack(url, template, passed, child_path, ancestors)


def _one(args: Any) -> Any:
    return args[0] if isinstance(args, list) and len(args) == 1 else args


def _contains_unknown(node: Any) -> bool:
    if node is UNKNOWN:
        return True
    if isinstance(node, Mapping):
        return any(_contains_unknown(v) for v in node.values())
    if isinstance(node, list):
        return any(_contains_unknown(v) for v in node)
    return False


def walk(request: Mapping[str, Any], root_name: str = "overcloud.yaml") -> Tree:
    """Walk the stack tree of ``request`` (from :func:`heatfiles.build_request`).

    :param root_name: the root template's name in the plan (it travels as ``template``).
    :returns: the parameters declared by every template reached, and the
        missing ones in the order met (each parameter once per template).
    """
    walker = _Walker(request)
    root = request.get("template")
    if isinstance(root, Mapping):
        walker.stack(heatfiles.BASE_URL + root_name, root, None, "", frozenset())
    return walker.tree


