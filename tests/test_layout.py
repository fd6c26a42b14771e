"""The house's layout (issue 16): the package holds library code only, and every benchmark
command a docstring cites exists."""

import ast
import re
from pathlib import Path

from skdptune.selection.doubling import auto_max_iter

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "skdptune"


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
