# vmine: every target sets up what it needs on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install run test bench lint clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The main job: mine the pinned targets of pipeline.toml into output/.
run: install
	$(BIN)/vmine run --config pipeline.toml -o output

test: install
	$(BIN)/python -m pytest -n 2 -q

# Compiled first, as an installed package would be (some environments never write .pyc).
bench: install
	$(BIN)/python -m compileall -q pipeline extractors prompts
	$(BIN)/python bench/bench.py

lint: install
	$(BIN)/ruff check pipeline extractors tests bench
	$(BIN)/ruff format --check pipeline extractors tests bench prompts

clean:
	rm -rf $(VENV) .pytest_cache
