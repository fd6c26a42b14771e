"""skdptune.decomposition.PCA: diffprivlib's PCA releases, the components from the Bingham law.

What is checked: :func:`bingham` samples the Bingham law (chi-square tests against the exact
density, by numerical integration, in 2 and 3 dimensions), where diffprivlib 0.6.6's sampler
does not; the releases are calibrated to replace-one adjacency and add up to ``epsilon``
(the mean's share with ``centered=False``); the caller's ``X`` is left as it was (diffprivlib
0.6.6 centres it in place); it spends ``epsilon`` once, after checking, and refuses missing
public bounds before; ``n_components`` as an int, a fraction, ``"mle"`` or None; unseeded
fits draw nothing from numpy's global generator; scikit-learn's conventions hold.

False failures of the law tests: each is a chi-square test at level ``1e-3`` (Bonferroni
over the three axes in 3 dimensions), with at least 100 expected draws per bin; a correct
sampler fails one with probability about ``1e-3``. Their seeds are fixed, so a run is
reproducible; the rate is over seeds.
"""

import pickle

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.mechanisms import Bingham as DPBingham
from diffprivlib.models import PCA as DPPCA
from diffprivlib.utils import BudgetError
from scipy import integrate, special, stats
from sklearn.base import clone
from sklearn.decomposition import PCA as SkPCA

from skdptune._models import decomposition
from skdptune._models.decomposition import PCA, bingham

LEVEL = 1e-3
N_DRAWS = 20_000


def _rotation(d, seed):
    q, r = np.linalg.qr(np.random.RandomState(seed).normal(size=(d, d)))
    return q * np.sign(np.diag(r))


def _angle_test(sampler, A, n_bins=18, n_draws=N_DRAWS):
    """Chi-square p-value of the draws' angle (mod pi, a unit vector and its opposite are
    one line) against the 2-D Bingham density ``exp(u' A u)`` integrated over each bin."""
    draws = np.array([sampler(A) for _ in range(n_draws)])
    angles = np.mod(np.arctan2(draws[:, 1], draws[:, 0]), np.pi)
    edges = np.linspace(0, np.pi, n_bins + 1)

    def density(phi):
        u = np.array([np.cos(phi), np.sin(phi)])
        return np.exp(u @ A @ u)

    mass = np.array([integrate.quad(density, a, b)[0] for a, b in zip(edges, edges[1:])])
    observed = np.histogram(angles, edges)[0]
    return stats.chisquare(observed, n_draws * mass / mass.sum()).pvalue


def _axis_tests(sampler, betas, rotation, n_bins=15, n_draws=N_DRAWS):
    """Chi-square p-values of ``|v_i|``, the draws' coordinates on each eigenvector of ``A =
    rotation diag(betas) rotation'``, against their exact marginal densities on the sphere:
    with ``x = v_i`` and the other two coordinates at angle ``phi``, the surface measure is
    ``dx dphi``, and integrating ``phi`` out leaves ``exp(b_i x^2) exp(s (b_j + b_k) / 2)
    I0(s (b_j - b_k) / 2)``, ``s = 1 - x^2``."""
    A = rotation @ np.diag(betas) @ rotation.T
    draws = np.array([sampler(A) for _ in range(n_draws)]) @ rotation
    edges = np.linspace(0, 1, n_bins + 1)
    pvalues = []
    for i in range(3):
        j, k = [axis for axis in range(3) if axis != i]

        def density(x):
            s = 1 - x ** 2
            return (np.exp(betas[i] * x ** 2 + s * (betas[j] + betas[k]) / 2)
                    * special.i0(s * (betas[j] - betas[k]) / 2))

        mass = np.array([integrate.quad(density, a, b)[0] for a, b in zip(edges, edges[1:])])
        observed = np.histogram(np.abs(draws[:, i]), edges)[0]
        pvalues.append(stats.chisquare(observed, n_draws * mass / mass.sum()).pvalue)
    return pvalues


def _ours(seed):
    rng = np.random.RandomState(seed)
    return lambda A: bingham(A, rng)


def _diffprivlibs(seed):
    # Its density is meant to be exp((epsilon / 4 / sensitivity) u' A u): epsilon=4 gives A.
    mechanism = DPBingham(epsilon=4.0, sensitivity=1.0, random_state=seed)
    return mechanism.randomise


A_2D = _rotation(2, 0) @ np.diag([0.0, 3.0]) @ _rotation(2, 0).T
BETAS_3D = np.array([0.0, 1.5, 4.0])


def test_the_sampler_draws_the_bingham_law_in_two_dimensions():
    assert _angle_test(_ours(1), A_2D) > LEVEL


def test_the_sampler_draws_the_bingham_law_in_three_dimensions():
    assert min(_axis_tests(_ours(2), BETAS_3D, _rotation(3, 1))) > LEVEL / 3


def test_the_same_tests_reject_diffprivlibs_sampler():
    # diffprivlib 0.6.6 divides by (u' Omega u)**(d/2) in its acceptance step where Kent,
    # Ganeiber & Mardia multiply: the tests see it with a tenth of the draws (its sampler is
    # slow), p below 1e-10 here.
    assert _angle_test(_diffprivlibs(3), A_2D, n_draws=N_DRAWS // 10) < 1e-10
    assert min(_axis_tests(_diffprivlibs(4), BETAS_3D, _rotation(3, 1),
                           n_draws=N_DRAWS // 10)) < 1e-10


def test_a_flat_law_is_uniform_and_one_dimension_is_a_sign():
    rng = np.random.RandomState(5)
    draws = np.array([bingham(np.eye(3) * 2.0, rng) for _ in range(3000)])
    np.testing.assert_allclose(np.linalg.norm(draws, axis=1), 1.0)
    assert np.abs(draws.mean(axis=0)).max() < 0.06  # uniform: mean 0, sd 1 / sqrt(9000)
    np.testing.assert_array_equal(bingham(np.array([[7.0]]), rng), [1.0])


class _Recorder:
    """Stands in for diffprivlib's ``Laplace`` and ``mean`` and for :func:`bingham`:
    records what each was asked for and adds no noise."""

    def __init__(self, log, kind):
        self.log, self.kind = log, kind

    def __call__(self, *args, **kwargs):
        if self.kind == "bingham":
            A, _ = args
            self.log.append(("bingham", A))
            return np.linalg.eigh(A)[1][:, -1]
        self.log.append((self.kind, kwargs["epsilon"], kwargs.get("sensitivity")))
        if self.kind == "mean":
            return args[0].mean(axis=0)
        return self

    def randomise(self, value):
        return value


@pytest.fixture
def recorded(monkeypatch):
    log = []
    for name in ("Laplace", "mean", "bingham"):
        monkeypatch.setattr(decomposition, name, _Recorder(log, name.lower()))
    return log


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(0, 1, (n, 4)) * [2.0, 1.0, 0.5, 0.2] + 1.0


@pytest.mark.parametrize("centered", [True, False])
@pytest.mark.parametrize("n_components, vectors", [(2, 2), (4, 3), (None, 3)])
def test_every_release_is_calibrated_and_the_budget_adds_up_to_epsilon(
        recorded, centered, n_components, vectors):
    X = np.clip(_data(), -4, 6)
    PCA(n_components, epsilon=0.8, data_norm=5.0, centered=centered, bounds=(-4, 6),
        accountant=BudgetAccountant()).fit(X)
    means = [entry for entry in recorded if entry[0] == "mean"]
    (eigenvalues,) = [entry for entry in recorded if entry[0] == "laplace"]
    drawn = [entry for entry in recorded if entry[0] == "bingham"]
    assert len(drawn) == vectors  # the last vector of a full basis is free
    share = eigenvalues[1]
    assert eigenvalues[2] == 2.0  # the eigenvalues' L1 sensitivity, in data_norm**2 units
    spent = sum(entry[1] for entry in means) + share * (vectors + 1)
    assert spent == pytest.approx(0.8)
    assert sum(entry[1] for entry in means) == pytest.approx(0.0 if centered else 0.4)
    # The first vector: the exponential mechanism exp((share / 2) u'Cu), C = X'X / R**2 of
    # the centred rows clipped to norm R, utility sensitivity 1.
    centred = X - (0 if centered else X.mean(axis=0))
    centred /= np.maximum(np.linalg.norm(centred, axis=1) / 5.0, 1.0)[:, None]
    np.testing.assert_allclose(drawn[0][1], share / 2 * centred.T @ centred / 25.0)


def test_rows_are_centred_then_clipped_to_data_norm(recorded):
    X = _data()
    X[0] = 50.0
    PCA(1, epsilon=1.0, data_norm=2.0, centered=True, accountant=BudgetAccountant()).fit(X)
    (_, A), = [entry for entry in recorded if entry[0] == "bingham"]
    clipped = X / np.maximum(np.linalg.norm(X, axis=1) / 2.0, 1.0)[:, None]
    # One vector and the eigenvalues: two shares of epsilon 1; exponent share / 2.
    np.testing.assert_allclose(A, 0.5 / 2 * clipped.T @ clipped / 4.0)


def test_the_callers_X_is_left_as_it_was():
    X = _data()
    before = X.copy()
    PCA(2, data_norm=6.0, bounds=(-5, 7), accountant=BudgetAccountant()).fit(X)
    PCA(2, data_norm=6.0, bounds=(-5, 7), accountant=BudgetAccountant()).fit_transform(X)
    np.testing.assert_array_equal(X, before)
    # diffprivlib 0.6.6 subtracts its DP mean from the caller's X (the upstream report).
    DPPCA(2, data_norm=6.0, bounds=(-5, 7), accountant=BudgetAccountant()).fit(X)
    assert not np.array_equal(X, before)


def test_it_spends_epsilon_once_and_checks_before_fitting():
    accountant = BudgetAccountant()
    PCA(2, epsilon=0.6, data_norm=6.0, bounds=(-5, 7), accountant=accountant).fit(_data())
    assert accountant.spent_budget == [(0.6, 0)]
    small = BudgetAccountant(epsilon=0.5)
    with pytest.raises(BudgetError):
        PCA(2, epsilon=0.6, data_norm=6.0, bounds=(-5, 7), accountant=small).fit(_data())
    assert small.spent_budget == []


@pytest.mark.parametrize("params, message", [
    ({"data_norm": None, "bounds": (-5, 7)}, "data_norm=None"),
    ({"data_norm": 6.0}, "bounds=None"),
    ({"data_norm": 6.0, "bounds": (-5, np.nan)}, "not finite"),
    ({"data_norm": 6.0, "bounds": (-5, 7), "n_components": 5}, "n_components=5"),
])
def test_missing_public_bounds_are_refused_before_anything_is_spent(params, message):
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match=message):
        PCA(accountant=accountant, **params).fit(_data())
    assert accountant.spent_budget == []


def test_with_a_large_budget_it_finds_the_principal_components():
    X = _data(20_000)
    model = PCA(2, epsilon=1e4, data_norm=8.0, bounds=(-8, 10), random_state=0,
                accountant=BudgetAccountant()).fit(X)
    exact = SkPCA(2).fit(X)
    np.testing.assert_allclose(np.abs(np.sum(model.components_ * exact.components_, axis=1)),
                               1.0, atol=1e-3)
    np.testing.assert_allclose(model.components_ @ model.components_.T, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(model.mean_, X.mean(axis=0), atol=0.01)
    np.testing.assert_allclose(model.explained_variance_, exact.explained_variance_, rtol=0.02)


@pytest.mark.parametrize("n_components, expected", [(None, 4), (3, 3), (0.5, 1), ("mle", None)])
def test_n_components_as_scikit_learn_takes_it(n_components, expected):
    model = PCA(n_components, epsilon=1e4, data_norm=8.0, bounds=(-8, 10), random_state=0,
                accountant=BudgetAccountant()).fit(_data(5000))
    assert model.components_.shape == (model.n_components_, 4)
    if expected is not None:
        assert model.n_components_ == expected
    assert model.transform(_data(10)).shape == (10, model.n_components_)


def test_a_seeded_fit_draws_everything_from_one_generator(monkeypatch):
    # An int seed made into one RandomState for the mean, the eigenvalues and the vectors: two
    # generators from one seed would give every mechanism the same uniforms.
    seen = []
    for name in ("mean", "Laplace", "bingham"):
        real = getattr(decomposition, name)

        def spy(*args, real=real, name=name, **kwargs):
            seen.append(kwargs["random_state"] if name != "bingham" else args[1])
            return real(*args, **kwargs)

        monkeypatch.setattr(decomposition, name, spy)
    PCA(2, data_norm=6.0, bounds=(-5, 7), random_state=3, accountant=BudgetAccountant()).fit(
        _data())
    assert len(seen) == 4 and isinstance(seen[0], np.random.RandomState)
    assert all(state is seen[0] for state in seen)


def test_unseeded_fits_leave_numpys_global_generator_alone():
    np.random.seed(7)
    expected = np.random.random_sample()
    np.random.seed(7)
    PCA(2, data_norm=6.0, bounds=(-5, 7), accountant=BudgetAccountant()).fit(_data())
    assert np.random.random_sample() == expected


def test_scikit_learn_conventions():
    model = PCA(2, epsilon=0.5, data_norm=6.0, bounds=[-5, 7], random_state=3,
                accountant=BudgetAccountant())
    assert PCA().accountant is None  # stored as given
    assert clone(model).set_params(n_components=3).n_components == 3
    fitted = clone(model).fit(_data())
    assert fitted.bounds == [-5, 7]
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.transform(_data(20)), fitted.transform(_data(20)))
    np.testing.assert_allclose(clone(model).fit_transform(_data()),
                               clone(model).fit(_data()).transform(_data()))
    assert list(fitted.get_feature_names_out()) == ["pca0", "pca1"]
