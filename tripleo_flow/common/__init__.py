"""Generic helpers of neither TripleO nor the workflow engine, which both use: a
wall-clock budget for work a hostile input sets (``time_budget``) and yaql 3 running
the expressions written for older yaql (``yaql_compat``).  Imports nothing of
tripleo_flow but its errors (``tests/unit/test_layering.py``)."""
