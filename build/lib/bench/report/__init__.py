"""HTML report: results/ -> reports/ (aggregate, then render).

May import: bench.exceptions, bench.core, bench.results. Never pyspark, the formats, the engines or the run:
the recorded matrix says which families and modes there are.
"""
