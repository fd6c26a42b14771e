"""The documentation's promises that a test can keep: the README's usage snippet runs and prints
what it shows, its set-up commands are intact, and the API reference lists every public name.

The Sphinx build itself (every gallery example run, warnings as errors) is the README's docs
command, run by .ci/run after this suite.
"""

import contextlib
import importlib
import inspect
import io
import re
import warnings
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
API = (ROOT / "docs" / "api.rst").read_text()

#: The modules whose public names are API: classes and functions defined in them without a
#: leading underscore, constants with a ``#:`` doc comment, and ``__all__``.
PUBLIC_MODULES = [
    "skdptune",
    "skdptune.accounting",
    "skdptune.evaluate",
    "skdptune.exceptions",
    "skdptune.partition_scaling",
    "skdptune.forecast",
    "skdptune.gate",
    "skdptune.partition",
    "skdptune.plotting",
    "skdptune.preprocessing",
    "skdptune.randomized",
    "skdptune.search",
    "skdptune.selection",
    "skdptune.selection.doubling",
    "skdptune.selection.exponential",
    "skdptune.selection.permute_and_flip",
    "skdptune.selection.report_noisy_max",
    "skdptune.selection.score",
    "skdptune.utility",
]


def _usage_snippet():
    section = README.split("## Usage", 1)[1]
    return section.split("```python", 1)[1].split("```", 1)[0]


def test_readme_keeps_its_set_up_commands():
    assert "pip install . && python examples/quickstart.py" in README
    assert 'pip install ".[test]" && python -m pytest' in README
    assert 'pip install ".[docs]" && python -m sphinx -W -b html docs docs/_build/html' in README


def test_readme_usage_runs_and_prints_what_it_shows():
    output = io.StringIO()
    with contextlib.redirect_stdout(output), warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        exec(compile(_usage_snippet(), "README.md usage", "exec"), {"__name__": "readme"})
    lines = output.getvalue().splitlines()
    assert len(lines) == 4, lines
    assert lines[0].startswith("{'C': ")
    # privacy_spent_ and the accountant: selection 1.0 + refit 1.0, delta at most 1e-6.
    assert lines[1] == lines[2]
    epsilon, delta = map(float, re.fullmatch(r"\(epsilon=(.*), delta=(.*)\)", lines[1]).groups())
    assert epsilon == pytest.approx(2.0) and delta <= 1e-6
    assert 0 <= float(lines[3]) <= 1


def _documented_objects():
    """``{id(object)}`` of everything api.rst lists under an autosummary."""
    documented, module = set(), None
    in_autosummary = False
    for line in API.splitlines():
        if line.startswith(".. currentmodule::"):
            module = importlib.import_module(line.split("::")[1].strip())
            in_autosummary = False
        elif line.startswith(".. autosummary::"):
            in_autosummary = True
        elif in_autosummary and line.startswith("   ") and not line.strip().startswith(":"):
            name = line.strip()
            assert hasattr(module, name), f"api.rst lists {module.__name__}.{name}, which is gone"
            documented.add(id(getattr(module, name)))
        elif in_autosummary and line and not line.startswith(" "):
            in_autosummary = False
    return documented


def _public_names(module):
    names = set(getattr(module, "__all__", ()))
    for name, value in vars(module).items():
        if name.startswith("_"):
            continue
        if (inspect.isclass(value) or inspect.isfunction(value)) and (
                value.__module__ == module.__name__):
            names.add(name)
    source = inspect.getsource(module).splitlines()
    for previous, line in zip(source, source[1:]):
        # Module-level constants documented for Sphinx with a "#:" comment.
        match = re.match(r"([A-Z][A-Z0-9_]*(?:\s*,\s*[A-Z][A-Z0-9_]*)*)\s*[:=]", line)
        if match and previous.startswith("#:"):
            names.update(part.strip() for part in match.group(1).split(","))
    return names


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_api_reference_lists_every_public_name(module_name):
    module = importlib.import_module(module_name)
    documented = _documented_objects()
    missing = sorted(name for name in _public_names(module)
                     if id(getattr(module, name)) not in documented)
    assert not missing, (
        f"docs/api.rst does not list {module_name}'s public names {missing}: add them to an "
        "autosummary (or make them private with a leading underscore)."
    )
