"""Issue 35: how much a family's refit loses to its noise, on the development tables.

``skdptune._default_policy`` models the default candidate's expected test score at budget
``epsilon`` as ``u_inf - A / epsilon`` with ``A = a * D / n`` (``D`` the model's noise
dimension, ``n`` the training rows) and one constant ``a`` per family
(``default_policy.REFIT_NOISE_CONSTANTS``). This script measures ``A`` on the development
tables (never the held-out tables of ``tuning_defaults.py``): the default candidate of each
panel refit ``--refits`` times at every total budget, the mean test score regressed on
``1 / epsilon``, and ``a = A * n / D``. Budgets are totals, as a search charges them (the
gate's charge factor is taken out of the model's own epsilon, as a refit is given it:
``skdptune._gate.split_budget``).

Panels: the issue-18 panels' defaults (``tuning_pays.py``: ``lr``, ``nb``, ``ridge-noise``) on
hi, flights, fertility, cps1988, diamonds and movies, UCI Adult's LogisticRegression and
GaussianNB (``../shared/data/adult.csv``, when present), and diffprivlib's random forest at
its defaults (10 trees of depth 5, the same law as skdptune's; Adult's panel's) on hi,
flights and Adult.

Command (from the repository root; about 15 minutes on 2 cores)::

    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=.
    python benchmarks/refit_noise.py --out benchmarks/results/refit_noise
"""

import argparse
import csv
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib import datasets, panels  # noqa: E402
from lib.refits import test_score  # noqa: E402
from tuning_pays import PANELS  # noqa: E402

TOTALS = (0.5, 1.0, 2.0, 4.0)


def _forest(declarations, epsilon):
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.models import RandomForestClassifier

    from skdptune._gate import split_budget

    n = declarations.n_features
    model = RandomForestClassifier(bounds=(np.zeros(n), np.ones(n)), classes=[0, 1],
                                   accountant=BudgetAccountant())
    return model.set_params(**split_budget(model, epsilon))


def _adult(model, epsilon):
    from diffprivlib.accountant import BudgetAccountant

    from skdptune._gate import split_budget

    estimator = panels.PANELS["adult-" + model].estimator(epsilon)
    estimator.set_params(accountant=BudgetAccountant(), **panels.PANELS["adult-" + model].default)
    return estimator.set_params(**split_budget(estimator, epsilon))


def cases():
    """``(name, family, data, make(epsilon), D)``: every measured default."""
    found = []
    for panel in PANELS.values():
        if panel.model not in ("lr", "nb", "ridge-noise"):
            continue
        X_train, X_test, y_train, y_test, declarations = panel.split()
        d = declarations.n_features
        dimension = {"lr": d + 1, "nb": 2 * d, "ridge-noise": d * (d + 1) // 2 + d + 1}
        family = {"lr": "logistic_regression", "nb": "gaussian_nb",
                  "ridge-noise": "ridge"}[panel.model]
        found.append((panel.name, family, (X_train, X_test, y_train, y_test, declarations),
                      lambda epsilon, p=panel, s=declarations: p.estimator(s, epsilon),
                      dimension[panel.model]))
        if panel.model == "lr" and panel.table in ("hi", "flights"):
            found.append((panel.table + "-forest", "forest",
                          (X_train, X_test, y_train, y_test, declarations),
                          lambda epsilon, s=declarations: _forest(s, epsilon), 10 * 2 ** 5))
    if datasets.adult_available():
        X_train, X_test, y_train, y_test = panels.split("adult-lr", 0)
        data = (X_train, X_test, y_train, y_test, type("D", (), {"y_bounds": None})())
        d = X_train.shape[1]
        found.append(("adult-lr", "logistic_regression", data,
                      lambda epsilon: _adult("lr", epsilon), d + 1))
        found.append(("adult-nb", "gaussian_nb", data,
                      lambda epsilon: _adult("nb", epsilon), 2 * d))
        found.append(("adult-forest", "forest", data,
                      lambda epsilon: _adult("rf", epsilon), 10 * 2 ** 5))
    return found


def measure(refits, out):
    rows = []
    for name, family, (X_train, X_test, y_train, y_test, declarations), make, dimension in cases():
        scores = {}
        for total in TOTALS:
            values = []
            for _ in range(refits):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = make(total).fit(X_train, y_train)
                values.append(test_score(model, X_test, y_test, declarations))
            scores[total] = float(np.mean(values))
        # R² is mapped to the search's utility, (R² + 1) / 2 (skdptune._utility.R2_RANGE).
        utility = {t: (s + 1) / 2 if declarations.y_bounds is not None else s
                   for t, s in scores.items()}
        inverse = 1 / np.array(TOTALS)
        slope = np.polyfit(inverse, [utility[t] for t in TOTALS], 1)[0]
        A = max(0.0, -float(slope))
        n = len(y_train)
        row = {"case": name, "family": family, "n": n, "D": dimension, "A": A,
               "a": A * n / dimension, **{f"score_T{t:g}": scores[t] for t in TOTALS}}
        rows.append(row)
        print(f"| {name} | {family} | {n} | {dimension} | "
              + " | ".join(f"{100 * scores[t]:.1f}" for t in TOTALS)
              + f" | {A:.4f} | {row['a']:.1f} |", flush=True)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "refit_noise.csv", "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--refits", type=int, default=10)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    print("| case | family | n | D | " + " | ".join(f"T={t:g}" for t in TOTALS)
          + " | A | a = A n / D |\n|---|---|---|---|" + "---|" * len(TOTALS) + "---|---|")
    measure(args.refits, args.out)


if __name__ == "__main__":
    main()
