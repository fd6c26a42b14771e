"""The harness of the privacy reviews' before/after tables (``privacy_third_pass.py``,
``privacy_fourth_pass.py``): named cases, each run through the public API in a child process
with a time limit, its printed output counted at the file-descriptor level.

A review script registers its cases with :meth:`Cases.case` and ends with
``cases.command_line(__file__)``: without arguments it runs every case in a child process and
prints a Markdown table (case, outcome, what the user's accountant was charged, bytes printed);
with a case's name it runs that case (the child's side).
"""

import json
import re
import subprocess
import sys
import warnings

from diffprivlib.accountant import BudgetAccountant

MARKER = "@@outcome@@"


class Cases:
    """A registry of named cases, ``case(accountant) -> outcome`` (a short string)."""

    def __init__(self, time_limit=30):
        self.time_limit = time_limit
        self.functions = {}

    def case(self, name):
        """Decorator: register ``function`` under ``name``."""
        def register(function):
            self.functions[name] = function
            return function
        return register

    def run_case(self, name):
        """In the child: run one case, print its outcome after the marker."""
        warnings.simplefilter("ignore")  # stderr then holds only what the fits printed
        accountant = BudgetAccountant()
        try:
            outcome = self.functions[name](accountant)
        except Exception as error:  # noqa: BLE001 - reported, whatever it is
            # The reason, after the refused step's repr (gate messages), else the start.
            reason = re.split(r"(?:\)|\.\.\.): ", str(error), maxsplit=1)[-1]
            outcome = f"{type(error).__name__}: {reason[:100]}"
        charged = tuple(round(float(v), 4) for v in accountant.total())
        sys.stdout.flush()
        print(MARKER + json.dumps({"outcome": outcome, "charged": charged}), flush=True)

    def table(self, script):
        """Run every case of ``script`` in a child process; print the Markdown table."""
        print("| case | outcome | charged | printed |")
        print("|---|---|---|---|")
        for name in self.functions:
            try:
                done = subprocess.run([sys.executable, script, name], capture_output=True,
                                      text=True, timeout=self.time_limit)
            except subprocess.TimeoutExpired:
                print(f"| {name} | hung: killed after {self.time_limit} s | - | - |")
                continue
            out, _, result = done.stdout.rpartition(MARKER)
            if not result:
                print(f"| {name} | crashed: {done.stderr.strip()[-90:]} | - | - |")
                continue
            result = json.loads(result)
            printed = len(out) + len(done.stderr)  # what the fits printed (warnings are off)
            outcome = result["outcome"].replace("|", "/").replace("\n", " ")
            print(f"| {name} | {outcome} | {tuple(result['charged'])} | {printed} bytes |")

    def command_line(self, script, doc):
        """The script's entry point: help, one case (the child), or the whole table."""
        if sys.argv[1:2] in (["-h"], ["--help"]):
            print(doc)
        elif len(sys.argv) > 1:
            self.run_case(sys.argv[1])
        else:
            self.table(script)
