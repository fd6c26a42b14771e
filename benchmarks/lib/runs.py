"""Running benchmark work: seeds that do not depend on the process, cache-filling units on
joblib workers, and the one-line description of the machine that the reports print."""

import os
import platform
import time
import zlib

from joblib import Parallel, delayed


def stable_seed(*parts):
    """A seed that does not depend on the process (unlike ``hash()`` of strings)."""
    return zlib.crc32(repr(parts).encode()) % (2 ** 31)


def run_units(units, n_jobs, is_cached, describe=None, every=1):
    """Run every unit ``(function, *args)`` that ``is_cached(unit)`` says is not done.

    Units fill a cache on disk, so a stopped run resumes where it stopped. They run on
    ``n_jobs`` processes, one unit per task, in the order they finish; a progress line is
    printed every ``every`` units (and after the last), with ``describe(result)`` if given.
    """
    todo = [unit for unit in units if not is_cached(unit)]
    print(f"{len(units) - len(todo)} cached, {len(todo)} to run", flush=True)
    if not todo:
        return
    start = time.perf_counter()
    results = Parallel(n_jobs=n_jobs, return_as="generator_unordered", batch_size=1)(
        delayed(function)(*args) for function, *args in todo)
    for done, result in enumerate(results, 1):
        if done % every == 0 or done == len(todo):
            detail = f"  {describe(result)}" if describe is not None else ""
            print(f"  {done}/{len(todo)} units, {time.perf_counter() - start:.0f} s{detail}",
                  flush=True)


def machine():
    """Where the benchmark ran: platform, cores available to this process, package versions."""
    from importlib.metadata import version

    packages = ("scikit-learn", "diffprivlib", "dp-accounting", "numpy", "scipy", "joblib")
    return (f"{platform.platform()}, {len(os.sched_getaffinity(0))} cores (nproc), "
            f"Python {platform.python_version()}, "
            + ", ".join(f"{name} {version(name)}" for name in packages))
