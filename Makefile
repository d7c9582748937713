# Two commands do everything on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell sha256sum requirements.txt | cut -c1-12)

.PHONY: run test test-fast install init worker bench eval clean-data

$(STAMP): requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements.txt
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

install: $(STAMP)

init: install
	$(PY) -m core init

# Streamlit reads STREAMLIT_* variables (e.g. STREAMLIT_SERVER_PORT) itself; no flags override them.
# `init` (above) prints where the first admin's one-time password file is until it is changed.
run: init
	$(PY) -m core demo --queue --auto --json > /dev/null
	$(PY) -m ui.serve

worker: init
	$(PY) -m core worker

# Test workers (pytest-xdist): two, the cores of the CI machine; each file's tests stay
# on one worker (pytest.ini), and each worker has its own tmp dirs and session fixtures.
TEST_WORKERS ?= 2

# The whole suite, every marker (listing its 20 slowest tests: where the time goes), then
# the golden eval gate (it exits non-zero when a rubric regresses).
test: install
	$(PY) -m pytest -n $(TEST_WORKERS) --durations=20
	$(PY) -m core eval

# The developer loop: everything but the slow, OCR and browser groups (tests/conftest.py
# says which folders, modules and tests those are, and why). Not a substitute for `make test`.
test-fast: install
	$(PY) -m pytest -n $(TEST_WORKERS) -m "not slow and not ocr and not browser"

eval: install
	$(PY) -m core eval

bench: install
	$(PY) -m pip install --disable-pip-version-check -q -r requirements-bench.txt
	$(PY) bench/ingest.py
	$(PY) bench/mllp.py
	$(PY) -m bench.retrieval --sizes 10000
