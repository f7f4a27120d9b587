# The two commands: `make dev` starts the local stack, `make test` runs the whole gate.
# Both set everything up on a fresh clone; nothing relies on what was installed by hand.

SHELL := /bin/bash
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed
export PATH := $(BIN):$(PATH)
export SAM_CLI_TELEMETRY := 0

.PHONY: dev test setup lint typecheck template pytest clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

dev: setup
	phoneid dev

test: setup lint typecheck template pytest

lint:
	ruff check .
	ruff format --check .

typecheck:
	mypy layers/core/phoneid

template:
	sam validate --lint
	sam build --parallel

pytest:
	pytest -n 2 -q

clean:
	rm -rf $(VENV) .aws-sam .pytest_cache .mypy_cache .ruff_cache
