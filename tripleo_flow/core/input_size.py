"""The size of a workflow execution's input, checked before the execution is recorded.

An execution record keeps its input several times over (the input itself, the
inputs and context of the tasks that read it, what they publish, the output), so
a value the workflow's own action would refuse still costs its record many
times its size.  :func:`check_execution_input` refuses, before anything is
written, an input or environment over ``[limits] input_max_size`` (in bytes of
the JSON the executions database stores: a non-ASCII character is written as a
``\\uXXXX`` escape), and the inputs of the shipped workflows whose actions take
at most ``[limits] parameters_max_size`` (parameter values, user environment
files) over that limit, with the action's own message.
"""

from __future__ import annotations

from collections.abc import Mapping

from tripleo_flow import exceptions
from tripleo_flow.core import validation

#: The default of ``[limits] input_max_size``: two parameter changes of the largest
#: size ``[limits] parameters_max_size`` allows by default, or a deploy's user
#: environment files, with room to spare.
INPUT_MAX_SIZE = 2 << 20

#: Inputs of shipped workflows whose action refuses a value over ``[limits]
#: parameters_max_size``: (workflow, input) -> what the value is, as the action says.
PARAMETER_SIZED = {("tripleo.parameters.update_parameters", "parameters"):
                   "The parameter values"}

#: Shipped workflows' input whose items are user environment files (each within
#: ``[limits] parameters_max_size``, with the files it brings).
USER_ENVIRONMENTS = "user_environments"


def stored_size(value: object, limit: int) -> int:
    """About how many bytes ``value`` takes as the JSON the executions database
    writes (ASCII only, a non-ASCII character as its ``\\uXXXX`` escapes), counted
    until past ``limit`` (a large value is not serialized to be measured)."""
    return validation.json_size(value, limit, escaped=True)


def check_execution_input(workflow: str, inputs: Mapping[str, object], env: object,
                          max_size: int = INPUT_MAX_SIZE,
                          parameters_max_size: int | None = None) -> None:
    """Refuse the input of an execution of ``workflow`` before it is recorded.

    :param max_size: ``[limits] input_max_size``: the largest input (all its values
        together) and the largest environment, each in bytes of stored JSON
    :param parameters_max_size: ``[limits] parameters_max_size`` (None: not checked)
    :raises InvalidInput: naming what is too large, the limit and its option
    """
    for what, value in (("input", inputs), ("environment (env)", env)):
        size = stored_size(value, max_size)
        if size > max_size:
            raise exceptions.InvalidInput(
                f"The {what} of workflow {workflow!r} takes over {max_size} bytes "
                "([limits] input_max_size); nothing was recorded. Put large content in the "
                "plan's files", hints=[exceptions.Hint(
                    "", "upload.create", sep=" (", tail=", or the plan's templates) and pass "
                    "its name, or raise [limits] input_max_size in the server's "
                    "configuration.")])
    if parameters_max_size is None:
        return
    for (name, key), what in PARAMETER_SIZED.items():
        if workflow == name and key in inputs:
            validation.check_size(inputs[key], parameters_max_size, what)
    environments = inputs.get(USER_ENVIRONMENTS)
    if workflow.startswith("tripleo.") and isinstance(environments, list):
        for index, item in enumerate(environments, start=1):
            validation.check_size(item, parameters_max_size,
                                  f"Environment file {index} (with the files it brings)")
