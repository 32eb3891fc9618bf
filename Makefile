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
# The demo: the real tools in the lab hosts (iperf3, iperf), their sshd and the controller's ssh, ip/tc.
DEMO_APT_PACKAGES := iperf3 iperf openssh-server openssh-client iproute2 procps
# make test adds ping, fuser, shellcheck (hacking/check-docs.sh), git, busybox (ESXi stand-in),
# Go with govmomi's simulator (vcsim) for the vSphere tests, and the PostgreSQL server the history
# tests start (a throw-away cluster).
APT_PACKAGES := $(DEMO_APT_PACKAGES) iputils-ping psmisc shellcheck git busybox golang-go golang-github-vmware-govmomi-dev postgresql
export PIP_CACHE_DIR := $(abspath build/pip-cache)
export MPLCONFIGDIR := $(abspath build/matplotlib)
PYTEST_ARGS ?=
BENCH_ARGS ?=

.PHONY: help deps deps-demo venv venv-demo demo test lint unit integration sanity galaxy ansible-lint changelog-lint bench clean

help:
	@echo "make demo   - real iperf runs on this machine, parsed and printed as a table"
	@echo "make test   - every gate: ruff, mypy, pytest (unit+live+lab), ansible-test sanity,"
	@echo "              ansible-lint, changelog lint, galaxy build + ansible-doc of every plugin"
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

# The venv with the collection's own requirements (all the demo needs), then the dev toolchain.
$(BIN)/activate: requirements.txt
	$(PYTHON) -m venv $(VENV) || { apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(VENV); }
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt
	touch $@

$(VENV)/.requirements-dev: $(BIN)/activate requirements-dev.txt
	$(BIN)/pip install -q -r requirements-dev.txt
	touch $@

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
	$(BIN)/pytest tests/unit -q $(PYTEST_ARGS)

integration: deps venv
	$(BIN)/pytest tests/integration -q $(PYTEST_ARGS)

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
$(SANITY_VENV)/bin/activate: requirements.txt
	$(PYTHON) -m venv $(SANITY_VENV)
	$(SANITY_VENV)/bin/pip install -q --upgrade pip
	$(SANITY_VENV)/bin/pip install -q "$$(grep -m1 '^ansible-core' requirements.txt)"
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

test: deps venv lint changelog-lint unit integration sanity galaxy ansible-lint
	@echo "make test: all gates passed"

bench: deps venv
	$(PY) tests/bench/bench_parse.py
	$(PY) tests/bench/bench_overhead.py $(BENCH_ARGS)

clean:
	rm -rf build $(VENV) $(VENV)-sanity .mypy_cache .ruff_cache .pytest_cache .hypothesis
