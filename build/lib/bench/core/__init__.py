"""The ground floor: storage access (pyarrow filesystems), the run's time ledger, uncertainty of timings.

May import: bench.exceptions only. Never pyspark.
"""
