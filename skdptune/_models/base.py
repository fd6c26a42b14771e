"""The fit prologue every DP model of the library shares (DESIGN.md, "Adding a model").

Before a room's fit reads the data it does the same four things, in this order
(:func:`start_fit`): it validates its parameters (scikit-learn's constraints), refuses every
public parameter left undeclared (:func:`refuse_undeclared`, one wording, shared with the refit
gate through :func:`undeclared_reason`), checks ``epsilon`` on its accountant
(:func:`accountant_of`, the one resolution of ``accountant=None``) and warns that
``sample_weight`` is ignored. Its noise, and the data-independent draws of a model that has a
random structure, come from :func:`random_sources`.
"""

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from sklearn.utils import check_random_state

#: How an undeclared parameter is declared, for the remedy in the refusal; ``...`` otherwise.
FORMS = {"bounds": "(lower, upper)", "bounds_X": "(lower, upper)",
         "bounds_y": "(lower, upper)", "classes": "[...]"}

#: Why a parameter read from the data is refused: diffprivlib reads it from the data with a
#: ``PrivacyLeakWarning`` (no finite epsilon covers what it reads).
LEAK = "not private: diffprivlib warns PrivacyLeakWarning"


def undeclared_reason(name, why=LEAK, alternative=None):
    """Why ``name=None`` is refused, and the fix: the one wording of the refusal.

    Parameters
    ----------
    name : str
        The parameter left undeclared.
    why : str, default=LEAK
        Why reading it from the data is refused.
    alternative : str or None, default=None
        Another fix than declaring it, e.g. ``"centered=True for centred data"``.

    Returns
    -------
    reason : str
        ``"{name}=None would be read from the private data ({why}); declare {name}=... from
        public knowledge"`` (then ``", or {alternative}"``).
    """
    reason = (f"{name}=None would be read from the private data ({why}); declare "
              f"{name}={FORMS.get(name, '...')} from public knowledge")
    return reason if alternative is None else f"{reason}, or {alternative}"


def refuse_undeclared(model, names, alternatives=None):
    """Raise for every parameter of ``names`` that ``model`` leaves None.

    Decided from the parameters alone: called before the accountant is checked and before the
    data are read (DESIGN.md, "Decide from parameters").

    Parameters
    ----------
    model : estimator
    names : iterable of str
        The public parameters the fit needs declared.
    alternatives : dict or None, default=None
        ``{name: another fix}`` (:func:`undeclared_reason`'s ``alternative``).

    Raises
    ------
    ValueError
        Naming the model and each undeclared parameter, with why and the fix.
    """
    alternatives = alternatives or {}
    missing = [name for name in names if getattr(model, name) is None]
    if missing:
        raise ValueError(f"{type(model).__name__}: " + "; ".join(
            undeclared_reason(name, alternative=alternatives.get(name)) for name in missing)
            + ".")


def declared_class_count(step):
    """How many classes ``step`` declares (``classes``), 2 when it declares none: the
    tuning policy's count of noisy per-class quantities, a public parameter.

    Parameters
    ----------
    step : estimator

    Returns
    -------
    n_classes : int
    """
    classes = getattr(step, "classes", None)
    return 2 if classes is None else len(np.unique(np.asarray(classes)))


def accountant_of(model):
    """The accountant a fit checks and records on: ``model.accountant``, or diffprivlib's
    default accountant when it is None (``BudgetAccountant.load_default``, looked up when the
    fit runs: the same object for the check and the record)."""
    return BudgetAccountant.load_default(model.accountant)


def start_fit(model, declared, sample_weight=None, alternatives=None):
    """What every fit does before it reads the data, in this order.

    Validates the parameters (``_validate_params``), refuses the undeclared ones of
    ``declared`` (:func:`refuse_undeclared`), checks ``model.epsilon`` on
    :func:`accountant_of` (``BudgetError`` when it would exceed the budget: nothing is
    recorded) and warns that ``sample_weight`` is ignored, as diffprivlib does.

    Parameters
    ----------
    model : estimator
        One of the library's DP models.
    declared : iterable of str
        The public parameters this fit needs.
    sample_weight : array-like or None, default=None
    alternatives : dict or None, default=None
        As for :func:`refuse_undeclared`.
    """
    model._validate_params()
    refuse_undeclared(model, declared, alternatives)
    accountant_of(model).check(model.epsilon, 0)
    if sample_weight is not None:
        model._warn_unused_args("sample_weight")


def random_sources(random_state, structure=False):
    """A fit's noise generator and, where it draws a random structure, its own generator.

    The noise (data-dependent: every draw a mechanism makes on the data) and the structure
    (data-independent: a tree's splits, a forest's shuffle, k-means' seeds and redrawn
    centres) never share a stream, so the structure is the same whatever the noise drew, and
    no noise is drawn from numpy's global generator (DESIGN.md, "Randomness").

    Parameters
    ----------
    random_state : None, int or numpy.random.RandomState
        The model's ``random_state``. None is the only setting with a privacy guarantee; a
        seed makes fits reproducible and has none (whoever knows it knows the noise).
    structure : bool, default=False
        Whether the fit draws a random structure.

    Returns
    -------
    noise : None or numpy.random.RandomState
        None for ``random_state=None``: diffprivlib's mechanisms then sample from
        :mod:`secrets`. Without ``structure``, a seed's ``RandomState`` as scikit-learn's
        ``check_random_state`` gives it (an int makes a new one; a ``RandomState`` is used and
        advances); with it, a ``RandomState`` independent of ``structure``.
    structure : None or numpy.random.Generator
        None unless ``structure``. For ``random_state=None`` seeded from fresh OS entropy
        (never numpy's global generator, whose state a user's ``np.random.seed`` sets); for a
        seed, the other child of one ``SeedSequence`` whose entropy comes from the seed.
    """
    if not structure:
        return (None if random_state is None else check_random_state(random_state)), None
    if random_state is None:
        return None, np.random.default_rng()
    entropy = check_random_state(random_state).randint(np.iinfo(np.int32).max, size=4)
    structure_seed, noise_seed = np.random.SeedSequence(entropy.tolist()).spawn(2)
    return (np.random.RandomState(np.random.MT19937(noise_seed)),
            np.random.default_rng(structure_seed))
