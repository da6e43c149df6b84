# The two commands of the README: `make demo` (search the bundled catalog) and `make test`.
# Both create .venv with Python 3.11 and install the package with its test extras on first use.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
QUERY  ?= AI code completion tools that work locally

.PHONY: demo test lint install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/agentic-search search "$(QUERY)" --explain

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: lint
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) .agentic-search .pytest_cache .ruff_cache
