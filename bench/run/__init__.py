"""Running the benchmark: options, the session (workspace, Spark applications, base tables, the servers it
starts), the pytest plugin and the lab a scenario works through.

May import: everything below it (core, workload, formats, engines, measure, results, inspect, servers, writers). Nothing imports it but
the scenarios (through fixtures), the CLI and the tests.
"""
