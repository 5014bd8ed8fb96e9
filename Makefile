# ctxrobust: `make release VERSION=1.0.0` builds, validates and freezes every dataset;
# `make test` runs the test suite. Both create their own virtual environment.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
VERSION ?=
DATASETS ?=
VERBOSE ?=
OUT ?= releases
# Third-party source snapshots: both `make test` and `make release` read SOURCES_MIRROR (a mirror
# folder) from the environment or the command line, with no default; without it they use the cache
# (CTXROBUST_CACHE, default sources/cache) and, for `make release`, the upstream downloads.
export SOURCES_MIRROR CTXROBUST_CACHE CTXROBUST_REQUIRE_SOURCES

.PHONY: install release sources test lint bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

install: $(BIN)/.installed

release: install
	@test -n "$(VERSION)" || { echo "error: give a version, e.g. make release VERSION=1.0.0" >&2; exit 2; }
	@status=0; \
	$(BIN)/ctxrobust release --version $(VERSION) --out $(OUT) $(if $(DATASETS),--datasets $(DATASETS)) $(if $(VERBOSE),-v) || status=$$?; \
	$(BIN)/validate $(OUT)/ || status=1; \
	exit $$status

sources: install
	$(BIN)/ctxrobust sources

test: install
	@$(BIN)/python -m pytest -q; status=$$?; \
	if [ $$status -eq 5 ]; then echo "error: pytest collected no tests" >&2; exit 1; fi; \
	exit $$status

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# every bench script; BENCH_QUICK=1 runs each in its quick mode (small sizes, what CI runs)
bench: install
	@for script in bench/*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
