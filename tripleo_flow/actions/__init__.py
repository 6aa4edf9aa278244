"""Actions: the narrow steps a workflow task runs (plans, parameters, roles, networks,
passwords, templates, Heat, the stack, config-download, nodes with Ironic, validations,
and Mistral's standard ``std.*`` actions).

Each is a plain class registered with stevedore (namespace ``tripleo_flow.actions``,
:mod:`.registry`), built with what it may use (:mod:`.context`), with ``execute`` and,
only where its change can be undone, ``revert`` (:mod:`.base`).  Actions import none of
the workflow engine (:mod:`tripleo_flow.engine`) nor the interfaces.
"""
