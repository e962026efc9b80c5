"""Measuring one operation: rounds and timing, file listings and their diff, what written files hold, reads on
every engine with their answers checked.

May import: bench.exceptions, bench.core, bench.workload, bench.formats, bench.engines (pyspark only for types).
"""
