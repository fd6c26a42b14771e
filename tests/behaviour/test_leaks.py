"""The fitted search releases no raw utility (DESIGN.md, "The privacy model": what is released).

The partition utilities are recomputed independently here (same derived seed, same partition
labels, same fits) and checked against what the partition fits returned; then none of them,
nor any candidate's mean, may appear at full float precision in the pickle (as 8-byte
little-endian doubles or as repr strings) or anywhere in the object graph of the attributes.
"""

import pickle
import struct
import types

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from sklearn.base import clone
from sklearn.metrics import accuracy_score

from skdptune import PrivateGridSearchCV
from skdptune.naive_bayes import GaussianNB
from skdptune._partition import partition_labels, split_indices

SEED = 7
N_PARTITIONS = 5
GRID = {"epsilon": [0.3, 1.0, 3.0, 10.0]}
# Seeded, so partition fits repeat; binary_data's labels declared.
ESTIMATOR = GaussianNB(bounds=(0, 1), classes=[0, 1], random_state=0)
# Partition fits emulate the refit: epsilon times k / (1 - validation_fraction).
RATIO = N_PARTITIONS / (1 - 0.2)


def independent_utilities(X, y):
    """Per-partition accuracies of every candidate, recomputed outside the library."""
    # The search derives its partition seed as the first int32 draw of random_state.
    partition_seed = np.random.RandomState(SEED).randint(np.iinfo(np.int32).max)
    splits = split_indices(
        *partition_labels(len(X), N_PARTITIONS, 0.2, partition_seed), N_PARTITIONS
    )
    utilities = []
    for epsilon in GRID["epsilon"]:
        for train, validation in splits:
            model = clone(ESTIMATOR).set_params(epsilon=epsilon * RATIO,
                                                accountant=BudgetAccountant())
            model.fit(X[train], y[train])
            utilities.append(accuracy_score(y[validation], model.predict(X[validation])))
    return np.array(utilities).reshape(len(GRID["epsilon"]), N_PARTITIONS)


def all_floats(root):
    """Every float reachable from ``root``: attributes, containers and numpy arrays."""
    found, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if id(node) in seen or isinstance(
            node, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, str,
                   bytes)
        ):
            continue
        seen.add(id(node))
        if isinstance(node, (float, np.floating)):
            found.append(float(node))
        elif isinstance(node, np.ndarray):
            node = np.ma.getdata(node)
            if node.dtype == object:
                stack.extend(node.ravel().tolist())
            elif np.issubdtype(node.dtype, np.number):
                found.extend(node.astype(float).ravel().tolist())
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, (list, tuple, set, frozenset)):
            stack.extend(node)
        elif hasattr(node, "__dict__"):
            stack.extend(vars(node).values())
    return found


@pytest.fixture
def fitted_and_utilities(binary_data, partition_fits):
    X, y = binary_data
    search = PrivateGridSearchCV(
        ESTIMATOR, GRID, selection_epsilon=1.0, n_partitions=N_PARTITIONS,
        accountant=BudgetAccountant(),
        random_state=SEED,
    ).fit(X, y)
    per_partition = independent_utilities(X, y)
    returned = np.zeros_like(per_partition)
    for params, number, _, _, value in partition_fits:
        returned[GRID["epsilon"].index(params["epsilon"] / RATIO), number] = value
    # The independent recomputation is what the search computed (n_jobs=1, same partitions).
    np.testing.assert_array_equal(per_partition, returned)
    return search, per_partition


def secret_values(per_partition):
    """Partition utilities and candidate means worth searching for.

    Short decimals (0.75, 0.8125, 1.0) also occur legitimately (parameters, model
    statistics), so only values whose repr has at least 8 characters are searched for; the
    data make most utilities such values (e.g. 0.8524590163934426).
    """
    means = per_partition.mean(axis=1)  # exactly as the search averages them
    candidates = set(per_partition.ravel().tolist()) | set(means.tolist())
    secrets = sorted(v for v in candidates if len(repr(v)) >= 8)
    assert len(secrets) >= 10, "the data must give distinctive utilities to search for"
    return secrets


def test_no_utility_in_the_pickle(fitted_and_utilities):
    search, per_partition = fitted_and_utilities
    payload = pickle.dumps(search)
    for value in secret_values(per_partition):
        assert struct.pack("<d", value) not in payload, value
        assert repr(value).encode() not in payload, value


def test_no_utility_in_any_attribute(fitted_and_utilities):
    search, per_partition = fitted_and_utilities
    released = np.array(all_floats(search))
    assert released.size > 0
    leaked = [v for v in secret_values(per_partition) if np.any(released == v)]
    assert leaked == []


def test_walker_and_byte_search_find_a_planted_utility(fitted_and_utilities):
    """The checks above have teeth: a utility stored on the object is found by both."""
    search, per_partition = fitted_and_utilities
    planted = secret_values(per_partition)[0]
    search.debug_ = {"scores": np.array([0.1, planted])}
    assert planted in all_floats(search)
    assert struct.pack("<d", planted) in pickle.dumps(search)


# --- Printed output of fits on private data (issue 15, case 3) -------------------------------

import ctypes  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

from sklearn.base import BaseEstimator, ClassifierMixin  # noqa: E402
from sklearn.linear_model import SGDClassifier  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402

import skdptune  # noqa: E402
from skdptune import PrivateRandomizedSearchCV  # noqa: E402

SECRET = "SECRET-RECORD-VALUE"


class _Chatty(ClassifierMixin, BaseEstimator):
    """Prints a record of its training data in four ways: Python's print to stdout and to
    stderr, a write to file descriptor 1, and C's printf (buffered by the C library)."""

    def __init__(self, epsilon=1.0, accountant=None):
        self.epsilon = epsilon
        self.accountant = accountant

    def fit(self, X, y):
        print(f"{SECRET} print {X[0, 0]!r}")
        print(f"{SECRET} stderr", file=sys.stderr)
        os.write(1, f"{SECRET} fd1\n".encode())
        ctypes.CDLL(None).printf(f"{SECRET} printf\n".encode())
        self.classes_ = np.unique(y)
        if self.accountant is not None:
            self.accountant.spend(self.epsilon, 0)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


@pytest.mark.parametrize("estimator", [
    _Chatty(),
    MLPClassifier(hidden_layer_sizes=(3,), max_iter=5, verbose=True),
    SGDClassifier(max_iter=5, tol=None, verbose=1),
], ids=["python-fd-and-c", "mlp-verbose", "sgd-verbose"])
def test_partition_fits_print_nothing_the_user_sees(binary_data, capfd, estimator):
    # Before: MLPClassifier(verbose=True) printed every partition's training loss, and
    # SGDClassifier(verbose=1) weight norms, biases and losses. Captured at the file-descriptor
    # level, so compiled code's output counts too.
    X, y = binary_data
    PrivateGridSearchCV(estimator, {}, refit=False, n_partitions=3, scoring="accuracy",
                        accountant=BudgetAccountant(), random_state=0).fit(X, y)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


# Two candidates: a grid of one is refit without partition fits (nothing to select). Their
# own epsilon, as declared (selection_epsilon).
TWO = {"epsilon": [0.5, 1.0]}


def test_released_fits_and_trials_print_nothing_the_user_sees(binary_data, capfd,
                                                              allow_in_gate):
    X, y = binary_data
    allow_in_gate(_Chatty)
    PrivateGridSearchCV(_Chatty(), TWO, selection_epsilon=1.0, n_partitions=3,
                        accountant=BudgetAccountant(),
                        random_state=0).fit(X, y)
    PrivateRandomizedSearchCV(_Chatty(), {}, accountant=BudgetAccountant(),
                              random_state=0).fit(X, y)
    out, err = capfd.readouterr()
    assert SECRET not in out + err
    # The search's own verbose lines still reach the user (counts and budgets only).
    PrivateGridSearchCV(_Chatty(), TWO, selection_epsilon=1.0, n_partitions=3,
                        accountant=BudgetAccountant(),
                        random_state=0, verbose=1).fit(X, y)
    out, _ = capfd.readouterr()
    assert "Fitting 3 partitions" in out and SECRET not in out


def test_revealed_fits_print_for_debugging(binary_data, capfd):
    X, y = binary_data
    with skdptune.reveal_fit_messages():
        PrivateGridSearchCV(_Chatty(), TWO, refit=False, n_partitions=3,
                            accountant=BudgetAccountant(), random_state=0).fit(X, y)
    out, err = capfd.readouterr()
    assert f"{SECRET} fd1" in out and f"{SECRET} stderr" in err
