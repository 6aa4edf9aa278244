"""The ``tripleo-flow`` command line (cliff): thin commands over the Python API
(:mod:`tripleo_flow.client`), listed in :mod:`.command_table` so that ``--help`` imports no
command module, and their shared output formats and progress display."""
