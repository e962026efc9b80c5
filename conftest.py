"""Loads cowmor's pytest plugin (options such as --scale, --formats, --spark-master; fixtures)."""

pytest_plugins = ["bench.run.plugin"]
