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

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


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


@pytest.fixture
def speed(benchmark_lib, monkeypatch):
    """``benchmarks/speed.py`` imported as a module (its ``lib`` from ``benchmarks/lib``)."""
    monkeypatch.delitem(sys.modules, "speed", raising=False)
    import speed

    yield speed
    sys.modules.pop("speed", None)


def _table_rows(text):
    return [[cell.strip() for cell in line.strip("|").split("|")]
            for line in text.splitlines() if line.startswith("| ") and "---" not in line][1:]


def test_the_default_settings_table_runs_at_smoke_size(speed, capsys):
    # Issue 17: `speed.py --defaults`, at tiny sizes: every row of the issue, the batched
    # engine, the per-fit path and GridSearchCV(cv=5), with the forecast's counts per path.
    from skdptune import batched

    families = dict(batched.FAMILIES)
    speed.main(["--defaults", "--smoke"])
    assert batched.FAMILIES == families  # the per-fit runs restore the registry
    rows = _table_rows(capsys.readouterr().out)
    assert [row[0] for row in rows] == [name for name, *_ in speed.DEFAULT_ROWS]
    for name, n_rows, k, fits, fast, slow, cv5, ratio_fast, ratio_slow in rows:
        assert int(n_rows) == 200 and int(k) >= 2
        n_batched, n_per_fit = map(int, fits.split(" / "))
        assert n_batched + n_per_fit == int(k)  # one candidate per grid at smoke size
        for seconds, ratio in ((fast, ratio_fast), (slow, ratio_slow)):
            # Seconds to 3 significant digits (0.5 % each), ratios to 0.01: the errors add.
            recomputed = float(seconds) / float(cv5)
            assert abs(float(ratio) - recomputed) <= 0.0051 + 0.0101 * recomputed
    # A per-fit search predicted to exceed the cap is skipped and reported as such.
    speed.defaults_table(1, smoke=True, per_fit_cap=0.0)
    rows = _table_rows(capsys.readouterr().out)
    assert len(rows) == len(speed.DEFAULT_ROWS)
    assert all(row[5].startswith("skipped (predicted ") and row[8] == "" for row in rows)
