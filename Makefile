# Two commands for a new user: `make run` (set-up included) and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PROTOS := $(wildcard proto/referee/v1/*.proto)
GEN    := referee/v1/.generated

.PHONY: setup proto run serve test bench lint clean help chromium

help:
	@echo "make run    set up, start a referee (SQLite store), play a live Batavia match among reference"
	@echo "            bots, then a short tournament of the reference bots on every game"
	@echo "make test   run the whole test suite"
	@echo "make bench  measure engine and gRPC speed; writes bench/results.json"
	@echo "make lint   ruff and mypy, as CI runs them"
	@echo "make serve  run the referee alone on 127.0.0.1:50051"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@touch $@

$(GEN): $(PROTOS) $(STAMP)
	@mkdir -p referee/v1
	$(PY) -m grpc_tools.protoc -Iproto --python_out=. --pyi_out=. --grpc_python_out=. $(PROTOS)
	@touch $@

setup: $(STAMP) $(GEN)
proto: $(GEN)

run: setup
	$(PY) -m referee.demo
	$(VENV)/bin/referee-tournament demo

serve: setup
	$(VENV)/bin/referee serve

test: setup chromium
	$(PY) -m pytest -n 2 -q

# The browser tests drive the system Chromium (Debian package `chromium`): installed here when
# missing and running as root; otherwise those tests are skipped and say why.
chromium:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing the Debian package chromium for the browser tests"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null 2>&1 && \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1; } || \
	    echo "chromium could not be installed: the browser tests will be skipped"; \
	  else echo "chromium is not installed (apt-get install chromium as root): the browser tests will be skipped"; fi; \
	fi

bench: setup
	$(PY) -m bench.run

# ruff with the rules chosen in pyproject.toml, then mypy over referee/, the SDK, the runner and
# bench/ (its files and settings are in pyproject.toml too)
lint: setup
	$(PY) -m ruff check referee clients tests bench
	$(PY) -m mypy

clean:
	rm -rf $(VENV) referee/v1 .pytest_cache bench/results.json
