"""The refit gate's audit of classes that are not skdptune's: what the allowlist says of them.

skdptune's own DP models keep their facts in their rooms (``skdptune/_models/``); the classes
of other libraries that :data:`skdptune._gate.ALLOWED` lists keep theirs here, and the table's
rows (read top to bottom in ``skdptune/_gate.py``) cite them:

- diffprivlib 0.6.6's models: the public parameters checked wherever they are given
  (:data:`PUBLIC_PARAMETERS`), what its ``StandardScaler`` releases, and, for every other
  model, why a released fit is refused (a ``condition`` of its row: each is allowed in
  partition fits only, replaced for release by skdptune's model of the same law, whose room
  gives the row its charge, zero-out factor and noise dimension);
- scikit-learn's compositions and public steps: the configurations in which fitting one reads
  something private (a ``condition`` of its row);
- classes off the allowlist that users commonly reach for: the remedy a refusal names
  (:data:`REMEDIES`), or why a meta-estimator cannot be released (:data:`META_REASONS`).

A ``condition`` is ``condition(step) -> str or None``: the reason (with its remedy) to refuse
that configuration, or None (``skdptune._gate.Rule``).
"""

from numbers import Real

import numpy as np
from sklearn.compose import make_column_selector
from sklearn.feature_extraction.text import TfidfVectorizer


def _public_number(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        return f"{name}={value!r} ({type(value).__name__}) is not a number"
    return None


def _check_norm(value, name):
    """A bound on every row's L2 norm: a positive finite number."""
    reason = _public_number(value, name)
    if reason is None and not (np.isfinite(value) and value > 0):
        reason = f"{name}={value!r} is not a positive finite number"
    return reason and f"{reason}; declare the largest L2 norm a row can have, e.g. {name}=1.0"


def _check_bounds(value, name):
    """``(lower, upper)``: finite numbers or equal-length 1-d arrays, ``lower <= upper``.

    diffprivlib's own check lets NaN through, and its bounded-domain samplers never return on
    infinite bounds (DESIGN.md, "Environment facts"), so the values are checked here.
    """
    remedy = (f"declare {name}=(lower, upper) with finite lower <= upper, numbers or one value "
              "per feature, from public knowledge")
    try:
        lower, upper = value
        lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    except (TypeError, ValueError):
        return f"{name}={value!r} is not a pair (lower, upper) of numbers; {remedy}"
    if lower.ndim > 1 or upper.ndim > 1 or (lower.ndim == upper.ndim == 1
                                             and lower.shape != upper.shape):
        return (f"{name} has lower of shape {lower.shape} and upper of shape {upper.shape}; "
                f"{remedy}")
    if lower.size == 0 or upper.size == 0:
        return f"{name}={value!r} is empty; {remedy}"
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        return f"{name}={value!r} is not finite (NaN or infinity); {remedy}"
    if np.any(lower > upper):
        return f"{name}={value!r} has a lower bound above its upper bound; {remedy}"
    return None


def _check_classes(value, name):
    """The declared class labels: a non-empty sequence."""
    try:
        size = np.asarray(value, dtype=object).size
    except (TypeError, ValueError):
        size = 0
    if isinstance(value, str) or size == 0:
        return f"{name}={value!r} is not a non-empty list of class labels; declare {name}=[...]"
    return None


#: Public parameters of diffprivlib models, checked wherever they are given (refit or not, on
#: every candidate and every partition fit): a bad public bound fails every fit, or hangs it,
#: or releases a model of NaNs. Adding a parameter is one line here.
PUBLIC_PARAMETERS = {
    "data_norm": _check_norm,
    "bounds": _check_bounds,
    "bounds_X": _check_bounds,
    "bounds_y": _check_bounds,
    "classes": _check_classes,
}


#: What diffprivlib's ``StandardScaler``'s released fit keeps, each with why its mechanism
#: covers it (the only diffprivlib model released: the others' rows release nothing, ``{}``).
#: An attribute that a fit sets and that is not listed is removed before release
#: (``skdptune._gate.keep_released``); the test that lists every released attribute
#: (tests/unit/test_released_attributes.py) fails when a diffprivlib release adds one, so that
#: it is classified.
SCALER_RELEASES = {
    "mean_": "noisy means (diffprivlib.tools.nanmean, Laplace)",
    "var_": "noisy variances (diffprivlib.tools.nanvar)",
    "scale_": "the square root of var_: post-processing",
    "n_samples_seen_": "the number of records n (public under replace-one adjacency)",
}


def logistic_regression_release(step):
    """Why a released fit of diffprivlib 0.6.6's ``LogisticRegression`` is refused: it
    takes ``classes_`` from the data, and its calibration covers only rows in the unit ball
    without an intercept (``skdptune.linear_model.LogisticRegression`` says why)."""
    problems = ["it takes classes_ from the data (a class held by one record shows in the "
                "model, which no epsilon covers)"]
    if step.fit_intercept:
        problems.append("its intercept is not penalised, which no epsilon covers")
    elif step.data_norm is not None and step.data_norm > 1:
        problems.append(f"with data_norm={step.data_norm!r} > 1 its noise is calibrated to "
                        "data_norm / 4 instead of data_norm**2 / 4")
    return (f"diffprivlib 0.6.6's LogisticRegression is not epsilon-DP as released: "
            f"{'; '.join(problems)}. Use skdptune.linear_model.LogisticRegression with the same "
            "parameters and classes=[...] declared (the same model, fitted where "
            "diffprivlib's calibration holds, over the declared classes), or refit=False")


def gaussian_nb_release(step):
    """Why a released fit of diffprivlib 0.6.6's ``GaussianNB`` is refused: it releases
    statistics of the classes present in the data only."""
    return ("diffprivlib 0.6.6's GaussianNB takes classes_ from the data and fits only the "
            "classes present (a class held by one record appears in the model or not with it, "
            "which no epsilon covers). Use skdptune.naive_bayes.GaussianNB with the same "
            "parameters and classes=[...] declared (the same mechanisms over every declared "
            "class), or refit=False")


def kmeans_release(step):
    """Why a released fit of diffprivlib 0.6.6's ``KMeans`` is refused: no factor makes it
    differentially private."""
    return ("diffprivlib 0.6.6's KMeans is not differentially private at any epsilon: a "
            "cluster that no record is nearest to keeps its centre exactly, with no noise "
            "(`if cluster not in labels: continue`), so one record decides whether a centre "
            "moves; and the fitted model keeps every training row's cluster (labels_) and the "
            "exact inertia_. Use skdptune.cluster.KMeans(bounds=...) (the algorithm diffprivlib "
            "intends, private under replace-one adjacency, with the same parameters), or "
            "refit=False (its partition fits, never released, still select)")


def diffprivlib_tree_release(step):
    """Why a released fit of diffprivlib 0.6.6's ``DecisionTreeClassifier`` or
    ``RandomForestClassifier`` is refused: not private at any epsilon (``skdptune.tree`` and
    ``skdptune.ensemble`` say why and fit the same law securely)."""
    name = type(step).__name__
    module = "ensemble" if name == "RandomForestClassifier" else "tree"
    fault = ("scikit-learn's ensemble gives every tree an integer seed, kept in the released "
             "model (estimators_[i].random_state), and each tree draws its splits and its leaf "
             "labels from it: refitting from the stored seeds reproduces the forest and names "
             "a record's label (the seeds can also be recovered from the released thresholds)"
             if module == "ensemble" else
             "its leaves that no record reaches are labelled by numpy's global generator "
             "(randint), which any np.random.seed in the program fixes, and its splits come "
             "from that generator too")
    return (f"diffprivlib 0.6.6's {name} is not differentially private at any epsilon: "
            f"{fault}. Use skdptune.{module}.{name} with the same parameters (the same law, "
            "its noise from a secure source and kept apart from the public structure), or "
            "refit=False (its partition fits, never released, still select)")


def linear_regression_calibration(step):
    """Why a released fit of diffprivlib 0.6.6's ``LinearRegression`` is refused: it is not
    epsilon-DP (``skdptune.linear_model.Ridge`` makes the same releases correctly
    calibrated)."""
    return ("diffprivlib 0.6.6's LinearRegression is not epsilon-DP: the noise on each "
            "diagonal sum(x_j**2) is calibrated to the lower bound alone (none at all when it is "
            "0; IBM/differential-privacy-library#105), and its centring spends epsilon / (d + 1) "
            "on X's means and again on y's. Use skdptune.linear_model.Ridge(alpha=0.0, "
            "noise_alpha=0.0, bounds_X=..., bounds_y=...) for the same model correctly "
            "calibrated (or its default penalty, usually better), or refit=False")


def pca_release(step):
    """Why a released fit of diffprivlib 0.6.6's ``PCA`` is refused: no factor is known to
    cover what it spends."""
    return ("diffprivlib 0.6.6's PCA samples its components from the wrong distribution: its "
            "Bingham sampler's rejection step divides by (u' Omega u)**(d/2) where it should "
            "multiply, and the law it samples from spends more than its share of epsilon per "
            "component (1.21 times at d = 5 and 1.09 at d = 10 in an exact search over "
            "neighbouring datasets; up to 1.5 times in an independent review); no charge is "
            "known to cover the whole fit. Use skdptune.decomposition.PCA(data_norm=..., "
            "bounds=...) (the same releases, the components from the intended law), or "
            "refit=False (its partition fits, never released, still select)")


def declared_categories(step):
    """Why an encoder reads private data when fitted, or None: categories learnt from the
    data, or merged by their counts in it."""
    reasons = []
    if isinstance(step.categories, str):
        reasons.append(
            f"categories={step.categories!r} learns the categories from the data (a category "
            "held by one record would show); declare them: "
            f"{type(step).__name__}(categories=[[...], ...]) from public knowledge"
        )
    for name in ("min_frequency", "max_categories"):
        if getattr(step, name, None) is not None:
            reasons.append(f"{name}={getattr(step, name)!r} merges categories by their counts in "
                           f"the data; set {name}=None")
    return "; ".join(reasons) or None


def fixed_vocabulary(step):
    """Why a text vectoriser reads private data when fitted, or None: a vocabulary or
    document frequencies learnt from the data."""
    if step.vocabulary is None:
        return ("vocabulary=None learns the vocabulary from the data (and min_df/max_df/"
                "max_features count documents); declare vocabulary=[...] from public knowledge, "
                "or use HashingVectorizer, which learns nothing")
    if isinstance(step, TfidfVectorizer) and step.use_idf:
        return ("use_idf=True learns document frequencies from the data; set use_idf=False, or "
                "scale term counts with a DP step")
    return None


def constant_imputer(step):
    """Why a ``SimpleImputer`` reads private data when fitted, or None: fill values or
    missing-value indicators learnt from the data."""
    reasons = []
    if step.strategy != "constant":
        reasons.append(f"strategy={step.strategy!r} learns fill values from the data; use "
                       "strategy='constant' with a public fill_value")
    if step.add_indicator:
        reasons.append("add_indicator=True learns which features have missing values; set "
                       "add_indicator=False")
    return "; ".join(reasons) or None


def identity_only(step):
    """Why a ``FunctionTransformer`` is not known to be row-wise, or None: any ``func``
    besides the identity."""
    if step.func is not None or step.inverse_func is not None:
        return ("FunctionTransformer's func is not known to be row-wise (e.g. "
                "`lambda Z: Z - Z.mean(0)` lets one record move every row). If func maps each "
                "row to its output using that row and public constants only, declare it so with "
                "skdptune.preprocessing.RowWiseFunctionTransformer(func)")
    return None


def no_memory(step):
    """Why a ``Pipeline`` is refused, or None: a cache could replay a fit without spending
    its budget."""
    if step.memory is not None:
        return ("memory caches fitted transformers, so a refit could reuse a fit without "
                "spending its budget (and private models are written to disk); set memory=None")
    return None


def public_columns(step):
    """Why a ``ColumnTransformer`` is refused, or None: a branch whose columns a callable
    chooses, which may read the data."""
    for name, _, columns in step.transformers:
        if callable(columns) and not isinstance(columns, make_column_selector):
            return (f"the columns of branch {name!r} are chosen by a callable, which may read the "
                    "data; give column names or indices, or a make_column_selector (which reads "
                    "the schema only)")
    return None


#: Why a stateless, row-wise transformer is allowed.
PUBLIC_ROW_WISE = "stateless and row-wise: fitting reads nothing private"
#: Why diffprivlib's trees are allowed in partition fits only.
DIFFPRIVLIB_TREE_WHY = ("refused in a released fit: diffprivlib 0.6.6's trees draw their leaf "
                        "labels from a generator the model carries or that the program seeds "
                        "(_gate_audit.diffprivlib_tree_release says why); partition fits only")

#: Advice for classes users commonly reach for, by class name; anything else gets the
#: generic remedy (``skdptune._gate``'s refusal of a class off the allowlist).
REMEDIES = {
    "LogisticRegression": "skdptune.linear_model.LogisticRegression(data_norm=..., "
                          "classes=...)",
    "GaussianNB": "skdptune.naive_bayes.GaussianNB(bounds=..., classes=...)",
    "LinearRegression": "skdptune.linear_model.Ridge(bounds_X=..., bounds_y=...)",
    "Ridge": "skdptune.linear_model.Ridge(alpha=..., bounds_X=..., bounds_y=...)",
    "KMeans": "skdptune.cluster.KMeans(bounds=...)",
    "PCA": "skdptune.decomposition.PCA(data_norm=..., bounds=...)",
    "StandardScaler": "diffprivlib.models.StandardScaler(bounds=...)",
    "MinMaxScaler": "diffprivlib.models.StandardScaler(bounds=...), or a "
                    "skdptune.preprocessing.RowWiseFunctionTransformer scaling by public bounds",
    "RandomForestClassifier": "skdptune.ensemble.RandomForestClassifier(bounds=..., "
                              "classes=...)",
    "DecisionTreeClassifier": "skdptune.tree.DecisionTreeClassifier(bounds=..., classes=...)",
}

#: Meta-estimators that are not pure compositions, by class name, and why each cannot be
#: released.
META_REASONS = {
    "GridSearchCV": "it releases raw cross-validation scores (cv_results_, best_score_); put "
                    "its grid in this search's param_grid instead",
    "RandomizedSearchCV": "it releases raw cross-validation scores; use "
                          "skdptune.PrivateRandomizedSearchCV",
    "CalibratedClassifierCV": "its calibration maps are fitted on private decision values "
                              "without privacy",
    "BaggingClassifier": "its out-of-bag scores are not private and it may fit in other "
                         "processes, where spends go unseen",
    "BaggingRegressor": "its out-of-bag scores are not private and it may fit in other "
                        "processes, where spends go unseen",
    "VotingClassifier": "its members are not checked and may fit in other processes",
    "VotingRegressor": "its members are not checked and may fit in other processes",
    "StackingClassifier": "its final estimator is fitted on cross-validated private "
                          "predictions",
    "StackingRegressor": "its final estimator is fitted on cross-validated private predictions",
    "OneVsRestClassifier": "it fits one model per class present in the data, so what it "
                           "spends depends on the data",
    "OneVsOneClassifier": "it fits one model per pair of classes present in the data, so what "
                          "it spends depends on the data",
    "TransformedTargetRegressor": "its target transformer is fitted on private targets",
}
