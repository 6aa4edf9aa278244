"""Whether building a composed YAML document can fail, without building it.

:func:`tripleo_flow.common.safe_yaml.check_yaml` checks a file as a load would (the
plan create checks every YAML file of a template tree, the render every file it
renders) but builds no Python objects when :func:`builds` shows that building
would succeed: half the time of a load.
"""

from __future__ import annotations

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"

#: Scalar tags whose building can fail (a bad explicit ``!!bool``, a date that does
#: not exist, a number too long for ``int()``): :func:`builds` tries each such scalar.
_TRIED_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("bool", "int", "float", "timestamp"))
_STR_TAGS = frozenset(("tag:yaml.org,2002:str", "tag:yaml.org,2002:null"))


def builds(loader: yaml.SafeLoader, root: Node) -> bool:
    """Whether ``loader.construct_document(root)`` surely succeeds.

    True when every mapping and list has its plain tag, every key is a scalar (no
    merge key) and every scalar is a string, a null, or a bool, number or date whose
    own constructor succeeds; otherwise building is left to find the error.  The
    graph is acyclic and within the limits (checked before).
    """
    constructors = loader.yaml_constructors
    seen: set[int] = set()
    todo = [root]
    while todo:
        node = todo.pop()
        kind, tag = type(node), node.tag
        if kind is ScalarNode:
            if tag in _STR_TAGS:
                continue
            if tag not in _TRIED_TAGS:
                return False
            try:  # a plain function of the node: the loader's state is left alone
                constructors[tag](loader, node)
            except Exception:
                return False
        elif id(node) in seen:
            continue  # an alias of a collection already walked
        elif kind is MappingNode and tag == _MAP_TAG:
            seen.add(id(node))
            for key, value in node.value:
                if type(key) is not ScalarNode:
                    return False
                todo.append(key)
                todo.append(value)
        elif kind is SequenceNode and tag == _SEQ_TAG:
            seen.add(id(node))
            todo.extend(node.value)
        else:
            return False
    return True
