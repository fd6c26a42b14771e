"""The documentation's promises that a test can keep: the README's usage snippet runs and prints
what it shows, its set-up commands are intact, and the API reference lists exactly the public
names (``__all__`` of the public modules, tests/integration/test_layout.py's PUBLIC_MODULES).

The Sphinx build itself (every gallery example run, warnings as errors) is the README's docs
command, run by .ci/run after this suite.
"""

import ast
import contextlib
import importlib
import io
import json
import re
import sys
import warnings
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

from test_layout import PUBLIC_MODULES

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
API = (ROOT / "docs" / "api.rst").read_text()

def _usage_snippet():
    section = README.split("## Usage", 1)[1]
    return section.split("```python", 1)[1].split("```", 1)[0]


def test_readme_keeps_its_set_up_commands():
    assert "pip install . && python examples/quickstart.py" in README
    assert 'pip install ".[test]" && python -m pytest' in README
    assert 'pip install ".[docs]" && python -m sphinx -W -b html docs docs/_build/html' in README


def test_readme_usage_runs_and_prints_what_it_shows():
    output = io.StringIO()
    namespace = {"__name__": "readme"}
    with contextlib.redirect_stdout(output), warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        exec(compile(_usage_snippet(), "README.md usage", "exec"), namespace)
        # Every forecast call the README shows runs on the usage's search (issue 33: the
        # README's search.forecast() failed under n_partitions="auto").
        calls = set(re.findall(r"`(search\.forecast\([^`]*\))`", README))
        assert calls, "the README shows no forecast call"
        for call in calls:
            eval(call, namespace)
    lines = output.getvalue().splitlines()
    assert len(lines) == 4, lines
    assert lines[0].startswith("{'C': ")
    # privacy_spent_ and the accountant: selection 1.0 + refit 1.0, delta at most 1e-6.
    assert lines[1] == lines[2]
    epsilon, delta = map(float, re.fullmatch(r"\(epsilon=(.*), delta=(.*)\)", lines[1]).groups())
    assert epsilon == pytest.approx(2.0) and delta <= 1e-6
    assert 0 <= float(lines[3]) <= 1
    # Each print's comment shows what it prints: as printed, or "e.g. <a value of that form>"
    # where the output is random (the private choice, the released model's accuracy).
    # Before: "epsilon 2.0 in all" for a line that prints "(epsilon=2.0, delta=0.0)".
    comments = [line.split("# ", 1)[1] for line in _usage_snippet().splitlines()
                if line.startswith("print(")]
    assert len(comments) == len(lines)
    for printed, comment in zip(lines, comments):
        example = re.match(r"e\.g\. (\{[^}]*\}|[-+0-9.e]+):", comment)
        if example is None:
            assert comment.startswith(printed + ":"), (printed, comment)
        else:
            shown, real = ast.literal_eval(example.group(1)), ast.literal_eval(printed)
            assert type(shown) is type(real), (printed, comment)
            if isinstance(real, dict):
                assert shown.keys() == real.keys(), (printed, comment)


def test_readme_sets_up_a_venv_and_says_how_long_the_tests_take():
    set_up = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    assert "python -m venv .venv && . .venv/bin/activate" in set_up
    # The venv comes before anything is installed.
    assert set_up.index("python -m venv") < set_up.index("pip install")
    assert re.search(r"It takes (about )?\d+( to \d+)? minutes", set_up)
    # The venv it creates in the repository's root is not committed (issue 33, item 8).
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert ".venv/" in ignored or ".venv" in ignored


def test_readme_runs_the_notebook_with_what_the_notebook_extra_installs():
    set_up = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    command = re.search(r'pip install "\.\[notebook\]" && jupyter execute (\S+\.ipynb)', set_up)
    assert command, "README.md gives no command that runs the notebook"
    notebook = ROOT / command.group(1)
    assert notebook.exists()
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    def names(requirements):
        return {re.split(r"[<>=!\[ ;]", requirement, maxsplit=1)[0].lower()
                for requirement in requirements}

    extra = names(project["optional-dependencies"]["notebook"])
    assert {"nbclient", "ipykernel"} <= extra  # `jupyter execute` and a kernel
    # Every package the notebook imports is installed by the package or the extra.
    installed = names(project["dependencies"]) | extra
    distributions = {"sklearn": "scikit-learn", "skdptune": None}
    cells = [cell for cell in json.loads(notebook.read_text())["cells"]
             if cell["cell_type"] == "code"]
    for cell in cells:
        for line in "".join(cell["source"]).splitlines():
            imported = re.match(r"\s*(?:from|import) (\w+)", line)
            if imported is None or imported.group(1) in sys.stdlib_module_names:
                continue
            distribution = distributions.get(imported.group(1), imported.group(1))
            assert distribution is None or distribution in installed, (
                f"{notebook.name} imports {imported.group(1)}, which the notebook extra does "
                "not install")


def _documented():
    """``[(module name, name)]`` of everything api.rst lists under an autosummary, and the
    modules its ``automodule`` and ``currentmodule`` directives name."""
    documented, modules, module = [], set(), None
    in_autosummary = False
    for line in API.splitlines():
        if line.startswith((".. currentmodule::", ".. automodule::")):
            modules.add(line.split("::")[1].strip())
        if line.startswith(".. currentmodule::"):
            module = line.split("::")[1].strip()
            in_autosummary = False
        elif line.startswith(".. autosummary::"):
            in_autosummary = True
        elif in_autosummary and line.startswith("   ") and not line.strip().startswith(":"):
            documented.append((module, line.strip()))
        elif in_autosummary and line and not line.startswith(" "):
            in_autosummary = False
    return documented, modules


def _documented_objects():
    """``{id(object)}`` of everything api.rst lists (a name re-exported by two public modules,
    such as the displays in ``skdptune`` and ``skdptune.plotting``, is listed once)."""
    objects = set()
    for module_name, name in _documented()[0]:
        module = importlib.import_module(module_name)
        assert hasattr(module, name), f"api.rst lists {module_name}.{name}, which is gone"
        objects.add(id(getattr(module, name)))
    return objects


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_api_reference_lists_every_public_name(module_name):
    module = importlib.import_module(module_name)
    documented = _documented_objects()
    missing = sorted(name for name in module.__all__
                     if id(getattr(module, name)) not in documented)
    assert not missing, (
        f"docs/api.rst does not list {module_name}'s public names {missing} (its __all__): "
        "add them to an autosummary, or take them out of __all__."
    )


def test_api_reference_lists_nothing_else():
    # Public = what a user imports (issue 31, item 4): the API pages document the public
    # modules' __all__ and nothing else, so an internal name can change without a
    # deprecation. Before: about 320 names over 38 modules, the batched engine's included.
    documented, modules = _documented()
    not_public = sorted(modules - set(PUBLIC_MODULES))
    assert not not_public, f"docs/api.rst documents modules that are not public: {not_public}"
    private = sorted(f"{module}.{name}" for module, name in documented
                     if name not in importlib.import_module(module).__all__)
    assert not private, f"docs/api.rst documents names outside their module's __all__: {private}"
    assert len(documented) == len(set(documented)), "docs/api.rst lists a name twice"


def test_the_guarantee_is_stated_once_the_same_way_everywhere():
    # Issue 15, case 5: the report said "add-or-remove one record" while n_partitions="auto",
    # the record-count checks and diffprivlib's noise scales use n. One statement, proved for
    # every setting: replace one record, n public; the README, the guide and the report (which
    # the budget plot prints under its axis) carry it.
    from skdptune.accounting import ADJACENCY

    def flat(text):
        return " ".join(text.replace("`", "").replace("*", "").split())

    assert ADJACENCY.startswith("replace one record")
    assert "same number of records n, which is public" in ADJACENCY
    readme = flat((ROOT / "README.md").read_text())
    guide = flat((ROOT / "docs" / "privacy_model.rst").read_text())
    for text in (readme, guide):
        assert "replacing one record: they have the same number of records n, which is public" \
            in text
        assert "add-or-remove one record" not in text
        assert "treated as public" not in text


def test_the_epsilon_page_prints_what_its_forecast_gives():
    # docs/epsilon.rst (issue 33, item 6): its worked forecast call runs and prints the
    # table the page shows.
    page = (ROOT / "docs" / "epsilon.rst").read_text()
    code = page.split(".. code-block:: python", 1)[1].split(".. code-block:: text", 1)
    program = "\n".join(line[3:] for line in code[0].splitlines())
    shown = [line.strip() for line in code[1].split("\n\n", 2)[1].splitlines()]
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(program, "docs/epsilon.rst", "exec"), {"__name__": "epsilon_page"})
    assert output.getvalue().splitlines() == shown


def _section(title):
    return README.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_readme_claims_cite_the_benchmark_command_that_measured_them():
    # Issue 33, item 6: the README called the default search "the best method at every
    # budget", which no benchmark measured on tables nobody tuned for. Every measured figure
    # it keeps (a table row or paragraph with points, a percentage or a score) sits beside
    # the command of the benchmark that produced it.
    figure = re.compile(r"\d+(\.\d+)? (accuracy )?points|\d %|[+-]\d+\.\d|R² of|0\.\d{3}")
    command = re.compile(r"python benchmarks/\w+\.py")
    assert "best method" not in README and "at every budget" not in README
    recommendations = [line for line in _section("Which method, which budget").splitlines()
                       if line.startswith("| ") and figure.search(line)]
    assert len(recommendations) >= 4
    for row in recommendations:
        assert command.search(row), row
    benchmark = _section("The benchmark")
    assert command.search(benchmark.split("| total epsilon")[0])  # the table's own command
    for paragraph in benchmark.split("\n\n"):
        if figure.search(paragraph) and not paragraph.lstrip().startswith("|"):
            assert command.search(paragraph), paragraph
