"""Running the benchmark: options, the session (workspace, jars, Spark applications, base tables), the pytest
plugin and the standalone cluster.

May import: everything below it (core, workload, formats, engines, measure, results). Nothing imports it but
the scenarios (through fixtures), the CLI and the tests.
"""
