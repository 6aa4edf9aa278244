"""Pure logic, no I/O of its own: plan templates and environments (rendering, roles,
networks, parameters, passwords, capabilities), deployment outputs (config-download,
inventory, stack requests), servers (nodes, bare metal, provisioning), day-two rules
(scale-down, minor update, major upgrade and their Ansible options), and the utilities
they share (secrets and their masking, JSON value checks, time budgets, progress).

It imports nothing of the actions, the workflow engine, the Python API or the
interfaces (``tests/unit/test_layering.py``).
"""
