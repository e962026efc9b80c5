"""The workload: scale presets, data generators and the dashboard queries with their pandas answers.

May import: bench.exceptions, bench.core. Never pyspark (the generators write Parquet with pyarrow).
"""
