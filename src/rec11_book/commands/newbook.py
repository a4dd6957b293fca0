"""Start another recitation's book: the same machinery, installed, and one starter page.

    python -m rec11_book.commands.newbook DEST --title "Recitation 12: ..." [--year 2027]
        [--repository https://github.com/ORG/REPO] [--machinery SOURCE]

(``make new-book DEST=... TITLE="..."`` from this checkout.) DEST gets:

* ``_config.yml``: this book's, with the block marked CHANGE FOR A NEW TERM OR FORK replaced
  by a starter block (title, year, repository, the course facts, two session blocks, no
  relations yet); everything below it (execution, the extensions, Live Code) as this
  book has it, so the two build the same way;
* ``_toc.yml`` and ``book/index.md``, a page that shows each convention once: a glued
  number, a claim, a figure with alt text, a slide and its note, an exercise with a
  check and a quick check (``rec11_book/starter/``);
* ``requirements.txt``: this book's pins, and the machinery, ``rec11`` (what pages
  import: claims, glue, style, checks) and ``rec11-book`` (the build and tools), from
  SOURCE: by default this repository at this commit, so pip installs them; nothing of
  them is copied;
* a ``Makefile`` (check, build, test, preview, slides, handout, claims), its own tests,
  a README, ``.gitignore``, Binder's files, and GitHub's CI and Pages workflows (this
  book's, keyed on the new book's files);
* ``package.json`` and ``package-lock.json``: the npm files the build copies (Thebe,
  MathJax, reveal.js), at this book's exact versions.

It runs from a checkout of this repository (it reads the files above from it), and
imports neither Sphinx nor torch.
"""

from __future__ import annotations

import argparse
import datetime
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]  # the checkout: src/rec11_book/commands/newbook.py
STARTER = Path(__file__).resolve().parents[1] / "starter"
BLOCK_START = "# ---- CHANGE FOR A NEW TERM OR FORK"
BLOCK_END = "# -----------------------------------------------------------------------------------"
REPOSITORY = "https://github.com/cpsy1291/recitation-11"  # where the machinery is published


class NewBookError(Exception):
    """A problem with the request, said with its fix."""


def starter_block(title: str, year: int, repository: str, recitation: str, course: str,
                  machinery: str) -> str:
    """The block a new book starts with: its facts, its session's blocks, no relations yet."""
    slug = re.sub(r"[^a-z0-9]+", "-", recitation.lower()).strip("-")
    return f"""{BLOCK_START} -------------------------------------------------
title: {quoted(title)}
year: {year}    # the term's year: every date below must fall on its weekday in it (and the footer's ©)

repository:
  url: {repository}   # the GitHub repository this book lives in
  branch: main
  path_to_book: ""

parse:
  myst_enable_extensions: [colon_fence, dollarmath, amsmath, substitution, deflist]
  myst_substitutions:
    # Course facts. Pages write {{{{ recitation }}}}, never the words themselves.
    course: {quoted(course)}
    recitation: {quoted(recitation)}
    session_minutes: 10
    # Dates as "Tue 11/24", each on its weekday in `year`; relate them in term_relations.
    # The printable handout's file name; `make handout` writes it into the built site.
    handout: handout-{slug}.pdf
    # The session's blocks, in order: each budget_<block> is one, its minutes what the
    # instructor notes naming it (:block:) add up to, within budget_slack.
    budget_intro: 5
    budget_practice: 5
    budget_slack: 2

# What the pages say about how the course facts relate (docs/authoring.md, "a new term"):
#   - final_date is day after review_date   # "the final is the day after the review"
term_relations: []

sphinx:
  config:
    # Where a download's install cell and Binder get the package the pages import (rec11):
    # the machinery this book was started from.
    rec11_package_source: {quoted(machinery_git(machinery))}
{BLOCK_END}
"""


def quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def course_of(config_text: str) -> str:
    """The course's name, a fact of this book's block: the new recitation is in the same course."""
    facts = (yaml.safe_load(config_text).get("parse") or {}).get("myst_substitutions") or {}
    return str(facts.get("course", ""))


def machinery_git(source: str) -> str:
    """The course package's pip source (``rec11 @ ...``), from the machinery's source."""
    if source.startswith("git+"):
        return f"{source}#subdirectory=src"
    return Path(source, "src").as_uri()


def machinery_requirements(source: str) -> list[str]:
    """The two packages of the machinery, as requirements.txt lines: installed, not copied."""
    if source.startswith("git+"):
        return [f"rec11 @ {source}#subdirectory=src", f"rec11-book @ {source}"]
    return [f"-e {Path(source, 'src')}", f"-e {Path(source)}"]  # a checkout on this machine


def this_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        raise NewBookError(f"{ROOT} is not a git checkout, so there is no commit to install the machinery at."
                           " Fix: pass --machinery git+URL@COMMIT, or a checkout's path") from None


def config(title: str, year: int, repository: str, recitation: str, machinery: str) -> str:
    """This book's _config.yml with the starter block in place of the term's block."""
    text = (ROOT / "_config.yml").read_text()
    start, end = text.index(BLOCK_START), text.index(BLOCK_END)
    end = text.index("\n", end) + 1
    head = (f"# Jupyter Book 1.x configuration for {title}.\n"
            "# For a new term, change only the block marked \"CHANGE FOR A NEW TERM OR FORK\".\n")
    settings = "".join(line for line in text[:start].splitlines(keepends=True) if not line.startswith("#"))
    block = starter_block(title, year, repository, recitation, course_of(text), machinery)
    after = text[end:]
    # the starter block's one setting goes into the `sphinx: config:` below, so YAML has one key
    setting = block[block.index("sphinx:\n"):block.index(BLOCK_END)]
    block = block.replace(setting, "")
    if "\n  config:\n" not in after:
        raise NewBookError(f"{ROOT / '_config.yml'} has no `sphinx: config:` section to add"
                           " rec11_package_source to. Fix: restore it from git")
    after = after.replace("\n  config:\n", "\n  config:\n" + setting.split("config:\n", 1)[1], 1)
    return head + settings + block + after


def workflow(text: str) -> str:
    """This book's workflow, its caches keyed on the new book's files (it has no src/)."""
    return re.sub(r"'src/rec11(_book)?/\*\*', ", "", text)


def write(dest: Path, relative: str, text: str) -> None:
    path = dest / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def create(dest: Path, title: str, year: int, repository: str, machinery: str) -> list[str]:
    """Write the new book into ``dest``; returns the files written."""
    if not (ROOT / "_config.yml").is_file():
        raise NewBookError(f"{ROOT} is not a checkout of the book: new-book reads its _config.yml, pins and"
                           " workflows. Fix: run it from a clone of the repository (make new-book there)")
    if dest.exists() and any(dest.iterdir()):
        raise NewBookError(f"{dest} exists and is not empty. Fix: choose a new folder for DEST")
    match = re.match(r"\s*(Recitation\s+\d+)", title)
    if not match:
        raise NewBookError(f"the title {title!r} does not start with 'Recitation N'. Fix: TITLE=\"Recitation 12:"
                           " topics\" (the recitation's name is a course fact the pages show)")
    recitation = match[1]
    dest.mkdir(parents=True, exist_ok=True)
    files = {
        "_config.yml": config(title, year, repository, recitation, machinery),
        "_toc.yml": "# The chapter, in order: each file is a page in book/ (without .md).\n"
                    "format: jb-book\nroot: book/index\n",
        "requirements.txt": ((ROOT / "requirements.txt").read_text().rstrip("\n")
                             + "\n# The machinery: what the pages import (rec11) and the build (rec11-book)\n"
                             + "\n".join(machinery_requirements(machinery)) + "\n"),
        "binder/requirements.txt": ((ROOT / "binder" / "requirements.txt").read_text().rstrip("\n")
                                    + f"\nrec11 @ {machinery_git(machinery)}\n"),
        "binder/runtime.txt": (ROOT / "binder" / "runtime.txt").read_text(),
        "binder/postBuild": "#!/bin/bash\n# Pages are MyST markdown: open them as notebooks in JupyterLab.\n"
                            "set -euo pipefail\njupytext-config set-default-viewer markdown myst\n",
        "package.json": (ROOT / "package.json").read_text(),
        "package-lock.json": (ROOT / "package-lock.json").read_text(),
        ".github/workflows/ci.yml": workflow((ROOT / ".github" / "workflows" / "ci.yml").read_text()),
        ".github/workflows/deploy.yml": workflow((ROOT / ".github" / "workflows" / "deploy.yml").read_text()),
    }
    for template in sorted(p for p in STARTER.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        relative = template.relative_to(STARTER).as_posix()
        name = {"gitignore": ".gitignore"}.get(relative, relative)
        files[name] = template.read_text().replace("{{TITLE}}", title).replace("{{MACHINERY}}", machinery)
    for relative, text in files.items():
        write(dest, relative, text)
    (dest / "binder" / "postBuild").chmod(0o755)
    return sorted(files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path, help="the new book's folder (new, or empty)")
    parser.add_argument("--title", required=True, help='"Recitation 12: topics"')
    parser.add_argument("--year", type=int, default=datetime.date.today().year, help="the term's year")
    parser.add_argument("--repository", default=None,
                        help="the new book's GitHub repository (default: https://github.com/cpsy1291/<folder name>)")
    parser.add_argument("--machinery", default=None,
                        help="where pip gets rec11 and rec11-book: git+URL@COMMIT (default: this repository at"
                             " this checkout's commit), or a checkout's path (offline: installs it editable)")
    args = parser.parse_args(argv)
    try:
        machinery = args.machinery or f"git+{REPOSITORY}@{this_commit()}"
        if not machinery.startswith("git+"):
            machinery = str(Path(machinery).resolve())
        repository = args.repository or f"https://github.com/cpsy1291/{args.dest.resolve().name}"
        written = create(args.dest, args.title, args.year, repository, machinery)
    except NewBookError as error:
        print(f"new-book: {error}", file=sys.stderr)
        return 1
    print(f"new-book: wrote {len(written)} files into {args.dest}. Next: cd {args.dest} && make check && make build"
          " (the first make installs .venv and node_modules: several minutes). docs/new-book.md in the"
          " machinery's repository is the fork guide.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
