# Every target bootstraps .venv from requirements.lock on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Every recipe writes Python's bytecode caches (git-ignored __pycache__), even where PYTHONDONTWRITEBYTECODE is
# set: the suite starts a few hundred Python processes, and each would otherwise compile again what it imports.
# The install compiles ahead, the lock's modules and fanout's: left to the suite, its workers and their first
# runs compiled the same modules at once, and a fresh clone's suite took 5:40 against 4:48 with the caches made.
unexport PYTHONDONTWRITEBYTECODE
COMPOSE := $(shell if command -v podman >/dev/null 2>&1 && podman compose version >/dev/null 2>&1; then echo "podman compose"; elif command -v docker >/dev/null 2>&1 && docker compose version >/dev/null 2>&1; then echo "docker compose"; fi)

.PHONY: help venv test test-durations docs demo demo-claims e2e e2e-live peers chaos bench strategies bench-report screenshot lock ppi-reference searxng-up searxng-down searxng-live clean

help:
	@echo "make demo          the whole pipeline offline, against the bundled simulator"
	@echo "make demo-claims   the claims workload offline: 12 texts split into claims, verified, reported and gated"
	@echo "make test          the type checker (mypy --strict), the layer contracts (lint-imports), then the test suite on 3 workers (TEST_WORKERS=N)"
	@echo "make test-durations  after make test: tests/file_durations.json from its timings (the order files start in)"
	@echo "make e2e           demo run interrupted with Ctrl-C, resumed, and checked"
	@echo "make chaos         kill fanout run, delete its lock, kill workers' owners at random moments (ARGS=--kills N), then check; bad bodies and inputs"
	@echo "make e2e-live      three edits through the four real models (needs OPENROUTER_API_KEY and SearXNG)"
	@echo "make peers         real verdicts through llama-cpp-python's server from PyPI (ARGS=--record FILE re-records)"
	@echo "make bench         throughput, overhead and scale benchmarks (ARGS=--quick for a short pass)"
	@echo "make strategies    cost and accuracy of the judging strategies, own, shared or a research team's evidence, the swap, samples, prompt caching, aggregate search and min_results on the simulator; the certified auto-decisions' guarantee over 200 seeds; the claims workload's extraction, accuracy, cost and wall time per text; the desk's draw and the certificates on a 300-edit run"
	@echo "make bench-report  size of the HTML report of a 500-edit run and how fast Chromium opens it"
	@echo "make docs          build the manual (docs/) with mkdocs build --strict into site/"
	@echo "make screenshot    redo docs/report-first-screen.png (the README's picture of the report) and the desk's pictures docs/review-desk-*.png (needs chromium)"
	@echo "make searxng-up    start SearXNG + Valkey on 127.0.0.1:8080 (podman or docker compose)"
	@echo "make searxng-down  stop them"
	@echo "make searxng-live  fanout against SearXNG run from its source (SEARXNG_SRC, SEARXNG_PYTHON; ARGS=--record)"
	@echo "make lock          re-resolve requirements.lock from pyproject.toml"
	@echo "make ppi-reference recompute tests/fixtures/ppi/ with ppi-python in its own venv (.venv-ppi)"

venv: $(STAMP)

# uv (pinned with hashes in requirements-uv.lock) installs the lock in about 10 s where pip takes over a minute;
# where uv cannot be installed or fails, pip installs the same lock. The venv is made without pip of its own
# (ensurepip costs some 7 s of CPU, a quarter of the bootstrap's): the pip of $(PYTHON) installs into it with
# --python; a $(PYTHON) without pip (or with one older than 22.3) gets the venv's own through ensurepip.
PIP_FLAGS := install --quiet --disable-pip-version-check
UV := $(VENV)/bin/uv pip install --quiet --python $(PY)

$(STAMP): requirements.lock requirements-uv.lock pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv --without-pip $(VENV)
	if $(PYTHON) -m pip --python $(PY) --version >/dev/null 2>&1; then pip="$(PYTHON) -m pip --python $(PY)"; \
	else $(PY) -m ensurepip --default-pip >/dev/null && pip="$(PY) -m pip"; fi; \
	if $$pip $(PIP_FLAGS) --require-hashes -r requirements-uv.lock && $(UV) --require-hashes --compile-bytecode -r requirements.lock; \
	then $(UV) --no-deps -e .; \
	else echo "uv failed: installing with pip"; $$pip $(PIP_FLAGS) --require-hashes -r requirements.lock && $$pip $(PIP_FLAGS) --no-deps -e .; fi
	$(PY) -m compileall -q -j 0 src
	touch $(STAMP)

# The suite on TEST_WORKERS pytest-xdist workers, a test file at a time per worker (--dist loadfile: a file's
# tests keep their order and share their module fixtures, as in a serial run; see docs/development.md),
# the longest files first (--no-loadscope-reorder keeps the order tests/conftest.py gives them from
# tests/file_durations.json; xdist's own order starts the files with the most tests first, and so the few
# long process and browser tests last). The run's JUnit report (.venv/junit.xml) refreshes that table:
# `make test-durations`.
# mypy runs beside the suite, not before it: alone it keeps one core busy for some 20 s while the other
# idles; its report is printed after the suite's, and either failing fails the target.
# Three workers on two cores: the process tests spend much of their time waiting on the runs they start, and a
# third worker fills that wait (a fresh clone's suite: 5:54 on two workers, 5:05 on three, the same CPU).
TEST_WORKERS ?= 3
PYTEST_PARALLEL = -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --junitxml=$(VENV)/junit.xml

test: $(STAMP)
	$(VENV)/bin/lint-imports
	@$(PY) -m mypy > $(VENV)/mypy.out 2>&1 & mypy=$$!; \
	echo "$(PY) -m pytest $(PYTEST_PARALLEL)   (mypy beside it)"; \
	$(PY) -m pytest $(PYTEST_PARALLEL); tests=$$?; \
	wait $$mypy; typed=$$?; echo "$(PY) -m mypy"; cat $(VENV)/mypy.out; \
	test $$typed -eq 0 && test $$tests -eq 0

test-durations: $(STAMP)
	$(PY) scripts/test_durations.py $(VENV)/junit.xml

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

demo: $(STAMP)
	$(PY) scripts/demo.py

demo-claims: $(STAMP)
	$(PY) scripts/demo_claims.py

e2e: $(STAMP)
	$(PY) scripts/demo.py --e2e

chaos: $(STAMP)
	$(PY) scripts/chaos.py $(ARGS)

e2e-live: $(STAMP)
	$(PY) scripts/demo.py --live

PEERS_VENV := .venv-peers
PEERS_STAMP := $(PEERS_VENV)/.installed

$(PEERS_STAMP): scripts/peers-requirements.txt
	test -x $(PEERS_VENV)/bin/python || $(PYTHON) -m venv $(PEERS_VENV)
	CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
		$(PEERS_VENV)/bin/pip install --quiet --disable-pip-version-check -r scripts/peers-requirements.txt
	touch $(PEERS_STAMP)

peers: $(STAMP) $(PEERS_STAMP)
	$(PY) scripts/peers.py --server-python $(PEERS_VENV)/bin/python $(ARGS)

PPI_VENV := .venv-ppi
PPI_STAMP := $(PPI_VENV)/.installed

$(PPI_STAMP): scripts/ppi-reference-requirements.txt
	test -x $(PPI_VENV)/bin/python || $(PYTHON) -m venv $(PPI_VENV)
	$(PPI_VENV)/bin/pip install --quiet --disable-pip-version-check -r scripts/ppi-reference-requirements.txt
	touch $(PPI_STAMP)

# ppi-python, the reference implementation of prediction-powered inference, in a venv of its own (it brings
# numpy, scipy, numba, pandas, statsmodels, scikit-learn): its values are stored as a test fixture.
ppi-reference: $(PPI_STAMP)
	$(PPI_VENV)/bin/python scripts/ppi_reference.py

bench: $(STAMP)
	$(PY) bench/run.py $(ARGS)

strategies: $(STAMP)
	$(PY) bench/judging_strategies.py
	$(PY) bench/judging_evidence.py
	$(PY) bench/judging_team.py
	$(PY) bench/judging_samples.py --seeds 30
	$(PY) bench/judging_caching.py
	$(PY) bench/search_aggregate.py
	$(PY) bench/search_min_results.py
	$(PY) bench/decisions_guarantee.py
	$(PY) bench/claims.py --json bench/results/$$(date +%F)-claims.json
	$(PY) bench/desk_guarantee.py

bench-report: $(STAMP)
	$(PY) bench/report_html.py $(ARGS)

screenshot: $(STAMP)
	FANOUT_SCREENSHOT=docs/report-first-screen.png $(PY) -m pytest tests/test_report_html.py -q -k screenshots
	FANOUT_DESK_SCREENSHOTS=docs $(PY) -m pytest tests/test_review_browser.py -q -k fits

lock: $(STAMP)
	$(VENV)/bin/uv pip compile pyproject.toml --extra dev --universal --generate-hashes --python-version 3.11 -o requirements.lock
	$(VENV)/bin/uv pip compile requirements-uv.in --universal --generate-hashes --python-version 3.11 -o requirements-uv.lock

searxng-up:
	@test -n "$(COMPOSE)" || { echo "Neither 'podman compose' nor 'docker compose' works here; install one of them."; exit 1; }
	SEARXNG_SECRET="$${SEARXNG_SECRET:-$$($(PYTHON) -c 'import secrets; print(secrets.token_hex(32))')}" $(COMPOSE) up -d
	@echo "SearXNG: http://127.0.0.1:8080/search?q=test&format=json"

searxng-down:
	@test -n "$(COMPOSE)" || { echo "Neither 'podman compose' nor 'docker compose' works here."; exit 1; }
	$(COMPOSE) down

# SearXNG's own code, from a source tree (a clone of github.com/searxng/searxng) and a Python with its
# requirements.txt installed; skipped when the tree is not there. ARGS=--record rewrites tests/fixtures/searxng/.
SEARXNG_SRC ?= ../searxng-src
SEARXNG_PYTHON ?= python3

searxng-live: $(STAMP)
	@if [ -f "$(SEARXNG_SRC)/searx/webapp.py" ]; then \
		$(PY) scripts/searxng_live.py --searxng-src "$(SEARXNG_SRC)" --searxng-python "$(SEARXNG_PYTHON)" $(ARGS); \
	else \
		echo "No SearXNG source at $(SEARXNG_SRC): set SEARXNG_SRC (and SEARXNG_PYTHON); skipped."; \
	fi

clean:
	rm -rf $(VENV) $(PEERS_VENV) $(PPI_VENV) .pytest_cache
