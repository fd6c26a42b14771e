"""CPU time of a private search against what a user would run instead (issue 42, item 3):
``GridSearchCV(cv=5)`` over scikit-learn's own non-private model on the same pipeline and
grid.

The private side is ``PrivateGridSearchCV(DP model, grid, epsilon=1, default=None,
accountant=BudgetAccountant(), random_state=0)``, every other parameter at its default
(``default=None``: the selection's partition fits always run, which is what is timed). The
non-private side is ``GridSearchCV(twin, twin_grid, cv=5)`` with ``refit=True``, where the twin
replaces each DP step by scikit-learn's own and each candidate's parameters are mapped to
scikit-learn's:

- ``adult-lr``: Adult's training part (26,048 rows, ``speed.adult_frame``) through the
  mixed-type pipeline (``speed.adult_pipeline``: diffprivlib's ``StandardScaler`` with
  declared bounds on 5 numeric columns, ``OneHotEncoder`` with declared categories on 8
  categorical ones) and skdptune's ``LogisticRegression``, grid ``C`` in {0.01, 0.1, 1, 10} x
  ``data_norm`` in {1, norm / 2, norm, 2 norm} (16 candidates; ``speed.DEFAULT_ROWS[2]``).
  Twin: scikit-learn's ``StandardScaler``, the same encoder, the rows clipped to
  ``data_norm`` (what the DP model does with it; no other parameter of scikit-learn's has
  its meaning), scikit-learn's ``LogisticRegression(C)``.
- ``k1000``: ``speed.make_data(100_000)`` (20 features in [-1, 1]), skdptune's
  ``LogisticRegression(data_norm=sqrt(20))`` with ``speed.GRIDS["LogisticRegression"]`` (``C``
  x ``fit_intercept`` x ``max_iter``, 24 candidates, all scikit-learn's own parameters) and
  ``n_partitions=1000``. Twin: scikit-learn's ``LogisticRegression`` on the same grid (no row
  is longer than ``data_norm``: no clip).
- ``adult-ridge``: Adult's pipeline with skdptune's ``Ridge(bounds_X, bounds_y=(0, 1))`` on
  the 0/1 label (103 encoded features), grid ``alpha`` in {1, 100} x ``noise_alpha`` in {1, 2}
  (``speed.DEFAULT_ROWS[5]``), scored by its default bounded R². Twin: scikit-learn's
  ``StandardScaler``, the encoder, the rows clipped to ``bounds_X`` and scikit-learn's
  ``Ridge(alpha=total)``, ``total`` the penalty the DP model applies (``Ridge.total_alpha``:
  ``alpha + noise_alpha * noise_scale``, from public parameters), scored by R².

One core (``n_jobs=None``) and BLAS pinned to one thread on both sides, so that the CPU time
of this process (``time.process_time``) is the whole search's. Prints the machine, and per
case the CPU seconds of each side and their ratio (``--side both``, the default; interleaved
repetitions with ``--repetitions``, medians) or one side's seconds (``--side private`` or
``--side sklearn``, for a tool that times two whole processes in turn)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=. \\
        python benchmarks/twin_speed.py --cases adult-lr k1000 adult-ridge
"""

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.linear_model import Ridge as SkRidge
from sklearn.model_selection import GridSearchCV, ParameterGrid
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))

import speed  # noqa: E402
from lib import datasets  # noqa: E402
from lib.runs import machine  # noqa: E402
from skdptune import PrivateGridSearchCV  # noqa: E402
from skdptune.linear_model import LogisticRegression  # noqa: E402


def clip_rows(X, norm):
    """Rows scaled down to L2 norm ``norm`` where longer (diffprivlib's ``clip_to_norm``)."""
    norms = np.linalg.norm(X, axis=1) / norm
    return X / np.maximum(norms, 1.0)[:, None]


def clip_box(X, lower, upper):
    """Every column clipped to its declared bounds (what skdptune's ``Ridge`` does)."""
    return np.clip(X, lower, upper)


def twin_preprocessing():
    """Adult's pipeline with scikit-learn's ``StandardScaler`` for diffprivlib's."""
    return ColumnTransformer([
        ("num", StandardScaler(), speed.ADULT_NUMERIC),
        ("cat", OneHotEncoder(categories=[datasets.ADULT_CATEGORIES[c]
                                          for c in speed.ADULT_CATEGORICAL],
                              handle_unknown="ignore", sparse_output=False),
         speed.ADULT_CATEGORICAL),
    ])


def adult_lr():
    _, _, final, grid = speed.DEFAULT_ROWS[2]
    private = (speed.adult_pipeline(final()), grid)
    twin = Pipeline([("pre", twin_preprocessing()),
                     ("clip", FunctionTransformer(clip_rows, kw_args={"norm": 1.0})),
                     ("clf", SkLogisticRegression())])
    twin_grid = {"clf__C": grid["clf__C"],
                 "clip__kw_args": [{"norm": norm} for norm in grid["clf__data_norm"]]}
    return speed.adult_frame(), private, (twin, twin_grid), {}


def k1000():
    grid = speed.GRIDS["LogisticRegression"]
    private = (LogisticRegression(data_norm=speed.DATA_NORM, classes=datasets.CLASSES), grid)
    return speed.make_data(100_000), private, (SkLogisticRegression(), grid), {
        "n_partitions": 1000}


def adult_ridge():
    _, _, final, grid = speed.DEFAULT_ROWS[5]
    private = (speed.adult_pipeline(final()), grid)
    bounds = speed.ADULT_MODEL_BOUNDS
    twin = Pipeline([("pre", twin_preprocessing()),
                     ("clip", FunctionTransformer(clip_box, kw_args={"lower": bounds[0],
                                                                     "upper": bounds[1]})),
                     ("clf", SkRidge())])
    # Each candidate's whole penalty, as the DP model computes it from public parameters.
    twin_grid = [{"clf__alpha": [final().set_params(
        alpha=params["clf__alpha"], noise_alpha=params["clf__noise_alpha"]).total_alpha(
            bounds)[0]]} for params in ParameterGrid(grid)]
    return speed.adult_frame(), private, (twin, twin_grid), {}


CASES = {"adult-lr": adult_lr, "k1000": k1000, "adult-ridge": adult_ridge}


def cpu_private(estimator, grid, X, y, options):
    search = PrivateGridSearchCV(estimator, grid, epsilon=1.0, default=None,
                                 accountant=BudgetAccountant(), random_state=0, **options)
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    return time.process_time() - start


def cpu_sklearn(estimator, grid, X, y):
    search = GridSearchCV(estimator, grid, cv=5, refit=True)
    start = time.process_time()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # ConvergenceWarning of short max_iter candidates
        search.fit(X, y)
    return time.process_time() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--side", choices=("both", "private", "sklearn"), default="both")
    parser.add_argument("--repetitions", type=int, default=1)
    args = parser.parse_args(argv)
    print(f"Machine: {machine()}", flush=True)
    with threadpool_limits(limits=1):
        for name in args.cases:
            (X, y), private, twin, options = CASES[name]()
            runs = {"private": lambda: cpu_private(*private, X, y, options),
                    "sklearn": lambda: cpu_sklearn(*twin, X, y)}
            sides = ("private", "sklearn") if args.side == "both" else (args.side,)
            seconds = {side: [] for side in sides}
            for _ in range(args.repetitions):
                for side in sides:
                    seconds[side].append(runs[side]())
            line = ", ".join(f"{side} {statistics.median(s):.2f} s CPU"
                             f" ({' '.join(f'{v:.2f}' for v in s)})"
                             for side, s in seconds.items())
            if args.side == "both":
                ratios = [p / s for p, s in zip(seconds["private"], seconds["sklearn"])]
                line += f"; ratio {statistics.median(ratios):.2f}"
            print(f"{name}: {line}", flush=True)


if __name__ == "__main__":
    main()
