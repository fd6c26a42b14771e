"""Where a warning of the library points: at the user's code, whatever the call path."""

import os
import sys

import sklearn

#: Frames in these directories are not the user's: the library itself, and scikit-learn,
#: whose ``_fit_context`` wraps every search's ``fit`` (and whose meta-estimators, such as
#: ``cross_val_score``, may be what called it).
_LIBRARY_DIRS = tuple(os.path.dirname(os.path.abspath(module.__file__)) + os.sep
                      for module in (sys.modules[__package__], sklearn))


def user_stacklevel():
    """The ``stacklevel`` that makes a ``warnings.warn`` in the caller of this function point
    at the user's code: the first frame outside skdptune and scikit-learn.

    A hard-coded stack level counts the frames of one call path, and points elsewhere (at
    ``sys:1`` when it runs past the stack) on another: the grid and the randomized searches
    reach the same check through different depths. The stack is walked instead (Python
    3.12's ``skip_file_prefixes`` does the same, but the library supports 3.10).

    Returns
    -------
    stacklevel : int
        For ``warnings.warn`` called in the same function as this.
    """
    frame, level = sys._getframe(1), 1  # stacklevel 1: the function that warns
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _LIBRARY_DIRS):
        frame, level = frame.f_back, level + 1
    return level
