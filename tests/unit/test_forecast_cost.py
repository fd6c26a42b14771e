"""The cost of a search, shown before it runs (issue 17): how many partition fits, and which
candidates take the batched path (array programs over all partitions) or the per-fit path.

The forecast decides the paths from the parameters only, through the routing that the evaluate
stage itself uses (:func:`skdptune._batched.engine.candidate_paths`); ``fit`` with ``verbose >= 1``
prints the same counts before it runs the fits, and nothing with ``verbose=0``.
"""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from skdptune.naive_bayes import GaussianNB
from skdptune.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import Normalizer

import skdptune._search
from conftest import batched_groups
from skdptune import PrivateGridSearchCV
from skdptune._batched import gaussian_nb, registry
from skdptune._utility import make_utility

CLASSES = [0, 1]  # binary_data's labels, declared


@pytest.fixture(autouse=True)
def only_gaussian_nb_is_batched(monkeypatch):
    """The registry as these tests know it: other families (added in parallel) would move
    the LogisticRegression candidates below to the batched path."""
    monkeypatch.setattr(registry, "FAMILIES", {GaussianNB: gaussian_nb})


def split_grid():
    """Three GaussianNB candidates (a batched family) and two LogisticRegression ones (the
    per-fit path), swapped in the one step of a pipeline."""
    return [
        {"clf": [GaussianNB(classes=CLASSES, bounds=(0, 1))],
         "clf__var_smoothing": [1e-9, 1e-3, 1e-1]},
        {"clf": [LogisticRegression(classes=CLASSES, data_norm=2.0)], "clf__C": [0.1, 1.0]},
    ]


def split_search(**options):
    return PrivateGridSearchCV(
        Pipeline([("clf", GaussianNB(classes=CLASSES, bounds=(0, 1)))]), split_grid(),
        **{"n_partitions": 20, "accountant": BudgetAccountant(), "random_state": 0,
           "default": None, **options})


def test_the_forecast_counts_the_partition_fits_of_each_path():
    forecast = split_search().forecast()
    assert forecast.n_fits == 20 * 5
    assert forecast.paths == ("batched",) * 3 + ("per-fit",) * 2
    assert forecast.batched_candidates == (0, 1, 2)
    assert forecast.per_fit_candidates == (3, 4)
    assert (forecast.n_batched_fits, forecast.n_per_fit_fits) == (60, 40)
    assert "100 partition fits: 60 batched (3 candidates), 40 per-fit (2 candidates)" in str(
        forecast)


def test_the_forecast_resolves_auto_partitions_for_the_count():
    forecast = split_search(n_partitions="auto").forecast(n_samples=26_048)
    assert forecast.n_fits == forecast.n_partitions * 5 and forecast.n_partitions > 20


def test_the_forecast_routes_as_the_evaluate_stage_does(binary_data):
    # The forecast's paths are those the evaluate stage takes on real data (dense, finite,
    # two classes: nothing in the data sends a candidate elsewhere).
    X, y = binary_data
    search = split_search()
    candidates = list(search.forecast().paths)
    _, utility = make_utility(search.estimator, None, None, None)
    from sklearn.model_selection import ParameterGrid

    groups = batched_groups(search.estimator, list(ParameterGrid(split_grid())), X, y, utility)
    taken = sorted(i for _, ids, _, _ in groups for i in ids)
    assert taken == [i for i, path in enumerate(candidates) if path == "batched"]


def test_the_scorer_and_stateless_steps_decide_the_path_as_in_evaluate():
    # Balanced accuracy has no batched emulation: every candidate takes the per-fit path.
    assert split_search(scoring="balanced_accuracy").forecast().paths == ("per-fit",) * 5
    # A stateless step before GaussianNB keeps it batched; the width the step outputs is not
    # known before the data, and GaussianNB's plan decides from its declared bounds.
    search = PrivateGridSearchCV(
        Pipeline([("norm", Normalizer()),
                  ("clf", GaussianNB(classes=CLASSES, bounds=(np.zeros(4), np.ones(4))))]),
        {"clf__var_smoothing": [1e-9, 1e-3]}, n_partitions=10, default=None)
    assert search.forecast().paths == ("batched", "batched")


def test_the_family_plan_decides_from_parameters_when_the_width_is_unknown():
    assert gaussian_nb.plan(GaussianNB(classes=CLASSES, bounds=(0, 1)), None) is not None
    assert gaussian_nb.plan(GaussianNB(classes=CLASSES, bounds=(np.zeros(3), np.ones(3))),
                            None) is not None
    assert gaussian_nb.plan(GaussianNB(classes=CLASSES, bounds=(np.zeros(3), np.ones(3))),
                            4) is None
    assert gaussian_nb.plan(GaussianNB(classes=CLASSES, bounds=None), None) is None


def test_verbose_fit_prints_the_paths_before_it_runs_the_fits(binary_data, capsys,
                                                              monkeypatch):
    X, y = binary_data
    printed_before = []
    original = skdptune._search.partition_utilities

    def recording(*args, **kwargs):
        printed_before.append(capsys.readouterr().out)
        return original(*args, **kwargs)

    monkeypatch.setattr(skdptune._search, "partition_utilities", recording)
    split_search(n_partitions=5, verbose=1).fit(X, y)
    assert printed_before[0].splitlines() == [
        "Fitting 5 partitions for each of 5 candidates, totalling 25 fits",
        "Paths: 15 partition fits batched (3 candidates, one array program per block of "
        "partitions), 10 per-fit (2 candidates, one estimator fit each)",
    ]


def test_quiet_fit_prints_nothing(binary_data, capsys):
    X, y = binary_data
    split_search(n_partitions=5, verbose=0).fit(X, y)
    assert capsys.readouterr().out == ""


def test_fit_parameters_send_every_candidate_to_the_per_fit_path(binary_data, capsys):
    # sample_weight is a fit parameter the batched families do not take: as in evaluate.
    X, y = binary_data
    search = PrivateGridSearchCV(GaussianNB(classes=CLASSES, bounds=(0, 1)),
                                 {"var_smoothing": [1e-9, 1e-3]},
                                 n_partitions=5, verbose=1, accountant=BudgetAccountant(),
                                 random_state=0, default=None)
    search.fit(X, y, sample_weight=np.ones(len(y)))
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == ("Paths: 0 partition fits batched (0 candidates, one array program per "
                        "block of partitions), 10 per-fit (2 candidates, one estimator fit each)")
