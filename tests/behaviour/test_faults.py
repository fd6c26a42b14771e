"""Faults: nothing is lost, nothing is over- or under-charged (docs/faults.md).

The rule under test: the user's accountant ends charged with exactly what was released.
Nothing is charged when the search fails before the selection ran; once it ran, the selection
is charged (plus whatever the refit's DP steps spent before failing), and the error re-raised.
"""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from skdptune.naive_bayes import GaussianNB
from joblib.externals.loky.process_executor import TerminatedWorkerError
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline

from skdptune import PrivateGridSearchCV
from skdptune.exceptions import PrivateFitError

CLASSES = [0, 1]  # binary_data's labels, declared

N_SAMPLES = 200
pytestmark = pytest.mark.filterwarnings("ignore:The selector selected no candidate:UserWarning")
ERROR_SCORE = 0.125  # distinctive, so the spy can tell failed partitions apart


def is_private(X):
    """Whether ``X`` holds rows of :func:`make_data` (integer row ids in column 0), not the
    rehearsal's public rows (``skdptune._rehearsal``: uniform values there)."""
    return bool(np.all(np.asarray(X)[:, 0] == np.round(np.asarray(X)[:, 0])))


class MockDPClassifier(ClassifierMixin, BaseEstimator):
    """A cheap stand-in for a diffprivlib classifier, with scripted faults.

    It "spends" ``epsilon`` on its accountant at the end of ``fit`` (no real privacy: tests
    only) and predicts ``X[:, 1] > 0.5``. Column 0 of ``X`` is expected to hold the row id.

    fail : None or str
        ``"partitions"``: raise in every fit on fewer than ``N_SAMPLES`` rows (all partition
        fits, not the refit); ``"refit"``: raise in a fit on ``N_SAMPLES`` rows; ``"always"``
        (the rehearsal's public rows included: the only mode the rehearsal sees);
        ``"interrupt"`` / ``"interrupt_refit"``: KeyboardInterrupt in partition fits / the
        refit; ``"exit"``: kill the process when not ``parent_pid`` (a dying joblib worker).
    fail_rows : tuple of int
        Raise when the training rows include one of these row ids.
    """

    def __init__(self, epsilon=1.0, accountant=None, fail=None, fail_rows=(), parent_pid=None):
        self.epsilon = epsilon
        self.accountant = accountant
        self.fail = fail
        self.fail_rows = fail_rows
        self.parent_pid = parent_pid

    def fit(self, X, y, sample_weight=None):
        X = np.asarray(X)
        if self.fail != "always" and not is_private(X):
            self.classes_ = np.unique(y)  # the rehearsal (public rows): no scripted fault
            return self
        is_refit = len(X) == N_SAMPLES
        if self.fail == "exit" and os.getpid() != self.parent_pid:
            os._exit(1)
        if (self.fail == "interrupt" and not is_refit) or (
            self.fail == "interrupt_refit" and is_refit
        ):
            raise KeyboardInterrupt
        if (
            self.fail == "always"
            or (self.fail == "partitions" and not is_refit)
            or (self.fail == "refit" and is_refit)
            or np.isin(X[:, 0], self.fail_rows).any()
        ):
            raise ValueError(f"scripted failure ({self.fail}, {self.fail_rows})")
        self.classes_ = np.unique(y)
        self.sample_weight_ = sample_weight
        self.rows_ = X[:, 0].copy()
        BudgetAccountant.load_default(self.accountant).spend(self.epsilon, 0.0)
        return self

    def predict(self, X):
        return self.classes_[(np.asarray(X)[:, 1] > 0.5).astype(int)]


class MockDPTransformer(TransformerMixin, BaseEstimator):
    """Identity transform that "spends" ``epsilon`` on its accountant when fitted."""

    def __init__(self, epsilon=0.3, accountant=None):
        self.epsilon = epsilon
        self.accountant = accountant

    def fit(self, X, y=None):
        BudgetAccountant.load_default(self.accountant).spend(self.epsilon, 0.0)
        return self

    def transform(self, X):
        return X


def make_data(seed=0):
    """Column 0: row id; column 1: uniform, predictive of y (10% labels flipped)."""
    rng = np.random.RandomState(seed)
    informative = rng.uniform(size=N_SAMPLES)
    X = np.column_stack([np.arange(N_SAMPLES), informative])
    y = (informative > 0.5).astype(int)
    flip = rng.uniform(size=N_SAMPLES) < 0.1
    y[flip] = 1 - y[flip]
    return X, y


def make_search(estimator, param_grid, accountant, **params):
    defaults = dict(
        selection_epsilon=1.0, delta=1e-6, n_partitions=5, error_score=ERROR_SCORE,
        accountant=accountant, random_state=0,
    )
    defaults.update(params)
    return PrivateGridSearchCV(estimator, param_grid, **defaults)


@pytest.fixture(autouse=True)
def mocks_pass_the_gate(allow_in_gate):
    allow_in_gate(MockDPClassifier, MockDPTransformer)


@pytest.fixture
def partition_results(partition_fits):
    """Every ``(params, utility)`` of a partition fit (n_jobs=1), as a live view."""

    class View:
        def __iter__(self):
            return iter([(params, value) for params, _, _, _, value in partition_fits])

    return View()


def assert_charged(accountant, expected):
    epsilon, delta = accountant.total()
    assert epsilon == pytest.approx(expected[0], rel=1e-12, abs=0)
    assert delta == pytest.approx(expected[1], rel=1e-12, abs=0)


def test_candidate_failing_on_some_partitions_gets_error_score(partition_results):
    X, y = make_data()
    accountant = BudgetAccountant()
    search = make_search(
        MockDPClassifier(), {"fail_rows": [(), (0, 1)]}, accountant, selector="exponential",
        selection_epsilon=50.0,
    ).fit(X, y)
    failing = [v for p, v in partition_results if p["fail_rows"] == (0, 1)]
    healthy = [v for p, v in partition_results if p["fail_rows"] == ()]
    # Rows 0 and 1 train in at most two partitions: those (and only those) fail.
    assert 1 <= failing.count(ERROR_SCORE) <= 2
    assert len(failing) == 5 and ERROR_SCORE not in healthy
    assert_charged(accountant, search.privacy_spent_)


def test_candidate_failing_on_all_partitions_is_not_selected_and_fit_succeeds(
    partition_results,
):
    X, y = make_data()
    accountant = BudgetAccountant()
    search = make_search(
        MockDPClassifier(), {"fail": ["partitions", None]}, accountant, selection_epsilon=50.0,
        selector="exponential",
    ).fit(X, y)
    assert [v for p, v in partition_results if p["fail"] == "partitions"] == [ERROR_SCORE] * 5
    # Selected utility ~0.9 vs 0.125 at k * epsilon = 250: the failing one has probability
    # below exp(-250 * 0.77 / 2), so this cannot fail by chance.
    assert search.best_params_ == {"fail": None}
    assert_charged(accountant, search.privacy_spent_)


def test_a_candidate_failing_everywhere_is_refused_in_full_before_the_charge(
    partition_results,
):
    # Before (issue 38): every partition fit failed, the selection and the refit's
    # reservation were charged, then the refit failed with its message withheld. A fit that
    # fails whatever the rows fails on the rehearsal's public rows too: refused, in full.
    X, y = make_data()
    accountant = BudgetAccountant()
    search = make_search(MockDPClassifier(fail="always"), {"epsilon": [1.0]}, accountant)
    with pytest.raises(ValueError, match=r"\{'epsilon': 1.0\} cannot be fitted.*public rows"
                                         r".*nothing was charged.*scripted failure \(always"):
        search.fit(X, y)
    assert accountant.spent_budget == []
    assert list(partition_results) == []  # no private row was fitted


def test_failure_only_in_refit_charges_the_selection_and_the_reservation():
    X, y = make_data()
    accountant = BudgetAccountant()
    search = make_search(MockDPClassifier(fail="refit"), {"epsilon": [0.5, 2.0]}, accountant)
    with pytest.raises(PrivateFitError, match="raised ValueError"):
        search.fit(X, y)
    # Whether the refit fails can depend on the data and the selected candidate: the charge is
    # the a-priori reservation (the grid's largest budget), not what was spent before failing.
    assert_charged(accountant, (1.0 + 2.0, 0.0))
    assert hasattr(search, "selection_") and not hasattr(search, "best_estimator_")


@pytest.mark.parametrize(
    "grid, expected_refit, selection",
    [
        ({"clf__epsilon": [1.0]}, 0.3 + 1.0, 0.0),  # one candidate: no selection
        ({"clf__epsilon": [0.5, 2.0]}, 0.3 + 2.0, 1.0),
    ],
)
def test_refit_failing_after_a_dp_step_spent_charges_the_reservation(grid, expected_refit,
                                                                     selection):
    X, y = make_data()
    accountant = BudgetAccountant()
    pipeline = Pipeline([("scale", MockDPTransformer()), ("clf", MockDPClassifier(fail="refit"))])
    with pytest.raises(PrivateFitError, match="raised ValueError in step 'clf'"):
        make_search(pipeline, grid, accountant).fit(X, y)
    assert_charged(accountant, (selection + expected_refit, 0.0))


def test_refit_failing_inside_a_column_transformer_is_named_and_charged():
    X, y = make_data()
    accountant = BudgetAccountant()
    columns = ColumnTransformer([("scale", MockDPTransformer(), [0, 1])])
    pipeline = Pipeline([("columns", columns), ("clf", MockDPClassifier(fail="refit"))])
    with pytest.raises(PrivateFitError, match="in step 'clf'"):
        make_search(pipeline, {"clf__epsilon": [1.0]}, accountant).fit(X, y)
    assert_charged(accountant, (0.3 + 1.0, 0.0))  # one candidate: no selection


def test_scorer_that_raises_gives_error_score_and_fit_succeeds(partition_results):
    def broken_scorer(estimator, X, y):
        raise RuntimeError("scorer failure")

    X, y = make_data()
    accountant = BudgetAccountant()
    search = make_search(
        MockDPClassifier(), {"epsilon": [1.0, 2.0]}, accountant, scoring=broken_scorer,
        utility_range=(0.0, 1.0),
    ).fit(X, y)
    assert [v for _, v in partition_results] == [ERROR_SCORE] * 10
    assert_charged(accountant, search.privacy_spent_)


def test_error_score_raise_propagates_and_charges_nothing():
    X, y = make_data()
    accountant = BudgetAccountant()
    search = make_search(
        MockDPClassifier(), {"fail": [None, "partitions"]}, accountant, error_score="raise"
    )
    with pytest.raises(ValueError, match="scripted failure"):
        search.fit(X, y)
    assert_charged(accountant, (0.0, 0.0))
    assert not hasattr(search, "selection_")


def test_keyboard_interrupt_in_a_partition_fit_propagates_and_charges_nothing():
    X, y = make_data()
    accountant = BudgetAccountant()
    search = make_search(MockDPClassifier(fail="interrupt"), {"epsilon": [0.5, 1.0]}, accountant)
    with pytest.raises(KeyboardInterrupt):
        search.fit(X, y)
    assert_charged(accountant, (0.0, 0.0))


def test_keyboard_interrupt_in_the_refit_charges_the_selection():
    X, y = make_data()
    accountant = BudgetAccountant()
    search = make_search(
        MockDPClassifier(fail="interrupt_refit"), {"epsilon": [0.5, 1.0]}, accountant
    )
    with pytest.raises(KeyboardInterrupt):
        search.fit(X, y)
    assert_charged(accountant, (1.0 + 1.0, 0.0))


def test_dying_worker_is_not_swallowed_and_charges_nothing(spread_work):
    X, y = make_data()
    accountant = BudgetAccountant()
    search = make_search(
        MockDPClassifier(fail="exit", parent_pid=os.getpid()), {"epsilon": [1.0, 2.0]},
        accountant, n_jobs=2,
    )
    with pytest.raises(TerminatedWorkerError):
        search.fit(X, y)
    assert_charged(accountant, (0.0, 0.0))
    assert not hasattr(search, "selection_")


def test_searches_in_threads_charge_only_their_own_accountant():
    X, y = make_data()
    budgets = [0.7, 1.3, 2.9, 0.4]
    accountants = [BudgetAccountant() for _ in budgets]

    def run(epsilon, accountant):
        return make_search(
            MockDPClassifier(), {"epsilon": [0.5, 1.0]}, accountant, selection_epsilon=epsilon,
            random_state=None,
        ).fit(X, y)

    with ThreadPoolExecutor(max_workers=len(budgets)) as pool:
        searches = list(pool.map(run, budgets, accountants))
    for epsilon, accountant, search in zip(budgets, accountants, searches):
        # Selection epsilon plus the maximum refit epsilon over the grid (it varies epsilon).
        assert search.privacy_spent_[0] == pytest.approx(epsilon + 1.0)
        assert_charged(accountant, search.privacy_spent_)


def test_same_random_state_gives_identical_results_for_one_and_two_jobs(binary_data,
                                                                     spread_work):
    X, y = binary_data
    results = []
    for n_jobs in (1, 2):
        search = PrivateGridSearchCV(
            GaussianNB(classes=CLASSES, bounds=(0, 1), random_state=0),
            {"epsilon": [0.2, 1.0, 5.0]},
            selection_epsilon=2.0, n_partitions=5, accountant=BudgetAccountant(), n_jobs=n_jobs,
            random_state=0,
        ).fit(X, y)
        results.append(search)
    one, two = results
    assert one.best_index_ == two.best_index_
    assert one.selection_ == two.selection_  # index, score, trace, guarantee
    assert tuple(one.privacy_spent_) == tuple(two.privacy_spent_)
    np.testing.assert_array_equal(one.predict(X), two.predict(X))


def test_refused_final_charge_withdraws_everything_released(binary_data):
    # The accountant accepts the a-priori check but refuses the final charge (as when another
    # user of the same accountant spends in between): the fit must release nothing uncharged.
    from diffprivlib.utils import BudgetError

    class RefusingAccountant(BudgetAccountant):
        def spend(self, epsilon, delta):
            raise BudgetError("refused")

    X, y = binary_data
    accountant = RefusingAccountant()
    search = PrivateGridSearchCV(
        GaussianNB(classes=CLASSES, bounds=(0.0, 1.0)), {"var_smoothing": [1e-9, 1e-3]},
        n_partitions=3, accountant=accountant,
    )
    with pytest.raises(BudgetError, match="refused"):
        search.fit(X, y)
    assert [name for name in vars(search) if name.endswith("_")] == []
    assert accountant.spent_budget == []
