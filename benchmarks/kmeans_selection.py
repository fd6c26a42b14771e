"""Does a private search choose the number of clusters? (issue 32)

``PrivateGridSearchCV(skdptune.cluster.KMeans(bounds=(-12, 12)), {"n_clusters": range(2,
11)}, epsilon=T)`` at its defaults (``scoring=None``: the simplified silhouette of each
partition's held-out rows, discounted by the centres the fit found empty; permute-and-flip;
``n_partitions="auto"``; secure noise, ``random_state=None``), on generated blobs with a known
number of clusters:

- ``k`` centres drawn uniformly from ``[-9, 9]^2``, redrawn until every two are at least 5
  apart; ``ROWS`` (20,000) rows, each a centre (uniformly chosen) plus Gaussian noise of
  standard deviation 0.5 per feature (well separated: 10 standard deviations between
  centres); the declared bounds ``(-12, 12)`` hold every row with overwhelming probability
  (rows are not clipped here; the model clips to its bounds);
- ``k`` in {3, 5, 8}, total ``epsilon`` in {1, 2, 4}, ``REPS`` (10) searches each, the data
  of repetition ``r`` seeded by ``stable_seed("kmeans_selection", k, r)`` (the same data at
  every epsilon);
- beside each data set, the non-private check the issue asks for: scikit-learn's ``KMeans(k,
  n_init=10)`` on all rows for ``k`` in 2..10, and the ``k`` whose silhouette
  (``sklearn.metrics.silhouette_score`` on the first 5,000 rows) is largest.

``run`` fits every search (resumable: one JSON file per search under
``results/kmeans_selection/runs/``; ``--n-jobs`` searches at once), ``report`` writes them to
``results/kmeans_selection/runs.csv`` and tabulates them in
``results/kmeans_selection/table.md``: per ``k`` and ``epsilon``, how often the true ``k`` was
selected, the selections, the median ``best_score_`` and its noise's standard deviation
(``best_score_std_``), whether every search's ``privacy_spent_`` equals its accountant's
charge, and how often the non-private silhouette picked the true ``k``. Accuracy, not timing:
run it under ``nice``.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=. \\
        nice -n 19 python benchmarks/kmeans_selection.py run     # about 1 h on 2 cores
    PYTHONPATH=. python benchmarks/kmeans_selection.py report    # a second
    PYTHONPATH=. python benchmarks/kmeans_selection.py run --smoke   # seconds: 1 small search
    # today's defaults at T = 2 (the tuning policy), kept apart from the run above:
    PYTHONPATH=. nice -n 19 python benchmarks/kmeans_selection.py \\
        --out benchmarks/results/kmeans_selection/policy run --epsilons 2 --n-jobs 2
"""

import argparse
import json
import os
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from sklearn.cluster import KMeans as SkKMeans
from sklearn.metrics import silhouette_score

from lib.runs import machine, run_units, stable_seed
from skdptune import PrivateGridSearchCV
from skdptune.cluster import KMeans

#: Where the runs and the table go; ``--out`` sets it, through the environment so that the
#: worker processes of ``--n-jobs`` write there too.
OUT = Path(os.environ.get("KMEANS_SELECTION_OUT",
                          Path(__file__).resolve().parent / "results" / "kmeans_selection"))
KS, EPSILONS, REPS, ROWS = (3, 5, 8), (1.0, 2.0, 4.0), 10, 20_000
GRID = {"n_clusters": list(range(2, 11))}
BOUNDS, HALF_WIDTH, SEPARATION, SPREAD, WIDTH = (-12.0, 12.0), 9.0, 5.0, 0.5, 2


def blobs(k, n_rows, seed):
    """``n_rows`` rows around ``k`` centres at least :data:`SEPARATION` apart."""
    rng = np.random.default_rng(seed)
    centres = []
    while len(centres) < k:
        candidate = rng.uniform(-HALF_WIDTH, HALF_WIDTH, WIDTH)
        if all(np.linalg.norm(candidate - other) >= SEPARATION for other in centres):
            centres.append(candidate)
    labels = rng.integers(k, size=n_rows)
    return np.array(centres)[labels] + rng.normal(0, SPREAD, (n_rows, WIDTH))


def non_private_choice(X):
    """The ``n_clusters`` of :data:`GRID` whose non-private k-means has the largest
    silhouette (on the first 5,000 rows)."""
    sample = X[:5000]
    scores = [silhouette_score(sample, SkKMeans(k, n_init=10, random_state=0).fit(X)
                               .predict(sample)) for k in GRID["n_clusters"]]
    return GRID["n_clusters"][int(np.argmax(scores))]


def path(k, epsilon, rep):
    return OUT / "runs" / f"k{k}_eps{epsilon:g}_rep{rep}.json"


def search_once(k, epsilon, rep, n_rows):
    """One private search on repetition ``rep``'s data; its outcome written to :func:`path`."""
    X = blobs(k, n_rows, stable_seed("kmeans_selection", k, rep))
    accountant = BudgetAccountant()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the notice that fit warnings are withheld
        search = PrivateGridSearchCV(KMeans(bounds=BOUNDS), GRID, epsilon=epsilon,
                                     accountant=accountant).fit(X)
    outcome = {
        "k": k, "epsilon": epsilon, "rep": rep, "rows": n_rows,
        "selected": int(search.best_params_["n_clusters"]),
        "best_score": float(search.best_score_),
        "best_score_std": float(search.best_score_std_),
        "n_partitions": search.n_partitions_ or 0,  # 0: the tuning policy declined to select
        "privacy_spent": float(search.privacy_spent_[0]),
        "charged": float(accountant.total()[0]),
        "non_private": non_private_choice(X),
    }
    target = path(k, epsilon, rep)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(outcome))
    return outcome


def run(args):
    units = [(search_once, k, epsilon, rep, args.rows)
             for k in args.ks for epsilon in args.epsilons for rep in range(args.reps)]
    run_units(units, args.n_jobs, lambda unit: path(*unit[1:4]).exists(),
              describe=lambda o: f"k={o['k']} eps={o['epsilon']:g} rep={o['rep']}: "
                                 f"selected {o['selected']}")


def report(_):
    outcomes = [json.loads(file.read_text()) for file in sorted((OUT / "runs").glob("*.json"))]
    lines = [
        "| true k | total epsilon | true k selected | selections | median best_score_ "
        "(noise sd) | privacy_spent_ = charge | non-private silhouette picks true k |",
        "|---|---|---|---|---|---|---|",
    ]
    for k in sorted({o["k"] for o in outcomes}):
        for epsilon in sorted({o["epsilon"] for o in outcomes if o["k"] == k}):
            cell = [o for o in outcomes if o["k"] == k and o["epsilon"] == epsilon]
            hits = sum(o["selected"] == k for o in cell)
            selections = ", ".join(f"{value}: {count}" for value, count in
                                   sorted(Counter(o["selected"] for o in cell).items()))
            exact = all(abs(o["privacy_spent"] - o["charged"]) <= 1e-9 * o["charged"]
                        and abs(o["privacy_spent"] - epsilon) <= 1e-9 * epsilon
                        for o in cell)
            lines.append(
                f"| {k} | {epsilon:g} | {hits} / {len(cell)} | {selections} | "
                f"{np.median([o['best_score'] for o in cell]):.2f} "
                f"({np.median([o['best_score_std'] for o in cell]):.2f}) | "
                f"{'yes' if exact else 'NO'} | "
                f"{sum(o['non_private'] == k for o in cell)} / {len(cell)} |")
    rows = sorted({o["rows"] for o in outcomes})
    text = ("\n".join(lines) + f"\n\n{len(outcomes)} searches of {rows} rows; "
            f"{machine()}.\n")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "table.md").write_text(text)
    columns = list(outcomes[0])
    (OUT / "runs.csv").write_text("\n".join(
        [",".join(columns)] + [",".join(str(o[c]) for c in columns) for o in outcomes]) + "\n")
    print(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None,
                        help="folder of the runs and the table (default: results/kmeans_selection)")
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="fit the searches (resumable)")
    run_parser.add_argument("--ks", type=int, nargs="+", default=list(KS))
    run_parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    run_parser.add_argument("--reps", type=int, default=REPS)
    run_parser.add_argument("--rows", type=int, default=ROWS)
    run_parser.add_argument("--n-jobs", type=int, default=1)
    run_parser.add_argument("--smoke", action="store_true",
                            help="one search of 2,000 rows (k=3, epsilon 4), kept apart")
    commands.add_parser("report", help="tabulate the searches run")
    args = parser.parse_args()
    global OUT
    if args.out is not None:
        OUT = args.out.resolve()
        os.environ["KMEANS_SELECTION_OUT"] = str(OUT)
    if args.command == "report":
        report(args)
    elif args.smoke:
        OUT = OUT / "smoke"
        print(search_once(3, 4.0, 0, 2000))
    else:
        run(args)


if __name__ == "__main__":
    main()
