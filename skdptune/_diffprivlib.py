"""Every private part of diffprivlib the library uses, in one place, with the version pin.

The released models' charges and zero-out factors (their rooms, ``skdptune/_models/``) are
proved for diffprivlib 0.6.6's code, some of it private, and the batched engine's emulations
reproduce that code's law (``skdptune/_batched/engine.py``, ``TESTED_VERSIONS``).
``pyproject.toml`` pins ``diffprivlib>=0.6.6,<0.7``; a release that moves or changes one of
these touches this file, and the proofs must be checked again before the pin moves (DESIGN.md,
"The version pin").

Imported from here (module-level privates):

- ``logistic_regression_path``: ``diffprivlib.models.logistic_regression._logistic_regression_path``,
  the objective-perturbed solver skdptune's ``LogisticRegression`` calls;
- ``validate_data``: scikit-learn's ``validate_data`` as diffprivlib's models import it (the
  function from scikit-learn 1.6, the method before).

Used by inheritance (private methods of diffprivlib's model classes that skdptune's models
derive from, covered by the same pin): ``_check_bounds``, ``_clip_to_bounds``,
``_warn_unused_args`` and ``KMeans._calc_iters``; and ``_parameter_constraints``, extended.
"""

import diffprivlib
from diffprivlib.models.linear_regression import validate_data
from diffprivlib.models.logistic_regression import (
    _logistic_regression_path as logistic_regression_path,
)

#: The diffprivlib release every proof and emulation was checked against.
PROVED_FOR = "0.6.6"

#: The installed release (``pyproject.toml`` keeps it within ``>=0.6.6,<0.7``).
INSTALLED = diffprivlib.__version__

__all__ = ["INSTALLED", "PROVED_FOR", "logistic_regression_path", "validate_data"]
