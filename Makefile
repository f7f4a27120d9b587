# The two commands: `make dev` starts the local stack, `make test` runs the whole gate.
# Both set everything up on a fresh clone; nothing relies on what was installed by hand.

SHELL := /bin/bash
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed
export PATH := $(BIN):$(PATH)
export SAM_CLI_TELEMETRY := 0

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: dev test setup lock lockcheck lint typecheck template checkov pytest fuzz-gate fuzz browser browser-deps clean sdk-types sdk-models typescript-sdk-types mutation

# Every environment installs from a lock, hash-checked (docs/adr/0081-one-lock-for-the-environment-and-the-layer.md): uv.lock for
# .venv and the layer, tools/checkov/uv.lock for checkov's. uv is installed first, with pip, as
# uv.lock pins and hashes it; then `uv sync --locked` makes .venv exactly the lock and refuses a lock
# that no longer matches pyproject.toml. uv never downloads an interpreter: .venv is the machine's
# python3 (3.11+).
UV := $(BIN)/uv
export UV_PYTHON_DOWNLOADS := never
# Python keeps the bytecode it compiles, under .phoneid/bytecode: never beside the sources, nor in
# the layer sam build copies. Where the shell sets PYTHONDONTWRITEBYTECODE, each of the gate's
# processes (local stacks, their function processes, pytest's workers) compiled again every module
# it imported (docs/adr/0098-the-gate-keeps-its-bytecode.md).
unexport PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX := $(CURDIR)/.phoneid/bytecode
# The SAM CLI brings awscrt (boto3[crt]), which the layer does not ship: botocore here signs and
# checksums without it, as on Lambda (tests/conftest.py sets the same for a bare pytest).
export BOTO_DISABLE_CRT := true

$(UV):
	python3 -m venv $(VENV)
	python3 tools/lock.py uv > $(VENV)/uv-requirement.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
		--require-hashes -r $(VENV)/uv-requirement.txt

$(STAMP): pyproject.toml uv.lock | $(UV)
	$(UV) sync --quiet --locked --extra test \
		|| { echo "uv sync failed; if uv.lock no longer matches pyproject.toml: make lock"; exit 1; }
	touch $(STAMP)

setup: $(STAMP)

# After a change to the dependencies in pyproject.toml (or tools/checkov/pyproject.toml). Versions
# already locked stay; `make lock LOCK_ARGS=--upgrade` (or `--upgrade-package NAME`) moves them.
# The layer's requirements are the lock's export for Lambda (tools/lock.py).
LAYER_EXPORT = $(UV) export --frozen --no-dev --no-emit-project --format requirements-txt | $(BIN)/python tools/lock.py layer

lock: | $(UV)
	$(UV) lock $(LOCK_ARGS)
	$(UV) lock --project tools/checkov $(LOCK_ARGS)
	$(UV) sync --quiet --locked --extra test
	touch $(STAMP)
	$(LAYER_EXPORT) > layers/core/requirements.txt

# The locks match their pyproject.toml and the layer's requirements match uv.lock.
lockcheck: setup
	$(UV) lock --check
	$(UV) lock --check --project tools/checkov
	@$(LAYER_EXPORT) | diff -u layers/core/requirements.txt - \
		|| { echo "layers/core/requirements.txt is not uv.lock's export: make lock"; exit 1; }

# checkov's pins clash with the project's: its own lock (tools/checkov) and its own virtualenv.
CHECKOV_VENV := $(VENV)/checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.installed

$(CHECKOV_STAMP): tools/checkov/pyproject.toml tools/checkov/uv.lock | $(UV)
	UV_PROJECT_ENVIRONMENT=$(CURDIR)/$(CHECKOV_VENV) $(UV) sync --quiet --locked --project tools/checkov
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# Debian's Chromium drives the browser tests; never a downloaded browser.
browser-deps: node_modules/.installed
	@command -v chromium >/dev/null || { $(SUDO) apt-get update && $(SUDO) apt-get install -y --no-install-recommends chromium; }

# node_modules: the local stack serves the API reference with Redoc from there (/docs).
dev: setup node_modules/.installed
	phoneid dev $(if $(DATA),--data $(DATA))

# The gate, phase by phase, each timed ("phase NAME: N s") and all of them summed up at the end
# (tools/gate.py). Phases joined by + run at once: the checks that use one CPU beside sam build and
# the browser's install; then the suite beside the two that drive a local stack of their own, which
# wait on their stacks and browser more than they compute (docs/performance.md, "The gate").
GATE := setup lockcheck+lint+typecheck+checkov+template+browser-deps pytest+fuzz-gate+browser+licences

test:
	@python3 tools/gate.py $(GATE_FLAGS) $(GATE)

lint:
	ruff check .
	ruff format --check .

typecheck:
	mypy layers/core/phoneid devkit/phoneid_dev devkit/phoneid_cli clients/python/src/phoneid_client

# Both server SDKs' types, regenerated from docs/openapi.json after the API changed (the gate's
# drift checks fail until they are).
sdk-types: sdk-models typescript-sdk-types

# The Python server SDK's types (clients/python/README.md); tests/contract/test_python_sdk.py fails
# when the committed ones differ.
sdk-models: setup
	python clients/python/tools/generate_models.py

LAYER_BUILD := .aws-sam/build/CoreLayer/python

template:
	sam validate --lint
	sam build --parallel
	@for gone in phonenumbers/geodata phonenumbers/carrierdata phonenumbers/tzdata; do \
		test ! -e $(LAYER_BUILD)/$$gone || { echo "the layer carries $$gone"; exit 1; }; done
	@test -d $(LAYER_BUILD)/phonenumbers/data && test -d $(LAYER_BUILD)/aws_xray_sdk && test -d $(LAYER_BUILD)/botocore

# Every finding fails the gate; a check that does not apply is skipped in the resource's
# Metadata.checkov.skip with its reason. --skip-download: no call to Prisma Cloud.
checkov: $(CHECKOV_STAMP)
	$(CHECKOV_VENV)/bin/checkov --file template.yaml --framework cloudformation --quiet --compact --skip-download

# Every AWS call a function makes in the suite is recorded (tests, the phoneid dev they start, its
# worker processes), then checked against the function's role in template.yaml: each call allowed,
# each granted action used or its reason in the template (docs/operations.md, "Least privilege").
ACCESS_RECORDS := $(CURDIR)/.phoneid/access-records

# Within `make test`, the layer `template` built must be there for tests/contract/test_lock.py.
test: export PHONEID_LAYER_BUILD := $(CURDIR)/$(LAYER_BUILD)

# The suite checks the layer sam build made (tests/unit/test_layer_contents.py, test_handler_imports.py,
# tests/contract/test_lock.py): it is built first.
# It runs at a lower priority (nice): beside it in the gate, the browser and the fuzzer wait on a stack
# whose answers must not queue behind the suite's computing; the suite only wants the CPU left over.
pytest: node_modules/.installed template
	rm -rf $(ACCESS_RECORDS)
	PHONEID_ACCESS_RECORDS=$(ACCESS_RECORDS) nice -n 10 pytest -n 2 -q -m 'not fuzz and not prove_compat' --durations=20
	python -m phoneid_dev.access $(ACCESS_RECORDS) --unused

# Schemathesis against `phoneid dev` (tests/fuzz): every operation, every check, a fixed seed. The
# gate's pass is bounded (8 cases an operation past the coverage phase); `make fuzz` is the long one.
fuzz-gate: setup
	pytest -q -m fuzz tests/fuzz

fuzz: setup
	PHONEID_FUZZ_EXAMPLES=$${PHONEID_FUZZ_EXAMPLES:-300} pytest -q -s -m fuzz tests/fuzz

# cosmic-ray over the security-critical rules, each module with the tests that cover it, on a copy
# of the tree (docs/mutation.md); not in the gate: it takes tens of minutes. TARGETS=... picks some
# (python tools/mutation.py --list names them); TARGETS="--survivors ..." runs the last survivors again.
mutation: setup
	nice -n 10 python tools/mutation.py $(TARGETS)

browser: setup browser-deps
	node --test --test-concurrency=1 tests/browser/

# The TypeScript server SDK's types, generated again from docs/openapi.json after the API changed
# (clients/typescript/README.md; tests/contract/test_sdk_typescript.py fails until they are).
typescript-sdk-types: node_modules/.installed
	cd clients/typescript && npm run generate

clean:
	rm -rf $(VENV) node_modules .aws-sam .pytest_cache .mypy_cache .ruff_cache .phoneid/bytecode

.PHONY: licences prove-compat

# The licence of every package the gate installs (.venv, checkov's virtualenv, node_modules) and of
# every distribution the layer ships, against tools/licences.toml (pip-licenses and
# license-checker-rseidelsohn read them; docs/adr/0113-the-licences-dependencies-may-carry.md). In the
# gate beside the suite: by then node_modules and checkov's virtualenv are installed and the layer built.
licences: setup $(CHECKOV_STAMP) node_modules/.installed template
	python -m tools.licences --layer $(LAYER_BUILD)

# Prove's published TypeScript SDK against the local stack, unmodified (docs/adr/0107-the-typescript-server-sdk.md).
# Opt-in, never in `make test`: its licence is CC BY-NC-ND 4.0 (non-commercial, no derivatives), so it
# has its own package.json and lock in tests/prove-compat, installed only here
# (docs/adr/0112-proves-sdk-leaves-the-default-gate.md).
PROVE_COMPAT := tests/prove-compat

$(PROVE_COMPAT)/node_modules/.installed: $(PROVE_COMPAT)/package.json $(PROVE_COMPAT)/package-lock.json
	npm ci --prefix $(PROVE_COMPAT) --no-audit --no-fund
	touch $@

prove-compat: setup node_modules/.installed $(PROVE_COMPAT)/node_modules/.installed
	PHONEID_PROVE_COMPAT=1 pytest -q -n 0 -m prove_compat tests/e2e/test_sdk_typescript.py
