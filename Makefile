# Two commands for a new user: `make run` (set-up included) and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PROTOS := $(wildcard proto/referee/v1/*.proto)
GEN    := referee/v1/.generated

.PHONY: setup proto run serve test bench bench-sprt lint proto-lint clean help packages docs docs-serve \
        image test-image test-systemd compiled clean-compiled test-compiled

help:
	@echo "make run         set up, start a referee (SQLite store), play a live Batavia match among"
	@echo "                 reference bots, then a short tournament of the reference bots on every game"
	@echo "make test        run the whole test suite (about 10 minutes on 2 cores)"
	@echo "make bench       measure engine and gRPC speed; writes bench/results.json (about 7 minutes)"
	@echo "make compiled    compile the engines with mypyc into extension modules that shadow their .py"
	@echo "                 files while present (optional; a minute or two; bench/compiled.py)"
	@echo "make clean-compiled  remove the compiled build: the pure-Python reference runs again"
	@echo "make test-compiled   build, then run the golden records, the contract tests, the games'"
	@echo "                 rule tests and the forward model's against it (opt-in, not in make test)"
	@echo "make bench-sprt  the search bot vs greedy at 1 CPU s a move, SPRT at every table (hours;"
	@echo "                 stop it any time: the next run goes on where it stopped)"
	@echo "make lint        ruff, mypy, buf lint and buf breaking, as CI runs them"
	@echo "make serve       run the referee alone on 127.0.0.1:50051"
	@echo "make docs        build the documentation site into site/ (open site/index.html)"
	@echo "make docs-serve  preview the documentation at http://127.0.0.1:8000/, rebuilt on change"
	@echo "make setup       create .venv with the project and its dev extra, generate the protocol code"
	@echo "                 (the first time: about 4-5 minutes; run and test do it by themselves)"
	@echo "make proto       generate the Python code of proto/ into referee/v1/"
	@echo "make proto-lint  buf lint and buf breaking against the last release's protocol"
	@echo "make packages    install the Debian packages the tests and the kits use (when root)"
	@echo "make image       build the referee's OCI image into build/image/referee.oci.tar from Debian"
	@echo "                 bookworm and the project's wheel, no base image pulled (root; 3 minutes)"
	@echo "make test-image  build the image, then run it with podman and play a match against it"
	@echo "                 (opt-in, not part of make test; root; about 4 minutes)"
	@echo "make test-systemd  build the image with systemd, boot it in podman, start referee.service,"
	@echo "                 then referee-cluster.service and a league runner (opt-in; root; 5 minutes)"
	@echo "make clean       remove .venv, the generated code, bench/results.json and site/"
	@echo "make help        this list"

# Everything the tests and the lint use is installed here (the dev extra: Ray, the build tools
# for the SDK's wheel, Playwright for Python...): the suite itself installs nothing and reaches
# no package index (tests/test_offline.py). On a fresh machine this takes some minutes: Ray,
# OpenSpiel and Playwright are the large downloads.
$(STAMP): pyproject.toml
	@echo "== setting up .venv (once; about 4-5 minutes on a fresh machine, most of it downloads)"
	@echo "== [1/3] creating the virtual environment"
	$(PYTHON) -m venv $(VENV)
	@echo "== [2/3] upgrading pip"
	$(PY) -m pip install -q --upgrade pip
	@echo "== [3/3] installing the project and its dev extra (Ray, OpenSpiel and Playwright are the"
	@echo "==       large downloads; pip names each package as it goes)"
	$(PY) -m pip install --progress-bar off -e '.[dev]'
	@echo "== set-up done"
	@touch $@

$(GEN): $(PROTOS) $(STAMP)
	@mkdir -p referee/v1
	$(PY) -m grpc_tools.protoc -Iproto --python_out=. --pyi_out=. --grpc_python_out=. $(PROTOS)
	@touch $@

setup: $(STAMP) $(GEN)
proto: $(GEN)

run: setup
	$(PY) -m referee_tools.demo
	$(VENV)/bin/referee-tournament demo

serve: setup
	$(VENV)/bin/referee serve

# Two workers; --dist worksteal lets a worker that runs out take half of the other's queue, and
# tests/conftest.py starts the longest modules first, so the run does not end on one long test.
test: setup packages
	$(PY) -m pytest -n 2 --dist worksteal -q

# The Debian packages the tests use (tests/debian-packages.txt: Chromium for the browser tests,
# bubblewrap, openssl, Node.js) and each kit's (clients/*/debian-packages.txt), installed when
# missing and running as root; otherwise the tests that need them skip and say why.
packages: setup
	@$(PY) -m tests.debian tests/debian-packages.txt clients/*/debian-packages.txt

# The referee's OCI image (deploy/image/build.sh, docs/organizer/operations.md): mmdebstrap
# makes a Debian bookworm root file system with the project's wheel and its PyPI dependencies
# in a venv, buildah makes the image, written as an OCI archive for `podman load`. Needs root
# and the packages of deploy/image/debian-packages.txt, installed here when missing. It prints
# each step; about 3 minutes, most of it Debian's and PyPI's downloads.
IMAGE_OUT := build/image
image: setup
	@$(PY) -m tests.debian deploy/image/debian-packages.txt
	@if [ "$$(id -u)" != 0 ]; then echo "make image needs root (mmdebstrap's root mode, buildah)"; \
		exit 2; fi
	deploy/image/build.sh $(IMAGE_OUT) $(PY)

# The image run with podman, a match played against it from this machine
# (tests/deploy/test_image.py). Opt-in: the build takes minutes, so `make test` and CI skip it.
test-image: image
	REFEREE_IMAGE_TEST=1 $(PY) -m pytest -q -n 0 -p no:cacheprovider tests/deploy/test_image.py

# deploy/systemd's units started under a real systemd (PID 1 in a podman container) from the
# image built with Debian's systemd (SYSTEMD=1, build/image/referee-systemd.oci.tar), built
# here first as `image` builds its own: the tests reach no package index (PIP_NO_INDEX), and
# the build downloads the wheels (tests/deploy/test_systemd_boot.py). Opt-in like test-image.
test-systemd: setup
	@$(PY) -m tests.debian deploy/image/debian-packages.txt
	@if [ "$$(id -u)" != 0 ]; then echo "make test-systemd needs root (mmdebstrap's root mode, buildah)"; \
		exit 2; fi
	SYSTEMD=1 deploy/image/build.sh $(IMAGE_OUT) $(PY)
	REFEREE_IMAGE_TEST=1 $(PY) -m pytest -q -n 0 -p no:cacheprovider tests/deploy/test_systemd_boot.py

bench: setup
	$(PY) -m bench.run

# The optional compiled build of the engines (bench/compiled.py, docs/benchmarks.md): mypyc
# compiles bench/compiled.py's MODULES into extension modules next to their .py files, which
# Python imports first while they are there; the pure-Python modules stay the reference.
# `python -m bench.run --compiled` measures it. Needs a C compiler and Python's headers.
compiled: setup
	$(PY) -m bench.compiled build

# What bench/compiled.py's clean removes, without the venv (make clean runs it too)
clean-compiled:
	find referee -name '*.so' -delete
	rm -f build/compiled/manifest.json

# Opt-in (it builds first): the golden records and the contract tests, each game's rule tests
# and the observation planes' tests, run with the build present; tests/bench/test_compiled.py
# first checks that every module of the build really is imported from its extension module.
test-compiled: compiled
	REFEREE_COMPILED_TEST=1 $(PY) -m pytest -n 2 -q -p no:cacheprovider \
		tests/bench/test_compiled.py tests/contract tests/batavia tests/goa tests/santa_maria tests/sim \
		tests/research/test_planes.py tests/research/test_planes_goa.py \
		tests/research/test_planes_santa_maria.py

# The search bot against greedy at one CPU second a move, SPRT at every seat count of every
# game (bench/sprt.py; hours: opt-in, never part of test or bench). PROFILE=fast for the other.
# It goes on from bench/sprt.json where an earlier run stopped (--resume): stop it any time.
# Goa's 2004 edition is played as tables of its own after every game's default.
# SPRT_FLAGS passes more flags to both: a search knob makes tables of their own (an experiment,
# e.g. SPRT_FLAGS="--horizon 240 --seats 4"); --seats narrows both runs.
bench-sprt: setup
	$(PY) -m bench.sprt --profile $(or $(PROFILE),strong) --json bench/sprt.json --resume \
		$(SPRT_FLAGS)
	$(PY) -m bench.sprt --profile $(or $(PROFILE),strong) --json bench/sprt.json --resume \
		--games goa --option edition=2004 $(SPRT_FLAGS)

# The documentation site (mkdocs.yml): tutorials per role and references written from the
# source at each build (docs/gen/hooks.py). Strict: a broken link or reference fails the build.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

docs-serve: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve

# The protocol release `buf breaking` compares proto/ with (docs/releases.md): its .proto files
# are kept in the repo, so the check needs no git tag (CI clones may have none).
BASELINE := releases/0.1.0/proto

# ruff with the rules chosen in pyproject.toml, then mypy over referee/, the SDK, the runner and
# bench/ (its files and settings are in pyproject.toml too), then the protocol's checks
lint: setup
	$(PY) -m ruff check referee clients tests bench docs/gen
	$(PY) -m mypy
	@$(MAKE) --no-print-directory proto-lint

# Buf over proto/ (buf.yaml; the buf binary is the dev extra's buf-bin wheel): its style rules,
# then no change that breaks the wire of the last release's clients. The pre-commit hook runs it.
proto-lint:
	$(VENV)/bin/buf lint
	$(VENV)/bin/buf breaking --against $(BASELINE)

clean: clean-compiled
	rm -rf $(VENV) referee/v1 .pytest_cache bench/results.json site
