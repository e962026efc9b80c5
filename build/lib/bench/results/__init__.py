"""What a recorded run holds (the results contract), reading and validating it, the run history and the
regression gate.

May import: bench.exceptions, bench.core. Never pyspark, the formats or the engines: recorded runs are read on
machines that have none of them.
"""
