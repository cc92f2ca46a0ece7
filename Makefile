# aqmlab: every set-up step a fresh machine needs lives here.
#   make demo   - set up, build, run the default demo (results/demo/)
#   make test   - set up, build, run the whole suite (cargo + pytest)
#   make build  - set up and build only (leaves the CLI at .venv/bin/aqmlab)
#   make bench  - benchmarks (prints ratios against in-process references)
#   make lint   - rustfmt, clippy -D warnings, ruff check and format (.ci/run runs it too)
#   make ns3    - install Debian's ns-3 and build the cross-check program (validation/ns3)
#   make ns2    - install Debian's ns-2.35 (validation/ns2)
#   make ns2-full - rerun every ns-2 cross-check case (validation/ns2/RESULTS.md; long)
#   make debian-packages - install the Debian packages the tests use (scripts/debian-packages.txt)

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.deps-stamp
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: all build test demo bench ns3 ns2 ns2-full lint fmt clean test-rust test-python rust-tools debian-packages

all: build

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "maturin>=1.5,<2"
	touch $(STAMP)

build: $(STAMP)
	$(VENV)/bin/maturin develop --release --quiet -E dev,dask

test: build debian-packages test-rust test-python

debian-packages:
	bash scripts/install-debian-packages.sh

test-rust:
	cargo test --workspace --exclude aqmlab-pybind --release

test-python: build
	$(PY) -m pytest -q

demo: build
	$(VENV)/bin/aqmlab demo --out results/demo

bench: build
	$(PY) benches/run_all.py

ns3:
	bash validation/ns3/install.sh

ns2:
	bash validation/ns2/install.sh

ns2-full: build ns2
	nice $(PY) validation/ns2/run_all.py

# rustfmt and clippy are rustup components a fresh toolchain may lack
rust-tools:
	@cargo fmt --version >/dev/null 2>&1 && cargo clippy --version >/dev/null 2>&1 \
		|| rustup component add rustfmt clippy

# ruff comes with the dev extra that `make build` installs
lint: build rust-tools
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests benches validation
	$(VENV)/bin/ruff format --check python tests benches validation

fmt: build rust-tools
	cargo fmt --all
	$(VENV)/bin/ruff format python tests benches validation

clean:
	rm -rf target $(VENV) results
