"""Is diffprivlib's LinearRegression useful on issue 18's regression tables at any budget?

The default candidate of ``tuning_pays.py``'s regression panels (diffprivlib
``LinearRegression`` with the declared ``bounds_X`` and ``bounds_y``) refit on the fixed
training part at epsilon 0.5, 1, 4 and 100, 3 refits each (secure noise), scored on the test
part: R² of the predictions clipped to ``bounds_y`` (``tuning_pays.test_score``) and the share
of test predictions outside ``bounds_y``; beside them, scikit-learn's non-private
``LinearRegression`` on the same features (the ceiling a private model could approach).

Command (from the repository root; needs ``pip install -e .[benchmark-data]``)::

    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=.
    python benchmarks/linreg_ceiling.py

Prints a Markdown table (about 30 s on 2 cores).
"""

import warnings

import numpy as np
from sklearn.linear_model import LinearRegression

from benchmarks import tuning_pays

EPSILONS = (0.5, 1.0, 4.0, 100.0)
REFITS = 3


def main():
    warnings.simplefilter("ignore")  # diffprivlib's warnings on data outside the bounds
    print("| panel | epsilon | R² (clipped), mean of 3 DP refits | test predictions outside "
          "bounds_y | non-private R² |")
    print("|---|---|---|---|---|")
    for name in ("diamonds-linreg", "cps1988-linreg"):
        panel = tuning_pays.PANELS[name]
        X_train, X_test, y_train, y_test, declarations = panel.split()
        public = LinearRegression().fit(X_train, y_train)
        ceiling = tuning_pays.test_score(public, X_test, y_test, declarations)
        low, high = declarations.y_bounds
        for epsilon in EPSILONS:
            scores, outside = [], []
            for _ in range(REFITS):
                model = panel.estimator(declarations, epsilon).fit(X_train, y_train)
                scores.append(tuning_pays.test_score(model, X_test, y_test, declarations))
                prediction = model.predict(X_test)
                outside.append(np.mean((prediction < low) | (prediction > high)))
            print(f"| {name} | {epsilon:g} | {np.mean(scores):.2f} | {np.mean(outside):.0%} | "
                  f"{ceiling:.2f} |")


if __name__ == "__main__":
    main()
