# The book's commands:
#   make check   after every edit: ruff, the unit and machinery tests, lint and Live Code's node tests; no model trained
#   make build   create .venv if needed, execute every page, write _build/html, export figures/
#   make test    create .venv if needed, run the whole test suite
# and helpers: make slides and make handout (the deck and the PDFs, from the build),
# make preview (live reload while editing), make bench (writes BENCHMARKS.md),
# make robustness (writes ROBUSTNESS.md), make claims PAGE=... (one page's claims), make clean,
# make mutants (the checks' power, by mutation testing: docs/checks.md), make new-book DEST=...
# TITLE=... (another recitation's book with this machinery: docs/new-book.md).

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Set to https://download.pytorch.org/whl/cpu where that index is reachable (GitHub
# Actions) so pip finds torch's CPU wheel; the course machines have it locally.
TORCH_INDEX_URL ?=
PIP_EXTRA := $(if $(TORCH_INDEX_URL),--extra-index-url $(TORCH_INDEX_URL),)
PREVIEW_PORT ?= 8000

.PHONY: check build test slides handout preview bench robustness claims clean mutants new-book

# Two packages, both editable: the course code (src/pyproject.toml, rec11) and the book's
# build and tools (pyproject.toml, rec11-book).
$(VENV)/.installed: requirements.txt pyproject.toml src/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $(PIP_EXTRA) -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e ./src -e .
	touch $@

# The build copies Thebe and MathJax from node_modules into the site (exact versions
# in package-lock.json), so both commands install the npm packages first.
build: $(VENV)/.installed node_modules/.installed
	$(PY) -m rec11_book.commands.build

# The instructor's reveal.js deck: every build that passes writes it; a failed one leaves the last
# good deck (rec11_book.extensions.slides).
slides: build
	@echo "slides: _build/html/slides/index.html (press S for the speaker notes)"

# The printable handout: the student PDF and its instructor edition, into _build/html,
# printed from the built pages (rec11_book.commands.handout). Needs Chromium (REC11_CHROMIUM,
# default /usr/bin/chromium) and poppler-utils (pdftotext).
handout: build
	$(PY) -m rec11_book.commands.handout

node_modules/.installed: package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	touch $@

# The fast tier: ruff over every Python file (configured in pyproject.toml; well under a
# second, so it goes first), then everything that needs neither a built book, a browser nor
# a trained full-size model (tests marked build or browser run in make test), on both cores
# (pytest-xdist), as make test's first run takes the same tests.
check: $(VENV)/.installed node_modules/.installed
	$(PY) -m ruff check .
	$(PY) -m pytest -q -n 2 --dist worksteal -m "not build and not browser" tests/machinery tests/unit tests/lint

# Everything but the tests marked bench (Lighthouse on every page: make bench runs those),
# in two runs on both cores (pytest-xdist): the tests that need no whole book, then the book
# built once and every test that reads it, tests/browser included (Chromium at
# /usr/bin/chromium; .ci/run installs it). In the first run a worker that runs out of tests
# takes some of the other's (--dist worksteal): with the default --dist load, one worker was
# left holding the slow build tests while the other sat idle for 350 of the run's 571 s.
# The second run sends each file whole to one worker (--dist loadfile), so that a file's
# costly fixtures (the hub, the handout's PDFs, the student venv) are made once, the longest
# files first (tests/run_support.py, LONGEST_FIRST; --no-loadscope-reorder keeps that order,
# where pytest-xdist would order files by their number of tests). --dist loadgroup grouped
# nothing here (pytest-xdist 3.8 marks a group in item._nodeid, which pytest 9 no longer
# reads). Both runs happen even if the first fails.
test: $(VENV)/.installed node_modules/.installed
	status=0; \
	$(PY) -m pytest -n 2 --dist worksteal -m "not bench and not book" --durations=15 || status=1; \
	$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder -m "book and not bench" --durations=30 || status=1; \
	exit $$status

# The checks' power (heavy tier, not in make check): mutmut mutates the worked answers of
# book/exercises.md (tests/mutation/answers.py) and runs each check on every mutant, then
# prints the per-check table of docs/checks.md and fails on a survivor not shown equivalent
# (tests/mutation/equivalent.py). About a minute on 2 cores. One torch thread per process:
# mutmut forks, and a forked torch thread pool can hang (every mutant then times out).
mutants: $(VENV)/.installed
	rm -rf mutants
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m mutmut run --max-children 2
	$(PY) -m tests.mutation.report

# Rebuilds on every save and reloads the browser at http://127.0.0.1:$(PREVIEW_PORT): the
# same build as `make build` (same cache, same _build), from a warm process (rec11_book.commands.preview).
preview: $(VENV)/.installed node_modules/.installed
	$(PY) -m rec11_book.commands.preview --port $(PREVIEW_PORT)

# Cold, no-op, prose-, code- and package-edit rebuilds in a fresh clone, every cell on
# one core, then page weight and Lighthouse on every page, the preview's save-to-page time
# and a profile of the prose-edit build; writes BENCHMARKS.md. About 20 minutes on 2 cores.
# BENCH_ARGS=--speed-only redoes only the last three, on this checkout's build (~7 minutes).
# Then every model retrained the old way (2 threads, one at a time) and the book's way (1
# thread, two side by side), TRAINBENCH_RUNS times each (about 6 minutes a pair).
BENCH_ARGS ?=
TRAINBENCH_RUNS ?= 3
bench: $(VENV)/.installed node_modules/.installed
	$(PY) -m rec11_tools.bench $(BENCH_ARGS)
	$(PY) -m pytest -m bench
	$(PY) -m rec11_tools.trainbench --runs $(TRAINBENCH_RUNS)

# Retrains every model under freshly drawn seeds (never a fixed list), each with a thread
# count and CPU kernels, runs every page with its claims recorded, and writes ROBUSTNESS.md:
# each claim's worst value and margin over every retraining of the pages' current code.
# ROBUSTNESS_ARGS="--count 20" runs more, "--until 30" tops every page up to 30 retrainings of
# its current code; retrainings accumulate in .cache/robustness.
ROBUSTNESS_ARGS ?=
robustness: $(VENV)/.installed
	$(PY) -m rec11_tools.robustness $(ROBUSTNESS_ARGS)

# One page's claims under SEEDS fresh retrainings, one per core at a time: each claim's
# worst value and margin. For whoever adds or edits a claim: make claims PAGE=book/vae.md
PAGE ?=
SEEDS ?= 10
claims: $(VENV)/.installed
	@test -n "$(PAGE)" || { echo "make claims: name the page, e.g. make claims PAGE=book/vae.md SEEDS=10"; exit 2; }
	$(PY) -m rec11_tools.robustness --no-report --pages $(PAGE) --count $(SEEDS)

# Another recitation's book, this machinery installed in it, not copied (docs/new-book.md):
#   make new-book DEST=../recitation-12 TITLE="Recitation 12: topics" [YEAR=2027] [MACHINERY=git+URL@COMMIT]
new-book: $(VENV)/.installed
	@test -n "$(DEST)" -a -n "$(TITLE)" || { echo 'make new-book: e.g. make new-book DEST=../recitation-12 TITLE="Recitation 12: topics"'; exit 2; }
	$(PY) -m rec11_book.commands.newbook "$(DEST)" --title "$(TITLE)" $(if $(YEAR),--year $(YEAR),) $(if $(MACHINERY),--machinery "$(MACHINERY)",)

clean:
	rm -rf _build
