"""Issue 39: tune or release, decided from evidence (a corpus of development tables) and judged
on held-out tables nobody tuned for.

PRE-REGISTRATION, 29 November 2026 (with ``lib/corpus.py``; committed before any result on
any of its tables):

- **Panels**: every classification table x three families, every regression table x Ridge;
  the default candidate is the estimator as given to the search:

  - ``lr``: :class:`skdptune.linear_model.LogisticRegression` (``classes=[0, 1]``), grid
    ``C`` in {0.01, 0.1, 1, 10, 100} x ``data_norm`` in {0.5, 1, 2, B} (B: the row-norm
    bound, sqrt(features)); as given: ``C=1, data_norm=B``.
  - ``nb``: :class:`skdptune.naive_bayes.GaussianNB` (bounds [0, 1], ``classes=[0, 1]``),
    grid ``var_smoothing`` in {1e-9, 1e-6, 1e-3, 1e-2, 1e-1, 1}; as given: 1e-9.
  - ``rf``: :class:`skdptune.ensemble.RandomForestClassifier` (bounds [0, 1], ``classes=[0,
    1]``), grid ``n_estimators`` in {10, 30} x ``max_depth`` in {3, 5, 8}; as given: 10, 5.
  - ``ridge``: :class:`skdptune.linear_model.Ridge` (``bounds_X`` [0, 1], ``bounds_y`` the
    table's range), grid ``noise_alpha`` in {0.5, 0.7, 1, 1.4, 2, 2.8, 4, 8}; as given: the
    class's default (2). Scored by R² of predictions clipped to ``bounds_y``.

- **Totals** T in {0.5, 1, 4}.
- **Development stages** (the corpus, ``DEV``):

  - ``expected``: every candidate's expected test score at the charged epsilons
    ``EPSILONS`` (T, 0.9 T, 0.75 T and 0.5 T of every total: what a refit gets after a
    selection's share), the mean of ``DEV_REFITS`` independent DP refits on the training part,
    each given what the search's refit would (``skdptune._gate.split_budget``).
  - ``partitions``: the partition utilities a search computes, at every T, with
    ``default=None, selection_share=0.25`` and ``n_partitions = k`` chosen so that a
    partition trains on ``r`` records, ``r`` in ``ROWS`` (``k`` between 2 and 1,000), one draw
    (fresh partitions) each.

  From these, per family: the *fidelity* at ``r`` (Spearman's rank correlation between the
  partition utilities and the expected scores at the refit's epsilon, 0.75 T) and the
  *argmax regret* (the best candidate's expected score minus the partition argmax's); and the
  grid's *leads* over the default (the prior of the tuning policy).
- **Held-out judgement** (``HELD_OUT``), one stage ``judge``: 5 repetitions of every search,
  fresh secure noise and partitions each, by method:

  - ``before``: the library's default call on the code before this issue's change
    (``PrivateGridSearchCV(estimator, grid, epsilon=T)``; run with ``PYTHONPATH`` on a
    checkout of 041c510);
  - ``grid``: ``default=None`` (the plain grid), today's code;
  - ``new``: the default call, today's code.

  Each search's released law (its selected candidate and ``privacy_report_["refit_epsilon"]``)
  is scored by its candidate's expected score at that epsilon (``JUDGE_REFITS`` refits). The
  *gain* of a search is that minus the default candidate's expected score at T (the estimator
  as given, refit with the whole total). Per cell (table x family x T) and method: the mean
  gain over repetitions with its standard error; the summary is issue 39's: the mean over
  cells, the worst cell, cells below -1 point, and the share of the gap captured (sum of gains
  over sum of gaps, where the best candidate leads the default by at least 2 points, at
  T >= 1). Targets (issue 39): mean >= +1.0, no cell below -1.0, >= 50 % captured, and never
  below the plain grid's mean.

Commands (repository root; BLAS on one thread)::

    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=.
    python benchmarks/tuning_evidence.py expected --jobs 2
    python benchmarks/tuning_evidence.py partitions --jobs 2
    python benchmarks/tuning_evidence.py calibrate          # fidelity.md, prior (printed)
    PYTHONPATH=<checkout of 041c510> python benchmarks/tuning_evidence.py judge --method before
    python benchmarks/tuning_evidence.py judge --method grid
    python benchmarks/tuning_evidence.py judge --method new
    python benchmarks/tuning_evidence.py refits --jobs 2    # the judged laws' expected scores
    python benchmarks/tuning_evidence.py report             # judgement.md

Outputs in ``benchmarks/results/tuning_evidence/``; refits are cached in ``cache/``
(git-ignored), so every stage resumes.
"""

import argparse
import csv
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib import corpus  # noqa: E402
from lib.partition_hook import wrapped_partition_utilities  # noqa: E402
from lib.refits import Scored, add_refits, test_score  # noqa: E402
from lib.runs import machine, run_units  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "tuning_evidence"
TOTALS = (0.5, 1.0, 4.0)
FRACTIONS = (1.0, 0.9, 0.75, 0.5)
EPSILONS = tuple(sorted({round(t * f, 6) for t in TOTALS for f in FRACTIONS}))
ROWS = (25, 100, 400)
DEV_REFITS = {"lr": 3, "nb": 10, "rf": 3, "ridge": 3}
JUDGE_REFITS = {"lr": 10, "nb": 200, "rf": 10, "ridge": 100}
REPS = 5
GAP = 0.02
VALIDATION_FRACTION = 0.2
PARTITION_SHARE = 0.25


def families(name):
    return ("ridge",) if corpus.TABLES[name].task == "regression" else ("lr", "nb", "rf")


def grid(family, split):
    if family == "lr":
        return {"C": [0.01, 0.1, 1.0, 10.0, 100.0],
                "data_norm": [0.5, 1.0, 2.0, split.row_norm]}
    if family == "nb":
        return {"var_smoothing": [1e-9, 1e-6, 1e-3, 1e-2, 1e-1, 1.0]}
    if family == "rf":
        return {"n_estimators": [10, 30], "max_depth": [3, 5, 8]}
    return {"noise_alpha": [0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0, 8.0]}


def candidates(family, split):
    from sklearn.model_selection import ParameterGrid

    return list(ParameterGrid(grid(family, split)))


def estimator(family, split):
    """The estimator as given (the default candidate), every bound declared."""
    from skdptune.ensemble import RandomForestClassifier
    from skdptune.linear_model import LogisticRegression, Ridge
    from skdptune.naive_bayes import GaussianNB

    d = split.n_features
    box = (np.zeros(d), np.ones(d))
    if family == "lr":
        return LogisticRegression(C=1.0, data_norm=split.row_norm, classes=[0, 1])
    if family == "nb":
        return GaussianNB(bounds=box, classes=[0, 1], var_smoothing=1e-9)
    if family == "rf":
        return RandomForestClassifier(n_estimators=10, max_depth=5, bounds=box,
                                      classes=[0, 1])
    return Ridge(bounds_X=box, bounds_y=split.y_bounds)


def default_index(family, split):
    given = estimator(family, split).get_params()
    return next(i for i, params in enumerate(candidates(family, split))
                if all(given[key] == value for key, value in params.items()))


def _cache(name, family, epsilon):
    return RESULTS / "cache" / f"{name}-{family}-{epsilon:.6f}.npz"


def fill_expected(name, family, epsilon, refits):
    from diffprivlib.accountant import BudgetAccountant

    from skdptune._gate import split_budget

    split = corpus.load(name)
    base = estimator(family, split)

    def make(params):
        model = base.__class__(**{**base.get_params(), **params})
        model.set_params(accountant=BudgetAccountant())
        model.set_params(**{key: value for key, value in
                            split_budget(model.set_params(epsilon=1.0), epsilon).items()})
        return Scored(model, split)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        add_refits(_cache(name, family, epsilon), candidates(family, split), make,
                   (split.X_train, split.y_train), (split.X_test, split.y_test), refits)
    return name, family, epsilon


def search(name, family, total, **params):
    """Fit a search on the table's training part: ``(search, partition utilities)``."""
    from diffprivlib.accountant import BudgetAccountant

    from skdptune import PrivateGridSearchCV

    split = corpus.load(name)
    kept = []

    def keep(original, *args, **kwargs):
        result = original(*args, **kwargs)
        kept.append(np.array(result, copy=True))
        return result

    fitted = PrivateGridSearchCV(estimator(family, split), grid(family, split), epsilon=total,
                                 accountant=BudgetAccountant(), **params)
    with wrapped_partition_utilities(keep), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted.fit(split.X_train, split.y_train)
    return fitted, (kept[0] if kept else None)


def _append(path, row):
    new = not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)


def _read(path):
    if not path.exists():
        return []
    with path.open() as handle:
        return list(csv.DictReader(handle))


def partition_unit(name, family, total, rows):
    split = corpus.load(name)
    n_train = len(split.y_train) * (1 - VALIDATION_FRACTION)
    k = int(max(2, min(1000, round(n_train / rows))))
    fitted, utilities = search(name, family, total, default=None, n_partitions=k,
                               selection_share=PARTITION_SHARE,
                               validation_fraction=VALIDATION_FRACTION)
    row = {"table": name, "family": family, "total": total, "rows": rows, "k": k,
           "utilities": " ".join(f"{u:.6f}" for u in utilities)}
    return RESULTS / "partitions.csv", row


def judge_unit(name, family, total, rep, method):
    import skdptune  # which checkout: PYTHONPATH (the row records it)

    params = {"default": None} if method == "grid" else {}
    fitted, utilities = search(name, family, total, **params)
    split = corpus.load(name)
    report = fitted.privacy_report_
    refit_epsilon = float(report["refit_epsilon"])
    selected = int(fitted.best_index_) if getattr(fitted, "best_index_", None) is not None \
        else default_index(family, split)
    row = {"table": name, "family": family, "total": total, "rep": rep, "method": method,
           "selected": selected, "refit_epsilon": refit_epsilon,
           "declined": utilities is None,
           "n_partitions": getattr(fitted, "n_partitions_", "") or "",
           "spent": float(fitted.privacy_spent_[0]),
           "released": test_score(fitted.best_estimator_, split.X_test, split.y_test, split),
           "code": Path(skdptune.__file__).resolve().parents[1].name}
    return RESULTS / "judge.csv", row


def _write(result):
    """Write a unit's row from the parent process (one writer per file)."""
    path, row = result
    _append(path, row)
    return " ".join(str(value) for key, value in row.items() if key != "utilities")


def run_expected(jobs):
    units = [(fill_expected, name, family, epsilon, DEV_REFITS[family])
             for name in corpus.DEV for family in families(name) for epsilon in EPSILONS]
    from lib.refits import cached_refits

    run_units(units, jobs, lambda unit: cached_refits(_cache(*unit[1:4])) >= unit[4],
              describe=lambda result: result, every=20)


def run_partitions(jobs):
    done = {(r["table"], r["family"], float(r["total"]), int(r["rows"]))
            for r in _read(RESULTS / "partitions.csv")}
    units = [(partition_unit, name, family, total, rows) for name in corpus.DEV
             for family in families(name) for total in TOTALS for rows in ROWS]
    run_units(units, jobs, lambda unit: tuple(unit[1:]) in done, describe=_write)


def run_judge(method, jobs):
    done = {(r["table"], r["family"], float(r["total"]), int(r["rep"]), r["method"])
            for r in _read(RESULTS / "judge.csv")}
    units = [(judge_unit, name, family, total, rep, method) for name in corpus.HELD_OUT
             for family in families(name) for total in TOTALS for rep in range(REPS)]
    run_units(units, jobs, lambda unit: tuple(unit[1:]) in done, describe=_write)


def run_judge_refits(jobs):
    """The held-out expected scores every judged search needs: each candidate at T, and at
    each refit epsilon a search used (one unit per panel and epsilon, one writer each)."""
    from lib.refits import cached_refits

    needed = {(r["table"], r["family"], round(float(r["refit_epsilon"]), 6))
              for r in _read(RESULTS / "judge.csv")}
    needed |= {(name, family, total) for name in corpus.HELD_OUT for family in families(name)
               for total in TOTALS}
    units = [(fill_expected, name, family, epsilon, JUDGE_REFITS[family])
             for name, family, epsilon in sorted(needed)]
    run_units(units, jobs, lambda unit: cached_refits(_cache(*unit[1:4])) >= unit[4],
              describe=lambda result: result, every=10)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stage", choices=["expected", "partitions", "calibrate", "judge",
                                          "refits", "report"])
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--method", choices=["before", "grid", "new"])
    args = parser.parse_args(argv)
    print(machine(), flush=True)
    if args.stage == "expected":
        run_expected(args.jobs)
    elif args.stage == "partitions":
        run_partitions(args.jobs)
    elif args.stage == "judge":
        run_judge(args.method, args.jobs)
    elif args.stage == "refits":
        run_judge_refits(args.jobs)
    else:
        from lib import evidence_report

        getattr(evidence_report, args.stage)()


if __name__ == "__main__":
    main()
