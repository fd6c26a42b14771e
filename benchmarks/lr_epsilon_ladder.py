"""Does skdptune's ``LogisticRegression`` get more accurate as epsilon grows? (issue 39, item 3)

UCI Adult as the other benchmarks load it (``lib/panels.py``: declared categories and numeric
ranges, every feature in ``[0, 1]``, the stratified 80 / 20 split of repetition 0; the model
clips each row to ``data_norm``), ``LogisticRegression(classes=[0, 1])`` at two settings:
``C = 10, data_norm = 0.5`` (the reviewer's) and ``C = 1, data_norm = sqrt(13)`` (the
panels' default candidate, rows as given). For each epsilon of a ladder that straddles each
setting's ``b = 2 log(1 + C (data_norm**2 + 1) / 4)`` (where diffprivlib's rule leaves the
noise ``epsilon' = epsilon - b``), ``FITS`` fits (seeded: reproducible, not private), each
scored on the test part by the model's own ``score``; printed: mean test accuracy and its
standard error (``--clip-test``: scored on the test rows clipped to ``data_norm``, which
isolates the noise's rule in a model that does not clip when it predicts). Beside them,
scikit-learn's ``LogisticRegression`` with the same ``C`` on the same clipped rows (no
intercept, and with an unpenalised intercept scored on clipped test rows), solved to
``tol=1e-10``.

``--shares`` instead refits at epsilons below ``b / (1 - s)`` (where the share matters) with
``skdptune._models.linear_model.NOISE_SHARE`` set to each of ``SHARES`` in turn, on Adult at both
settings and on a generated table (``make_classification``: 20,000 rows, 20 features of
which 15 redundant, ``class_sep=0.5``, 5 % flipped labels, rows scaled into the unit ball,
70 / 30 split) at ``C = 100, data_norm = 1``: how the least share of epsilon given to the
noise was chosen.

``--solver`` fits one seeded model per setting of ``SOLVER_SETTINGS`` with each ``tol`` of
``TOLS`` (``max_iter=20_000``) and compares its test predictions with those of the same
noise solved to ``tol=1e-10``: how the default ``tol`` was chosen.

Commands (from the repository root; the ladder before the change: the same script with
``PYTHONPATH`` at an export of the older ``skdptune``, e.g. ``git archive ea35815 skdptune |
tar -x -C /tmp/before``)::

    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
    PYTHONPATH=. python benchmarks/lr_epsilon_ladder.py            # 1.5 min of CPU
    PYTHONPATH=/tmp/before python benchmarks/lr_epsilon_ladder.py  # 1 min (and --clip-test)
    PYTHONPATH=. python benchmarks/lr_epsilon_ladder.py --shares   # 2.5 min
    PYTHONPATH=. python benchmarks/lr_epsilon_ladder.py --solver   # 40 s

Results (2 shared cores; ``FITS`` = 10; mean test accuracy; standard errors after the change
at most 0.006 at epsilon 0.1 and 0.3, 0.002 from 1 on; before, up to 0.011 but where
stated; "before": ``ea35815``, whose model predicts on the rows as given and keeps
diffprivlib's rule for ``epsilon'``)::

    C = 10, data_norm = 0.5, b = 2.834; scikit-learn on the clipped rows 0.840 (with or
    without an intercept)
    epsilon          0.1    0.3    1      2      2.749  2.919  3.401  4      8      100    1e4
    before           0.539  0.533  0.473  0.441  0.432  0.539  0.448  0.412  0.413  0.381  0.382
     (s.e.)          0.047  0.050  0.058  0.061  0.063  0.048  0.058  0.056  0.065  0.006  0.001
    before, clipped  0.676  0.719  0.767  0.795  0.806  0.694  0.760  0.793  0.832  0.840  0.840
    after            0.744  0.779  0.812  0.822  0.825  0.826  0.827  0.828  0.833  0.841  0.840

    C = 1, data_norm = sqrt(13), b = 3.008; scikit-learn on the clipped rows 0.845
    epsilon          0.1    0.3    1      2      2.918  3.098  3.61   4      8      100    1e4
    before           0.687  0.733  0.783  0.810  0.819  0.710  0.783  0.806  0.837  0.845  0.844
    after            0.743  0.786  0.819  0.827  0.830  0.830  0.831  0.832  0.836  0.845  0.845

("before, clipped": ``--clip-test``; the rows of this setting are never clipped, so its
"before" is that already.) Before, the first setting's standard errors are 5 to 6 points:
a fit's accuracy on unclipped rows depends on its intercept's sign. ``--shares`` (mean, in
brackets the standard error)::

    Adult, C = 10, data_norm = 0.5
    epsilon  0.5            0.75           0.9            0.97
    0.3      0.719 (0.007)  0.751 (0.005)  0.779 (0.004)  0.769 (0.004)
    1        0.767 (0.005)  0.797 (0.003)  0.812 (0.002)  0.806 (0.002)
    3.4      0.812 (0.002)  0.824 (0.001)  0.827 (0.001)  0.823 (0.001)
    8.5      0.833 (0.001)  0.834 (0.000)  0.833 (0.000)  0.829 (0.000)
    Adult, C = 1, data_norm = sqrt(13)
    0.3      0.733 (0.005)  0.762 (0.004)  0.786 (0.003)  0.797 (0.003)
    1        0.784 (0.003)  0.807 (0.002)  0.819 (0.001)  0.820 (0.001)
    3.61     0.824 (0.001)  0.830 (0.001)  0.831 (0.001)  0.829 (0.000)
    9.02     0.839 (0.001)  0.839 (0.000)  0.837 (0.000)  0.833 (0.000)
    generated, C = 100, data_norm = 1
    0.1      0.704 (0.025)  0.739 (0.015)  0.742 (0.012)  0.731 (0.010)
    0.3      0.760 (0.006)  0.771 (0.003)  0.768 (0.003)  0.754 (0.003)
    1        0.774 (0.003)  0.782 (0.001)  0.781 (0.001)  0.772 (0.001)
    3        0.781 (0.002)  0.786 (0.001)  0.786 (0.000)  0.781 (0.000)
    10       0.789 (0.001)  0.791 (0.001)  0.789 (0.000)  0.787 (0.000)

0.9 is within 1.1 points of the best share everywhere (0.97 within 1.7, 0.75 within 3.5, 0.5
within 6.4). ``--solver``: with diffprivlib's ``tol=1e-4``, 0.06 % to 1.04 % of the test
predictions differ from the optimum's (accuracy 0 to 0.19 points lower); with ``1e-5``, 0 %
to 0.20 %; with ``1e-6`` and ``1e-7``, none, in all seven settings, for 1.4 to 9.7 times
``1e-4``'s CPU time (0.18 to 3.9 s a fit on Adult's 26,048 training rows).
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.validation import clip_to_norm
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression as SklearnLogisticRegression
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib import panels  # noqa: E402

import skdptune._models.linear_model as linear_model  # noqa: E402
from skdptune.linear_model import LogisticRegression  # noqa: E402

#: ``(C, data_norm)``: the reviewer's setting and the panels' default candidate.
SETTINGS = ((10.0, 0.5), (1.0, panels.ADULT_ROW_NORM))
#: Fits per (setting, epsilon).
FITS = 10
#: ``(C, data_norm, epsilon)`` of ``--solver``: both ladders' settings, a weaker and a
#: stronger penalty, small and huge epsilons.
SOLVER_SETTINGS = ((10.0, 0.5, 1e4), (10.0, 0.5, 3.0), (1.0, panels.ADULT_ROW_NORM, 1.0),
                   (1.0, panels.ADULT_ROW_NORM, 1e4), (100.0, 1.0, 1e4),
                   (100.0, panels.ADULT_ROW_NORM, 10.0), (0.1, 2.0, 0.3))
#: The tolerances ``--solver`` compares (with diffprivlib's default, 1e-4).
TOLS = (1e-4, 1e-5, 1e-6, 1e-7)
#: Shares compared by ``--shares``.
SHARES = (0.5, 0.75, 0.9, 0.97)


def threshold(C, data_norm):
    """``b``: below it diffprivlib's rule raises the penalty; just above, ``epsilon' -> 0``."""
    return 2 * np.log1p(C * (data_norm ** 2 + 1) / 4)


def ladder(C, data_norm):
    """The epsilons: decades, and either side of ``b``."""
    b = threshold(C, data_norm)
    return sorted({0.1, 0.3, 1.0, 2.0, round(0.97 * b, 3), round(1.03 * b, 3),
                   round(1.2 * b, 3), 4.0, 8.0, 100.0, 1e4})


def accuracy(C, data_norm, epsilon, data, fits=FITS, clip_test=False):
    """Mean and standard error of the test accuracy of ``fits`` seeded fits (on the test rows
    clipped to ``data_norm`` first, with ``clip_test``)."""
    X_train, X_test, y_train, y_test = data
    if clip_test:
        X_test = clip_to_norm(X_test, data_norm)
    scores = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(fits):
            model = LogisticRegression(epsilon=epsilon, data_norm=data_norm, C=C,
                                       classes=[0, 1], random_state=seed,
                                       accountant=BudgetAccountant())
            scores.append(model.fit(X_train, y_train).score(X_test, y_test))
    return np.mean(scores), np.std(scores, ddof=1) / np.sqrt(fits)


def reference(C, data_norm, data):
    """scikit-learn on the same clipped rows: without an intercept, and with one."""
    X_train, X_test, y_train, y_test = data
    Z_train, Z_test = clip_to_norm(X_train, data_norm), clip_to_norm(X_test, data_norm)
    return [SklearnLogisticRegression(C=C, fit_intercept=intercept, tol=1e-10, max_iter=10_000)
            .fit(Z_train, y_train).score(Z_test, y_test) for intercept in (False, True)]


def print_ladder(data, clip_test=False):
    for C, data_norm in SETTINGS:
        b = threshold(C, data_norm)
        plain, intercept = reference(C, data_norm, data)
        print(f"\nC = {C:g}, data_norm = {data_norm:.3g} (b = {b:.3f}); scikit-learn on the "
              f"clipped rows: {plain:.3f} without an intercept, {intercept:.3f} with one")
        print("| epsilon | mean test accuracy | s.e. |\n|---:|---:|---:|")
        for epsilon in ladder(C, data_norm):
            mean, se = accuracy(C, data_norm, epsilon, data, clip_test=clip_test)
            print(f"| {epsilon:g} | {mean:.3f} | {se:.3f} |", flush=True)


def generated():
    """The generated table of ``--shares`` (public, seeded)."""
    X, y = make_classification(n_samples=20_000, n_features=20, n_informative=5,
                               n_redundant=15, class_sep=0.5, flip_y=0.05, random_state=0)
    X = np.clip(X / 4, -1, 1) / np.sqrt(20) * 2
    return train_test_split(X, y, test_size=0.3, random_state=0)


def print_shares(data):
    cases = [(f"Adult, C = {C:g}, data_norm = {data_norm:.3g}", C, data_norm, data,
              lambda b: (0.3, 1.0, 1.2 * b, 3 * b)) for C, data_norm in SETTINGS]
    cases.append(("generated, C = 100, data_norm = 1", 100.0, 1.0, generated(),
                  lambda b: (0.1, 0.3, 1.0, 3.0, 10.0)))
    for name, C, data_norm, data, epsilons in cases:
        b = threshold(C, data_norm)
        print(f"\n{name} (b = {b:.3f}): mean test accuracy (s.e.) by NOISE_SHARE")
        print("| epsilon | " + " | ".join(f"{s:g}" for s in SHARES) + " |")
        print("|---:|" + "---:|" * len(SHARES))
        for epsilon in epsilons(b):
            cells = []
            for share in SHARES:
                linear_model.NOISE_SHARE = share
                cells.append("{:.3f} ({:.3f})".format(*accuracy(C, data_norm, epsilon, data)))
            print(f"| {epsilon:.3g} | " + " | ".join(cells) + " |", flush=True)


def print_solver(data):
    X_train, X_test, y_train, y_test = data
    print("| C | data_norm | epsilon | tol | test predictions unlike the optimum's | "
          "accuracy | CPU s |\n|---:|---:|---:|---:|---:|---:|---:|")
    for C, data_norm, epsilon in SOLVER_SETTINGS:
        def fit(tol):
            start = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = LogisticRegression(epsilon=epsilon, data_norm=data_norm, C=C,
                                           classes=[0, 1], tol=tol, max_iter=20_000,
                                           random_state=0, accountant=BudgetAccountant())
                predictions = model.fit(X_train, y_train).predict(X_test)
            return predictions, time.process_time() - start

        optimum, _ = fit(1e-10)
        for tol in TOLS:
            predictions, seconds = fit(tol)
            print(f"| {C:g} | {data_norm:.3g} | {epsilon:g} | {tol:g} | "
                  f"{np.mean(predictions != optimum):.4f} | "
                  f"{np.mean(predictions == y_test):.4f} | {seconds:.2f} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shares", action="store_true",
                        help="compare NOISE_SHARE values instead of printing the ladder")
    parser.add_argument("--solver", action="store_true",
                        help="compare solver tolerances instead of printing the ladder")
    parser.add_argument("--clip-test", action="store_true",
                        help="score the ladder on test rows clipped to data_norm (for a model "
                             "that does not clip them itself)")
    args = parser.parse_args()
    data = panels.split("adult-lr", 0)
    if args.shares:
        print_shares(data)
    elif args.solver:
        print_solver(data)
    else:
        print_ladder(data, args.clip_test)


if __name__ == "__main__":
    main()
