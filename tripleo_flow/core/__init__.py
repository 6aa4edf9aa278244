"""TripleO's pure logic, no I/O of its own, by subject: a plan (``plan``: templates and
environments, rendering, roles and networks, parameters, passwords and secrets, the
Heat request), a deployment and its day-two runs (``deploy``: config-download, the
Ansible runs and their options, scale down, minor update, major upgrade, validations,
progress) and servers (``servers``: node import files, bare metal provisioning,
pre-provisioned servers).  What is neither TripleO's nor the engine's is in
:mod:`tripleo_flow.common`.

It imports nothing of the actions, the workflow engine, the Python client or the
interfaces (``tests/unit/test_layering.py``).
"""
