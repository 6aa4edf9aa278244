"""Generic helpers of neither TripleO nor the workflow engine, which both use: a
wall-clock budget for work a hostile input sets (``time_budget``), yaql 3 running
the expressions written for older yaql (``yaql_compat``), YAML read within limits and
written back (``safe_yaml``, ``yaml_build``), the size-checked jinja2 sandbox for
templates from untrusted authors (``template_sandbox``), the size and shape of values
a hostile author sends (``value_limits``), JSON values every encoder can write
(``jsonvalues``), which names hold a secret and a value's copy with every secret
masked (``secret_masking``).  Imports nothing of
tripleo_flow but its errors (``tests/unit/test_layering.py``)."""
