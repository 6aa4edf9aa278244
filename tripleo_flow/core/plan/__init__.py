"""A plan's pure logic: its templates and environments (rendering in a sandbox, the
plan environment and YAML rules, capabilities, roles and networks, passwords, user
environments, parameters and their schema), the Heat request built from it, and the
checks made on a template tree before it is written.  No I/O of its own."""
