"""Helpers of the benchmark scripts: data sets, panels, method adapters, shared settings and
the small pieces several scripts use. Nothing here is an entry point; the scripts one runs are
the ``*.py`` files one level up (``benchmarks/README.md`` says which answers which question).
"""
