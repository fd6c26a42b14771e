"""Every private scikit-learn import the library uses, in one place.

A scikit-learn upgrade that moves one of these touches this file only.
"""

import inspect

from sklearn._loss.loss import HalfBinomialLoss
from sklearn.base import _fit_context
from sklearn.metrics._scorer import _check_multimetric_scoring, _PassthroughScorer
from sklearn.model_selection._search import _yield_masked_array_for_each_param
from sklearn.tree._tree import NODE_DTYPE, Tree
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    Options,
    StrOptions,
)
from sklearn.utils import _safe_indexing, check_array
from sklearn.utils._indexing import _get_column_indices

try:  # scikit-learn >= 1.7
    from sklearn.utils._repr_html.estimator import _VisualBlock
except ImportError:  # scikit-learn 1.4 to 1.6
    from sklearn.utils._estimator_html_repr import _VisualBlock
from sklearn.utils._metadata_requests import _raise_for_params, _routing_enabled
from sklearn.utils.validation import _check_method_params, _get_feature_names, _num_features

# check_array's keyword for NaN and infinity: ensure_all_finite from scikit-learn 1.6,
# force_all_finite before.
ALL_FINITE_KEYWORD = ("ensure_all_finite"
                      if "ensure_all_finite" in inspect.signature(check_array).parameters
                      else "force_all_finite")

__all__ = [
    "ALL_FINITE_KEYWORD",
    "HalfBinomialLoss",
    "HasMethods",
    "Interval",
    "NODE_DTYPE",
    "Options",
    "StrOptions",
    "Tree",
    "_VisualBlock",
    "_check_method_params",
    "_check_multimetric_scoring",
    "_get_column_indices",
    "_fit_context",
    "_get_feature_names",
    "_num_features",
    "_PassthroughScorer",
    "_raise_for_params",
    "_routing_enabled",
    "_safe_indexing",
    "_yield_masked_array_for_each_param",
]
