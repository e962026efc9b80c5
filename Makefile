# cowmor — two set-up commands: `make bench` and `make test` (see README.md)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
SCALE   ?= small
FORMATS ?= all
## SCENARIOS=all runs every scenario; default: the payments hotfix and the file-size steps
SCENARIOS ?=
## STORE=s3: the warehouse on a SeaweedFS S3 server the run starts on loopback (DELAY_MS=20: S3-like request latency)
STORE ?=
DELAY_MS ?= 0
## the official jars from Maven Central (make jars): the harness takes them after JARS_DIR
MAVEN_JARS := .cowmor-jars/maven/spark-3.5
HAVE_MVN := $(shell command -v mvn 2>/dev/null)
## the S3A connector: the pair the PyPI sdist ships (hadoop-aws 3.3.1); S3A_JARS=$(MAVEN_JARS) takes the official 3.3.4
S3A_JARS ?= .cowmor-jars/s3a
ifeq ($(STORE),s3)
STORE_ARGS := --object-store seaweedfs --object-store-delay-ms $(DELAY_MS) --s3a-jars $(S3A_JARS)
STORE_DEPS := s3a-jars
endif
## make report RUNS="results/<a> results/<b>"; empty: the newest recorded run (by time, partial runs included)
RUNS    ?=
ARGS    ?=
## a folder holding the Delta / Hudi jars (instead of Maven): make bench JARS_DIR=~/jars
JARS_DIR ?=
ifneq ($(strip $(JARS_DIR)),)
export COWMOR_JARS_DIR := $(abspath $(JARS_DIR))
endif

.PHONY: install jars java bench test test-fast lint cluster-test s3a-jars s3-test report compare validate clean distclean findings docs

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "cowmor needs Python 3.10+ (3.11 recommended)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[test]"
	@touch $(STAMP)

install: $(STAMP)

## Iceberg, Delta, Hudi, hadoop-aws + AWS SDK, PostgreSQL JDBC from Maven Central with mvn (coordinates.tsv says
## which, with sha256); without mvn the families take JARS_DIR, PyPI or Spark's own resolution, or skip with the reason
jars: $(STAMP)
ifneq ($(HAVE_MVN),)
	$(BIN)/python tools/fetch_jars.py $(MAVEN_JARS)
else
	@echo "cowmor: no mvn here: the official jars are not fetched (JARS_DIR=... gives a folder of them)"
endif

java: $(STAMP) jars
	@$(BIN)/python -m bench.run.spark

## the default benchmark: payments hotfix + degradation at the small scale, every available configuration, then the report
bench: java $(STORE_DEPS)
	$(BIN)/python -m bench run --scale $(SCALE) --formats $(FORMATS) $(foreach s,$(SCENARIOS),--scenario $(s)) $(STORE_ARGS) $(ARGS)

## Spark's S3A connector jars: from the PyPI sdist that ships them, or with S3A_JARS=$(MAVEN_JARS) the official ones
s3a-jars: $(STAMP)
ifeq ($(S3A_JARS),$(MAVEN_JARS))
	$(BIN)/python tools/fetch_jars.py $(MAVEN_JARS)
else
	$(BIN)/python tools/fetch_s3a_jars.py $(S3A_JARS)
endif

## every configuration at tiny on a SeaweedFS S3 server started by the run (answers, bytes, files, requests)
s3-test: java s3a-jars
	COWMOR_S3A_JARS_DIR=$(abspath $(S3A_JARS)) $(BIN)/python -m pytest tests/objectstore -m objectstore

## the test suite (lint, unit tests, tiny end-to-end runs on real Spark)
test: java lint
	$(BIN)/python -m pytest tests

## ruff (pyflakes, import order; pyproject.toml [tool.ruff]) and mypy on results/, report/ and core/ ([tool.mypy]);
## the package layering is tests/test_layers.py's
lint: $(STAMP)
	$(BIN)/ruff check bench scenarios tests tools
	$(BIN)/mypy

## unit tests only (no JVM)
test-fast: $(STAMP)
	$(BIN)/python -m pytest tests -m "not spark"

## the payments hotfix on a Spark standalone master + worker (loopback), compared with local mode
cluster-test: java
	$(BIN)/python -m pytest tests/cluster -m cluster

## HTML report of the newest run (or RUNS="results/<a> results/<b>")
report: $(STAMP)
	$(BIN)/python -m bench report $(RUNS)

## the project's own answers: the findings page from the reference runs in results/reference (no JVM; the page in about 20 s on 2 cores, then the full reports it links, about a minute more)
findings: $(STAMP)
	$(BIN)/python -m bench findings

## rewrite the figure blocks of README.md and docs/ from the reference runs (make test fails where they drift)
docs: $(STAMP)
	$(BIN)/python -m bench docs

## check recorded runs against the results contract: make validate RUNS=results/<id>
validate: $(STAMP)
	$(BIN)/python -m bench validate $(or $(RUNS),$(error give RUNS=results/<run-id>))

## regression gate between two runs: make compare BASELINE=results/<a> CURRENT=results/<b>
compare: $(STAMP)
	@test -n "$(BASELINE)" -a -n "$(CURRENT)" || { echo "cowmor: usage: make compare BASELINE=results/<a> CURRENT=results/<b>"; exit 2; }
	$(BIN)/python -m bench compare $(BASELINE) $(CURRENT)

## remove generated tables, data and reports (recorded runs in results/ are kept)
clean:
	rm -rf .cowmor-work test-artifacts .benchmarks results/.object-store
	find reports -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} +
	@echo "make clean keeps results/ (your runs and the reference set)"

distclean: clean
	rm -rf $(VENV)
