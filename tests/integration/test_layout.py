"""The house's layout (issue 16): the package holds library code only, every benchmark
command a docstring cites exists, and the public surface is small and private by name (issue
31, item 4)."""

import ast
import importlib
import inspect
import re
from pathlib import Path

from skdptune.selection._doubling import auto_max_iter

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "skdptune"
#: Folders of Python files that import the package.
SOURCES = ("skdptune", "tests", "docs", "examples", "benchmarks")

#: What a user imports: the searches, the Displays, the selectors, the forecast, the DP models,
#: the bounded scorers, the refit gate's table and registration hook, the partition-scaling
#: rules (and what they do to a candidate), what the privacy report is read with, and the
#: exceptions. Each declares ``__all__`` (its public names, all listed in docs/api.rst); every
#: other module is private by name.
PUBLIC_MODULES = [
    "skdptune",
    "skdptune.accounting",
    "skdptune.cluster",
    "skdptune.decomposition",
    "skdptune.ensemble",
    "skdptune.exceptions",
    "skdptune.forecast",
    "skdptune.gate",
    "skdptune.linear_model",
    "skdptune.naive_bayes",
    "skdptune.partition_scaling",
    "skdptune.plotting",
    "skdptune.preprocessing",
    "skdptune.selection",
    "skdptune.tree",
    "skdptune.utility",
]


def _package_files():
    return sorted(PACKAGE.rglob("*.py"))


def test_no_script_inside_the_package():
    # Simulations and studies belong in benchmarks/, demonstrations in examples/.
    scripts = []
    for path in _package_files():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test):
                scripts.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not scripts, f"__main__ blocks inside the package: {scripts}"


def test_benchmark_scripts_cited_by_the_package_exist():
    cited = {match for path in _package_files()
             for match in re.findall(r"benchmarks/[\w/]+\.py", path.read_text())}
    assert cited, "the package cites no benchmark script: is the pattern stale?"
    missing = sorted(path for path in cited if not (ROOT / path).is_file())
    assert not missing, f"the package cites benchmark scripts that do not exist: {missing}"


def test_auto_max_iter_cites_the_command_of_its_simulation():
    commands = re.findall(r"``(python [^`]+)``", auto_max_iter.__doc__)
    assert commands, "auto_max_iter's docstring cites no command"
    assert all(re.fullmatch(r"python benchmarks/[\w/]+\.py( [^`]*)?", command)
               for command in commands), commands


def _public_classes():
    """``{name: [module, ...]}`` of the classes defined at the top level of every module."""
    found = {}
    for path in _package_files():
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                found.setdefault(node.name, []).append(module)
    return found


def test_public_class_names_are_unique():
    # One name, one thing: the refit gate's rule and the partition scaling rule were both
    # called Rule.
    repeated = {name: modules for name, modules in _public_classes().items()
                if len(modules) > 1}
    assert not repeated, f"public classes defined under one name in several modules: {repeated}"


def _module_names():
    """The dotted name of every module of the package, from its files."""
    names = []
    for path in _package_files():
        parts = path.relative_to(ROOT).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_module_is_public_or_private_by_name():
    # Public = what a user imports; everything else has a leading underscore in its path, so a
    # reader (and Sphinx, and an IDE's completion) can tell API from internals at a glance.
    names = _module_names()
    assert set(PUBLIC_MODULES) <= set(names), sorted(set(PUBLIC_MODULES) - set(names))
    unmarked = sorted(
        name for name in names
        if name not in PUBLIC_MODULES
        and not any(part.startswith("_") for part in name.split(".")))
    assert not unmarked, (
        f"modules that are neither public nor private by name: {unmarked}: add a leading "
        "underscore, or make them public (PUBLIC_MODULES, __all__, docs/api.rst)")


def _extra_public_names(module):
    """Names a public module defines or re-exports beyond its ``__all__``: anything without a
    leading underscore but submodules and the classes and functions of other libraries."""
    extra = []
    for name, value in vars(module).items():
        if name.startswith("_") or name in module.__all__ or inspect.ismodule(value):
            continue
        defined_in = getattr(value, "__module__", None)
        if (inspect.isclass(value) or inspect.isfunction(value)) and defined_in and not (
                defined_in == "skdptune" or defined_in.startswith("skdptune.")):
            continue
        extra.append(name)
    return sorted(extra)


def test_public_modules_declare_exactly_their_public_names():
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        assert isinstance(getattr(module, "__all__", None), list), f"{name} has no __all__"
        assert len(set(module.__all__)) == len(module.__all__), f"{name}.__all__ repeats a name"
        missing = [public for public in module.__all__ if not hasattr(module, public)]
        assert not missing, f"{name}.__all__ lists names it does not have: {missing}"
        underscored = [public for public in module.__all__ if public.startswith("_")]
        assert not underscored, f"{name}.__all__ lists private names: {underscored}"
        extra = _extra_public_names(module)
        assert not extra, (
            f"{name} defines or imports public names outside its __all__: {extra}: import "
            "them from the private module where they are used, or add them to __all__")


def test_partition_scaling_lives_under_its_parameter_name():
    # The module of the partition_scaling parameter is named after it (its implementation in
    # _partition_scaling.py); no alias is left, and nothing imports the old name. (Checked on
    # files: an editable install of another checkout can still answer an import of the old
    # name.)
    assert (PACKAGE / "partition_scaling.py").is_file()
    assert (PACKAGE / "_partition_scaling.py").is_file()
    assert not (PACKAGE / "fidelity.py").exists()
    old_import = re.compile(r"(from|import) (skdptune|)\.fidelity\b")
    importers = sorted(str(path.relative_to(ROOT)) for folder in SOURCES
                       for path in (ROOT / folder).rglob("*.py")
                       if old_import.search(path.read_text()))
    assert not importers, f"these files import the removed module: {importers}"


def test_parameter_docstrings_cite_no_measured_figures():
    # Benchmark figures go stale: a parameter's entry points to the guide, which has them
    # with their source. Before: selector and selection_share quoted "1.2 pp", "79.2 %".
    from numpydoc.docscrape import ClassDoc

    import skdptune

    figures = re.compile(r"\d+(?:\.\d+)? ?(?:pp\b|%)")
    cited = {}
    for cls in (skdptune.PrivateGridSearchCV, skdptune.PrivateRandomizedSearchCV):
        for parameter in ClassDoc(cls)["Parameters"]:
            found = figures.findall(" ".join(parameter.desc))
            if found:
                cited[f"{cls.__name__}.{parameter.name}"] = found
    assert not cited, f"measured figures in parameter docstrings: {cited}"
    guide = (ROOT / "docs" / "choosing.rst").read_text()
    for label in ("choosing-selector", "choosing-selection-share"):
        assert f".. _{label}:" in guide
        assert f"<{label}>`" in skdptune.PrivateGridSearchCV.__doc__
    assert "79.2 %" in guide and "1.2 points" in guide


def test_tests_are_sorted_by_kind():
    # unit (a file per module), behaviour, parity, audit, integration: README's layout section.
    kinds = {"unit", "behaviour", "parity", "audit", "integration"}
    tests = ROOT / "tests"
    loose = sorted(path.name for path in tests.glob("test_*.py"))
    assert not loose, f"test files outside the kind folders: {loose}"
    folders = {path.parent.name for path in tests.rglob("test_*.py")}
    assert folders == kinds, f"test folders {sorted(folders)} are not {sorted(kinds)}"
    readme = (ROOT / "README.md").read_text()
    assert all(f"`{kind}/`" in readme for kind in kinds)


#: What reads a clock or waits: a test that does can fail on a loaded or slow machine (issue
#: 33: a timing threshold failed under load). Speed claims belong in benchmark scripts.
_CLOCK = re.compile(
    r"\btime\.(perf_counter|time|monotonic|process_time|thread_time|sleep)\w*\("
    r"|\btimeit\b|\bdatetime\.(now|utcnow|today)\(|\btimeout=\d"
)


def test_no_test_reads_a_clock():
    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path == Path(__file__):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _CLOCK.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "tests that read a clock or wait:\n" + "\n".join(offenders)


def test_diffprivlib_privates_are_imported_in_one_module():
    # Issue 41: the charges are proved for diffprivlib 0.6.6's private code; every private
    # import goes through skdptune/_diffprivlib.py, beside the pin.
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "_diffprivlib.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ImportFrom) and node.module
                    and node.module.split(".")[0] == "diffprivlib"):
                continue
            private = [alias.name for alias in node.names if alias.name.startswith("_")]
            # Names diffprivlib's model modules import from elsewhere (validate_data).
            if node.module.startswith("diffprivlib.models."):
                private += [alias.name for alias in node.names]
            if private:
                offenders.append(f"{path.relative_to(PACKAGE.parent)}: {node.module} {private}")
    assert offenders == []
