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
# exporting a command-line value would expand it (a $(shell ...) in it would run): only the checked copies below are exported
unexport VERSION DATASETS OUT VERBOSE

.PHONY: install release sources test lint bench docs clean

# setuptools' information-only notice "Editable installation." (folders named like the package may shadow
# it) is silenced: those folders are this package's own sources; every other build warning still shows
EDITABLE := PYTHONWARNINGS='ignore:Editable installation' $(BIN)/python -m pip install --quiet -e

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(EDITABLE) '.[test,runners]'
	touch $@

install: $(BIN)/.installed

# VERSION, DATASETS and OUT reach the commands as single, quoted arguments, never as shell text:
# their unexpanded values are exported and checked before anything is built.
release: export CTX_VERSION := $(value VERSION)
release: export CTX_DATASETS := $(value DATASETS)
release: export CTX_OUT := $(value OUT)
release: export CTX_VERBOSE := $(value VERBOSE)
release: install
	@case "$$CTX_VERSION" in \
	  '') echo "error: give a version, e.g. make release VERSION=1.0.0" >&2; exit 2;; \
	  *[!A-Za-z0-9._+-]*) echo "error: VERSION='$$CTX_VERSION': use letters, digits, '.', '_', '+' or '-' (e.g. 1.0.0); it names a folder and a git tag" >&2; exit 2;; \
	esac; \
	case "$$CTX_DATASETS" in \
	  *[!A-Za-z0-9_,\ -]*) echo "error: DATASETS='$$CTX_DATASETS': give dataset names separated by spaces or commas (e.g. DATASETS=gsm-ic,pseudowords)" >&2; exit 2;; \
	esac; \
	case "$$CTX_OUT" in \
	  '') echo "error: OUT: give the releases folder (default: releases)" >&2; exit 2;; \
	esac; \
	status=0; \
	if [ -n "$$CTX_DATASETS" ]; then \
	  $(BIN)/ctxrobust release --version="$$CTX_VERSION" --out="$$CTX_OUT" --datasets="$$CTX_DATASETS" $${CTX_VERBOSE:+-v} || status=$$?; \
	else \
	  $(BIN)/ctxrobust release --version="$$CTX_VERSION" --out="$$CTX_OUT" $${CTX_VERBOSE:+-v} || status=$$?; \
	fi; \
	if [ $$status -ne 2 ]; then $(BIN)/validate -- "$$CTX_OUT/" || status=1; fi; \
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

# the documentation site (docs/, mkdocs.yml) into build/site; --strict: a broken link or a page left out of the nav fails
docs: install
	$(EDITABLE) '.[docs]'
	$(BIN)/mkdocs build --strict --quiet

clean:
	rm -rf $(VENV) build *.egg-info
