# esxilab.iperf — developer entry points.
#   make demo   install what the demo needs (DEMO_APT_PACKAGES, requirements.txt), then run a real demo
#   make test   install everything CI needs (APT_PACKAGES, requirements-dev.txt), then run every gate
# Both work on a fresh Debian 12 machine as root (apt-get and pip are called as needed), and write
# nothing outside this checkout and its .venv: Ansible's home is build/ansible-home (ansible.cfg),
# pip's cache build/pip-cache, matplotlib's build/matplotlib (exported below); apt is the system's.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
COLLECTION_ROOT := build/collections
COLLECTION_DIR := $(COLLECTION_ROOT)/ansible_collections/esxilab/iperf
# The demo and the README lab block: the real tools in the lab hosts (iperf3, iperf), their sshd and the
# controller's ssh, ip/tc, and ping (the path MTU checks of mtu-compare.yml and esxi-56g.yml).
DEMO_APT_PACKAGES := iperf3 iperf openssh-server openssh-client iproute2 procps iputils-ping
# make test adds fuser, shellcheck (hacking/check-docs.sh), git, busybox (ESXi stand-in),
# Go with govmomi's simulator (vcsim) for the vSphere tests, and the PostgreSQL server the history
# tests start (a throw-away cluster).
APT_PACKAGES := $(DEMO_APT_PACKAGES) psmisc shellcheck git busybox golang-go golang-github-vmware-govmomi-dev postgresql ethtool chromium netplan.io
export PIP_CACHE_DIR := $(abspath build/pip-cache)
export MPLCONFIGDIR := $(abspath build/matplotlib)
PYTEST_ARGS ?=
BENCH_ARGS ?=

.PHONY: help deps deps-demo venv venv-demo demo test test-full lock lint unit integration sanity galaxy ansible-lint changelog-lint bench clean

help:
	@echo "make demo   - real iperf runs on this machine, parsed and printed as a table"
	@echo "make test   - every gate: ruff, mypy, pytest (unit+live+lab), ansible-test sanity,"
	@echo "              ansible-lint, changelog lint, galaxy build + ansible-doc of every plugin"
	@echo "make lock   - refresh requirements*.lock from the ranges in requirements*.txt (then make test, commit)"
	@echo "make test-full - make test with every repetition and scale test (docs/testing.md)"
	@echo "make bench  - benchmarks (printed as ratios; not part of make test)"
	@echo "             BENCH_ARGS=--quick: pairs 1,2,4 and the sweep only (see tests/bench/bench_overhead.py)"

# System packages: what the demo needs (deps-demo) or everything the tests use (deps).
APT_INSTALL_MISSING = missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing; \
	fi
deps-demo:
	@$(call APT_INSTALL_MISSING,$(DEMO_APT_PACKAGES))
deps:
	@$(call APT_INSTALL_MISSING,$(APT_PACKAGES))

# Python packages come only from the committed locks (exact versions with hashes, `pip --require-hashes`):
# requirements.lock for the demo, requirements-dev.lock (a superset at the same versions) for the tests,
# requirements-sanity.lock for ansible-test's venv. `make lock` makes them from the ranges in
# requirements*.txt; the venv's own pip (the one Python ships) installs them, nothing is upgraded on the side.
PIP_LOCKED = pip install -q --require-hashes --no-deps
$(BIN)/activate: requirements.lock
	$(PYTHON) -m venv $(VENV) || { apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(VENV); }
	$(BIN)/$(PIP_LOCKED) -r requirements.lock
	touch $@

$(VENV)/.requirements-dev: $(BIN)/activate requirements-dev.lock
	$(BIN)/$(PIP_LOCKED) -r requirements-dev.lock
	touch $@

# The locks: every package the ranges pull in, pinned with the hashes of its files, resolved for the
# machine's Python by uv (itself pinned) from the package index. `make lock` refreshes them to the newest
# versions the ranges allow; run it when a range changes, then `make test`, and commit the three files.
UV_VERSION := 0.13.8
LOCK_TOOLS := build/lock-tools
UV_COMPILE = $(LOCK_TOOLS)/bin/uv pip compile -q --upgrade --generate-hashes --no-config \
	--python-version $$($(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])') --custom-compile-command 'make lock'
$(LOCK_TOOLS)/bin/uv:
	$(PYTHON) -m venv $(LOCK_TOOLS)
	$(LOCK_TOOLS)/bin/pip install -q uv==$(UV_VERSION)

lock: $(LOCK_TOOLS)/bin/uv
	$(UV_COMPILE) -o requirements.lock requirements.txt
	$(UV_COMPILE) -o requirements-dev.lock -c requirements.lock requirements-dev.txt
	grep -m1 '^ansible-core' requirements.txt | $(UV_COMPILE) -o requirements-sanity.lock -c requirements.lock -

# The checkout as Ansible and mypy see it: build/checkout/ansible_collections/esxilab/iperf is a
# link to this directory (ansible.cfg's collections_path), so playbooks run the code being edited.
CHECKOUT_LINK := build/checkout/ansible_collections/esxilab/iperf
$(CHECKOUT_LINK):
	mkdir -p $(dir $@) && ln -sfn ../../../.. $@

venv-demo: $(BIN)/activate $(CHECKOUT_LINK)
venv: venv-demo $(VENV)/.requirements-dev

# The local lab demo: 4 namespace hosts on 1 Gbit/s links, a short paired test suite, a
# report with plots; the lab is removed afterwards unless KEEP_LAB=1.
demo: deps-demo venv-demo
	$(PY) hacking/demo_lab.py $(DEMO_ARGS)

# mypy resolves the collection's own FQCN imports through the checkout link.
lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	cd build/checkout && $(abspath $(BIN))/mypy --config-file ../../pyproject.toml -p ansible_collections.esxilab.iperf.plugins
	MYPYPATH=build/checkout $(BIN)/mypy tests hacking lab

unit: venv
	$(BIN)/pytest tests/unit -q --durations=10 $(PYTEST_ARGS)

# make test deselects the tests marked `full` (repetitions and scale); make test-full runs every test.
# The files run on INTEGRATION_WORKERS pytest-xdist workers, each file whole on one worker (--dist loadfile:
# its lab, with the file's own --name and subnet, is built once); most of a lab test's time is spent waiting
# (ssh, iperf's seconds, Ansible's forks), so 2 workers pay on 2 cores (docs/testing.md has the figures).
# The tests marked `serial` load every core on purpose, or measure a UDP rate that another lab's load would
# distort (rate_search's limit): they run afterwards, alone.
INTEGRATION_MARK ?= not full
INTEGRATION_WORKERS ?= 2
integration: deps venv
	$(BIN)/pytest tests/integration -q --durations=25 -n $(INTEGRATION_WORKERS) --dist loadfile \
	  -m "($(INTEGRATION_MARK)) and not serial" $(PYTEST_ARGS)
	$(BIN)/pytest tests/integration -q --durations=5 -m "($(INTEGRATION_MARK)) and serial" $(PYTEST_ARGS)

# The collection as Ansible sees it: a copy at build/collections/ansible_collections/esxilab/iperf.
$(COLLECTION_DIR): FORCE venv
	rm -rf $(COLLECTION_ROOT)
	mkdir -p $(COLLECTION_DIR)
	git ls-files -co --exclude-standard -z | xargs -0 -I{} cp --parents {} $(COLLECTION_DIR)/
	cd $(COLLECTION_DIR) && git init -q && git add -A

FORCE:

# ansible-test's own --venv needs a download outside the package registries, so its pinned
# tools go into a separate virtualenv (they pin pylint & co. differently from ansible-lint).
SANITY_VENV := $(VENV)-sanity
# ansible-test keeps its get-pip cache under ~/.ansible/test: a home of its own inside build/.
SANITY_HOME := $(abspath build/sanity-home)
$(SANITY_VENV)/bin/activate: requirements-sanity.lock
	$(PYTHON) -m venv $(SANITY_VENV)
	$(SANITY_VENV)/bin/$(PIP_LOCKED) -r requirements-sanity.lock
	touch $@

sanity: $(COLLECTION_DIR) $(SANITY_VENV)/bin/activate
	pipv=$$(grep -oE "pip='[0-9.]+'" $(SANITY_VENV)/lib/python*/site-packages/ansible_test/_internal/python_requirements.py | head -1 | grep -oE '[0-9.]+[0-9]'); \
	  mkdir -p $(SANITY_HOME)/.ansible/test/cache && cp hacking/ansible-test-get-pip.py $(SANITY_HOME)/.ansible/test/cache/get_pip_$${pipv//./_}.py
	cd $(COLLECTION_DIR) && HOME=$(SANITY_HOME) PATH=$(abspath $(SANITY_VENV))/bin:$$PATH \
	  ansible-test sanity --requirements --python $$($(abspath $(SANITY_VENV))/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])') --color no

galaxy: venv
	rm -rf build/galaxy && mkdir -p build/galaxy/install
	$(BIN)/ansible-galaxy collection build --force --output-path build/galaxy .
	$(BIN)/ansible-galaxy collection install --offline --force -p build/galaxy/install build/galaxy/esxilab-iperf-*.tar.gz
	PATH=$(abspath $(BIN)):$$PATH ANSIBLE_COLLECTIONS_PATH=$(abspath build/galaxy/install) hacking/check-docs.sh

# ansible-lint installs the collection it lints into ANSIBLE_HOME: keep that inside build/, so
# no copy lands in ~/.ansible/collections to shadow the checkout in later playbook runs.
ansible-lint: venv
	ANSIBLE_HOME=$(abspath build/ansible-lint-home) ANSIBLE_COLLECTIONS_PATH=$(abspath build/checkout) \
	  $(BIN)/ansible-lint --profile production --strict

changelog-lint: venv
	$(BIN)/antsibull-changelog lint

# Every gate in turn, each with its wall time, so the cost stays in view (issue: 20 minutes for make test).
GATES := lint changelog-lint unit integration sanity galaxy ansible-lint
test: deps venv
	@for gate in $(GATES); do \
	  start=$$(date +%s); \
	  $(MAKE) --no-print-directory $$gate || { echo "make test: gate $$gate FAILED after $$(( $$(date +%s) - start )) s"; exit 1; }; \
	  echo "make test: gate $$gate passed in $$(( $$(date +%s) - start )) s"; \
	done
	@echo "make test: all gates passed"

# Every gate with every integration test, the `full` ones (fault matrix, 1000-start race, 64-host lab,
# goodput at 1 Gbit/s, the live agreement matrix, the demo script) included: run it before resolving an
# issue that touches what they cover (docs/testing.md).
test-full:
	$(MAKE) --no-print-directory test INTEGRATION_MARK="full or not full"

bench: deps venv
	$(PY) tests/bench/bench_parse.py
	$(PY) tests/bench/bench_overhead.py $(BENCH_ARGS)

clean:
	rm -rf build $(VENV) $(VENV)-sanity .mypy_cache .ruff_cache .pytest_cache .hypothesis
