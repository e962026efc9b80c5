"""The scenarios: one pytest-benchmark module each (collected by pytest; shipped as ``bench.scenarios``)."""
