"""The batched engine's registry: which classes it fits, and with which module.

Plain dicts of class -> module, matched by exact class (a subclass may change ``fit``).
Adding a family is its module (:class:`~skdptune._batched.contract.Family`) and one row of
:data:`FAMILIES`; adding a partition step, its module
(:class:`~skdptune._batched.contract.PartitionStep`) and one row of :data:`PARTITION_STEPS`.
"""

from diffprivlib.models import (
    PCA,
    DecisionTreeClassifier,
    GaussianNB,
    KMeans,
    LinearRegression,
    LogisticRegression,
    RandomForestClassifier,
    StandardScaler,
)

from .._models.cluster import KMeans as PrivateKMeans
from .._models.decomposition import PCA as PrivatePCA
from .._models.ensemble import RandomForestClassifier as SecureRandomForestClassifier
from .._models.linear_model import LogisticRegression as CalibratedLogisticRegression
from .._models.linear_model import Ridge
from .._models.naive_bayes import GaussianNB as DeclaredGaussianNB
from .._models.tree import DecisionTreeClassifier as SecureDecisionTreeClassifier
from . import (
    bingham_pca,
    dp_lloyd,
    forest,
    gaussian_nb,
    kmeans,
    linear_regression,
    logistic_regression,
    pca,
    standard_scaler,
)

#: Estimator class -> batched family module.
FAMILIES = {
    GaussianNB: gaussian_nb,
    DeclaredGaussianNB: gaussian_nb,
    LogisticRegression: logistic_regression,
    CalibratedLogisticRegression: logistic_regression,
    RandomForestClassifier: forest,
    DecisionTreeClassifier: forest,
    SecureRandomForestClassifier: forest,
    SecureDecisionTreeClassifier: forest,
    LinearRegression: linear_regression,
    Ridge: linear_regression,
    KMeans: kmeans,
    PrivateKMeans: dp_lloyd,
}

#: DP transformer class -> partition step module: fitted per partition, inside the task,
#: before the family.
PARTITION_STEPS = {
    StandardScaler: standard_scaler,
    PCA: pca,
    PrivatePCA: bingham_pca,
}
