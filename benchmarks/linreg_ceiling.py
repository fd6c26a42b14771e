"""Is diffprivlib's LinearRegression useful on issue 18's regression tables at any budget?

The default candidate of ``tuning_pays.py``'s regression panels (diffprivlib
``LinearRegression`` with the declared ``bounds_X`` and ``bounds_y``) refit on the fixed
training part at epsilon 0.5, 1, 4 and 100, 3 refits each (secure noise), scored on the test
part: R² of the predictions clipped to ``bounds_y`` (``lib.refits.test_score``) and the share
of test predictions outside ``bounds_y``; beside them, scikit-learn's non-private
``LinearRegression`` on the same features (the ceiling a private model could approach). Each
on two designs: the panels' (every declared category an indicator, so the indicators of a
column add up to the intercept's column) and the same with each categorical column's first
category dropped (its reference; added on 25 November 2026 to test whether that collinearity
is what breaks the noisy normal equations).

Command (from the repository root; needs ``pip install -e .[benchmark-data]``)::

    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=.
    python benchmarks/linreg_ceiling.py

Prints a Markdown table (about a minute on 2 cores).
"""

import warnings

import numpy as np
from sklearn.linear_model import LinearRegression

from benchmarks import tuning_pays

EPSILONS = (0.5, 1.0, 4.0, 100.0)
REFITS = 3


def reference_dropped(declarations):
    """Column indices of the encoding without each categorical column's first indicator."""
    keep, start = list(range(len(declarations.numeric))), len(declarations.numeric)
    for categories, _ in declarations.categories.values():
        keep += range(start + 1, start + len(categories))
        start += len(categories)
    return np.array(keep)


def main():
    warnings.simplefilter("ignore")  # diffprivlib's warnings on data outside the bounds
    print("| panel | design | epsilon | R² (clipped) of 3 DP refits: mean (each) | test "
          "predictions outside bounds_y | non-private R² |")
    print("|---|---|---|---|---|---|")
    for name in ("diamonds-linreg", "cps1988-linreg"):
        panel = tuning_pays.PANELS[name]
        X_train, X_test, y_train, y_test, declarations = panel.split()
        low, high = declarations.y_bounds
        for design, columns in (("every category", np.arange(declarations.n_features)),
                                ("reference dropped", reference_dropped(declarations))):
            train, test = X_train[:, columns], X_test[:, columns]
            public = LinearRegression().fit(train, y_train)
            ceiling = tuning_pays.test_score(public, test, y_test, declarations)
            box = (np.zeros(len(columns)), np.ones(len(columns)))  # the declared bounds
            for epsilon in EPSILONS:
                scores, outside = [], []
                for _ in range(REFITS):
                    model = panel.estimator(declarations, epsilon).set_params(bounds_X=box)
                    model.fit(train, y_train)
                    scores.append(tuning_pays.test_score(model, test, y_test, declarations))
                    prediction = model.predict(test)
                    outside.append(np.mean((prediction < low) | (prediction > high)))
                each = ", ".join(f"{score:.2f}" for score in scores)
                print(f"| {name} | {design} | {epsilon:g} | {np.mean(scores):.2f} ({each}) | "
                      f"{np.mean(outside):.0%} | {ceiling:.2f} |", flush=True)


if __name__ == "__main__":
    main()
