"""The size of the shipped workflows' inputs whose actions take at most ``[limits]
parameters_max_size`` (parameter values, user environment files), checked before an
execution is recorded, with the action's own message.

An execution record keeps its input several times over, so a value the workflow's
own action would refuse still costs its record many times its size.  The engine
refuses any input over ``[limits] input_max_size`` itself
(:func:`tripleo_flow.common.value_limits.check_execution_input`); it runs
:func:`check_parameter_sizes` through the action context's input hook
(:meth:`~tripleo_flow.actions.context.ActionContext.check_input`).
"""

from __future__ import annotations

from collections.abc import Mapping

from tripleo_flow.core.plan import validation

#: Inputs of shipped workflows whose action refuses a value over ``[limits]
#: parameters_max_size``: (workflow, input) -> what the value is, as the action says;
#: the action's own execution (``action:NAME``) too.
PARAMETER_SIZED = {("tripleo.parameters.update_parameters", "parameters"):
                   "The parameter values",
                   ("action:parameters.update", "parameters"): "The parameter values"}
#: The workflows whose ``user_environments`` input is checked: the shipped ones and
#: every action execution.
CHECKED_PREFIXES = ("tripleo.", "action:")

#: Shipped workflows' input whose items are user environment files (each within
#: ``[limits] parameters_max_size``, with the files it brings).
USER_ENVIRONMENTS = "user_environments"


def check_parameter_sizes(workflow: str, inputs: Mapping[str, object],
                          parameters_max_size: int) -> None:
    """Refuse the input of an execution of ``workflow`` whose parameter values or user
    environment files are over ``parameters_max_size`` before it is recorded.

    :raises InvalidParameter: naming what is too large, the limit and its option
    """
    for (name, key), what in PARAMETER_SIZED.items():
        if workflow == name and key in inputs:
            validation.check_size(inputs[key], parameters_max_size, what)
    environments = inputs.get(USER_ENVIRONMENTS)
    if workflow.startswith(CHECKED_PREFIXES) and isinstance(environments, list):
        for index, item in enumerate(environments, start=1):
            validation.check_size(item, parameters_max_size,
                                  f"Environment file {index} (with the files it brings)")
