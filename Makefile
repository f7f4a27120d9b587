# The two commands: `make dev` starts the local stack, `make test` runs the whole gate.
# Both set everything up on a fresh clone; nothing relies on what was installed by hand.

SHELL := /bin/bash
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed
export PATH := $(BIN):$(PATH)
export SAM_CLI_TELEMETRY := 0

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: dev test setup lint typecheck template checkov pytest fuzz-gate fuzz browser browser-deps clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

# checkov's pins clash with the project's (pyproject.toml, [dependency-groups]): its own virtualenv.
CHECKOV_VENV := $(VENV)/checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.installed

$(CHECKOV_STAMP): pyproject.toml
	python3 -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(CHECKOV_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --group checkov
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# Debian's Chromium drives the browser tests; never a downloaded browser.
browser-deps: node_modules/.installed
	@command -v chromium >/dev/null || { $(SUDO) apt-get update && $(SUDO) apt-get install -y --no-install-recommends chromium; }

# node_modules: the local stack serves the API reference with Redoc from there (/docs).
dev: setup node_modules/.installed
	phoneid dev

test: setup lint typecheck template checkov pytest fuzz-gate browser

lint:
	ruff check .
	ruff format --check .

typecheck:
	mypy layers/core/phoneid

LAYER_BUILD := .aws-sam/build/CoreLayer/python

template:
	sam validate --lint
	sam build --parallel
	@for gone in botocore urllib3 phonenumbers/geodata phonenumbers/carrierdata phonenumbers/tzdata; do \
		test ! -e $(LAYER_BUILD)/$$gone || { echo "the layer carries $$gone"; exit 1; }; done
	@test -d $(LAYER_BUILD)/phonenumbers/data && test -d $(LAYER_BUILD)/aws_xray_sdk

# Every finding fails the gate; a check that does not apply is skipped in the resource's
# Metadata.checkov.skip with its reason. --skip-download: no call to Prisma Cloud.
checkov: $(CHECKOV_STAMP)
	$(CHECKOV_VENV)/bin/checkov --file template.yaml --framework cloudformation --quiet --compact --skip-download

# Every AWS call a function makes in the suite is recorded (tests, the phoneid dev they start, its
# worker processes), then checked against the function's role in template.yaml: each call allowed,
# each granted action used or its reason in the template (docs/operations.md, "Least privilege").
ACCESS_RECORDS := $(CURDIR)/.phoneid/access-records

# The suite checks the layer sam build made (tests/unit/test_layer_contents.py, test_handler_imports.py):
# it is built first.
pytest: node_modules/.installed template
	rm -rf $(ACCESS_RECORDS)
	PHONEID_ACCESS_RECORDS=$(ACCESS_RECORDS) pytest -n 2 -q -m 'not fuzz'
	python -m phoneid.dev.access $(ACCESS_RECORDS) --unused

# Schemathesis against `phoneid dev` (tests/fuzz): every operation, every check, a fixed seed. The
# gate's pass is bounded (8 cases an operation past the coverage phase); `make fuzz` is the long one.
fuzz-gate: setup
	pytest -q -m fuzz tests/fuzz

fuzz: setup
	PHONEID_FUZZ_EXAMPLES=$${PHONEID_FUZZ_EXAMPLES:-300} pytest -q -s -m fuzz tests/fuzz

browser: setup browser-deps
	node --test --test-concurrency=1 tests/browser/

clean:
	rm -rf $(VENV) node_modules .aws-sam .pytest_cache .mypy_cache .ruff_cache
