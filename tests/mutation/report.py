"""The per-check table of ``make mutants``, from mutmut's results in mutants/.

    python -m tests.mutation.report

One row per check (a function of answers.py): its mutants, how many the check killed,
how many survived, and how many of those are equivalent (tests/mutation/equivalent.py).
Exits 1 when a survivor is not equivalent, or a mutant was not run to a verdict (a
timeout, a crash), and prints its diff.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from mutmut.stats import status_by_exit_code

from tests.mutation.equivalent import matches

META = Path("mutants/tests/mutation/answers.py.meta")
ORDER = ["attention", "split_heads", "merge_heads", "padding_mask", "generate",
         "surprisal", "reparameterize", "vae_loss", "diffusion_loss"]
KEY = re.compile(r"\.x_(\w+?)__mutmut_\d+$")


def diff(name: str) -> tuple[str, str, str]:
    """(the diff, its removed line, its added line) of one mutant, from ``mutmut show``."""
    text = subprocess.run([sys.executable, "-m", "mutmut", "show", name], capture_output=True,
                          text=True, check=True).stdout
    removed = [line[1:].strip() for line in text.splitlines()
               if line.startswith("-") and not line.startswith("---")]
    added = [line[1:].strip() for line in text.splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    one = len(removed) == len(added) == 1
    return text, removed[0] if one else "", added[0] if one else ""


def main() -> int:
    codes = json.loads(META.read_text())["exit_code_by_key"]
    rows = {name: Counter() for name in ORDER}
    problems = []
    for key, code in sorted(codes.items()):
        function = KEY.search(key).group(1)
        status = status_by_exit_code[code]
        row = rows[function]
        row["mutants"] += 1
        if status == "killed":
            row["killed"] += 1
            continue
        text, removed, added = diff(key)
        if status == "survived":
            row["survived"] += 1
            entry = matches(function, removed, added)
            if entry:
                row["equivalent"] += 1
                continue
        problems.append(f"{key}: {status}\n{text}")
    print("| check | mutants | killed | survived | equivalent | not rejected |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    total = Counter()
    for name in ORDER:
        row = rows[name]
        total.update(row)
        print(f"| {name} | {row['mutants']} | {row['killed']} | {row['survived']} | "
              f"{row['equivalent']} | {row['survived'] - row['equivalent']} |")
    print(f"| all | {total['mutants']} | {total['killed']} | {total['survived']} | "
          f"{total['equivalent']} | {total['survived'] - total['equivalent']} |")
    for problem in problems:
        print(f"\nnot rejected and not shown equivalent: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
