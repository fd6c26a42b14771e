"""The benchmarks' one hook into the library (``benchmarks/lib/partition_hook.py``) still
reaches a real search, and ``run_benchmark.py``'s grid searches share their partition
utilities through it; ``benchmarks/README.md``'s table names every entry script.

The benchmarks themselves are not run here (they take minutes to hours); this keeps the piece
of them that depends on the library's internals from breaking silently, as it did when
``skdptune.evaluate._partition_utility`` went away.
"""

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import GaussianNB

from skdptune import PrivateGridSearchCV, evaluate

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def benchmark_lib(monkeypatch):
    """``benchmarks/lib`` importable as ``lib``, as the scripts import it."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    for name in [name for name in sys.modules if name == "lib" or name.startswith("lib.")]:
        monkeypatch.delitem(sys.modules, name)
    import lib

    assert Path(lib.__file__).parent == BENCHMARKS / "lib"
    return lib


def _search(selector, random_state=0):
    return PrivateGridSearchCV(
        GaussianNB(bounds=(0, 1), epsilon=1.0), {"var_smoothing": [1e-9, 1e-3, 1e-1]},
        epsilon=1.0, selector=selector, n_partitions=5, accountant=BudgetAccountant(),
        random_state=random_state)


def test_the_hook_sees_a_search_compute_its_utilities(benchmark_lib, binary_data):
    from lib.partition_hook import wrapped_partition_utilities

    X, y = binary_data
    seen = []

    def keep(original, *args, **kwargs):
        result = original(*args, **kwargs)
        seen.append(np.array(result, copy=True))
        return result

    with wrapped_partition_utilities(keep) as hook:
        _search("permute_and_flip").fit(X, y)
    assert hook.calls == 1
    assert len(seen) == 1 and seen[0].shape == (3,)
    assert np.all((seen[0] >= 0) & (seen[0] <= 1))
    # Restored on exit, everywhere it was replaced.
    for name, module in list(sys.modules.items()):
        if name.startswith("skdptune") and hasattr(module, "partition_utilities"):
            assert module.partition_utilities is evaluate.partition_utilities, name


def test_grid_searches_of_one_repetition_share_their_partition_fits(benchmark_lib,
                                                                    binary_data):
    from lib import methods

    X, y = binary_data
    with methods.shared_partition_utilities() as shared:
        _search("permute_and_flip").fit(X, y)
        first = shared.seconds
        _search("exponential").fit(X, y)  # same seed: same partitions, served from the cache
        assert shared.calls == 2
    assert first > 0
    assert shared.seconds == first


def test_the_readme_table_names_every_entry_script_and_only_those():
    readme = (BENCHMARKS / "README.md").read_text()
    table = readme.split("## Which script answers which question", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`python benchmarks/(\w+\.py)", table))
    scripts = {path.name for path in BENCHMARKS.glob("*.py")}
    assert listed == scripts
    # At the top level, entry scripts only: helpers live in benchmarks/lib/.
    helpers = sorted(name for name in scripts
                     if 'if __name__ == "__main__":' not in (BENCHMARKS / name).read_text())
    assert not helpers, f"not entry scripts, move them to benchmarks/lib/: {helpers}"
