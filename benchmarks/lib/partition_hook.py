"""The benchmarks' one hook into ``PrivateGridSearchCV.fit``: a wrapper around the library's
``skdptune._evaluate.partition_utilities``, where the search calls it.

``end_to_end.py`` keeps a copy of the partition utilities a real search computes (to measure
their fidelity); ``run_benchmark.py`` lets the grid searches of one repetition, which differ
only in their selector, share one computation of them. Both wrap the library's function for
the duration of a ``with`` block; the wrapper calls it unchanged (or returns what an earlier
call with the same arguments returned), so the search receives what it would have computed.
Benchmark code only: the library never runs it.
"""

import sys
from contextlib import contextmanager
from types import SimpleNamespace


@contextmanager
def wrapped_partition_utilities(wrap):
    """Inside the block, a search's call ``partition_utilities(*args, **kwargs)`` runs
    ``wrap(original, *args, **kwargs)``, ``original`` being the library's function.

    The name is replaced in every loaded ``skdptune`` module that holds the function (the one
    that defines it and any that imported it by name), so the hook does not depend on which
    module of the package calls it; restored on exit. Yields a namespace whose ``calls``
    counts the wrapped calls: a caller that expects a search to have computed utilities checks
    it, so that a hook gone stale fails loudly instead of wrapping nothing.
    """
    import skdptune  # noqa: F401  (loads the searches' modules)
    from skdptune import _evaluate as evaluate

    original = evaluate.partition_utilities
    hook = SimpleNamespace(calls=0)

    def wrapper(*args, **kwargs):
        hook.calls += 1
        return wrap(original, *args, **kwargs)

    holders = [module for name, module in list(sys.modules.items())
               if (name == "skdptune" or name.startswith("skdptune."))
               and getattr(module, "partition_utilities", None) is original]
    for module in holders:
        module.partition_utilities = wrapper
    try:
        yield hook
    finally:
        for module in holders:
            module.partition_utilities = original
