# heritage_pipeline — everything a fresh machine needs is behind `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# Nothing may download a model at run time: the tokenizer and embedder ship inside Python packages.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# One Dagster instance for the CLI and the UI, so `make dev` shows what `make run` materialised.
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home

.PHONY: install run test test-slow dev bench clean

install: $(STAMP)

# torch first, CPU wheel, and the pin repeated in the second command: any looser requirement would let a
# dependency pull a multi-GB CUDA build.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip wheel
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q torch==2.13.0 -e '.[dev]'
	@touch $(STAMP)

# the instance folder with the project's dagster.yaml (telemetry off); an existing dagster.yaml is kept
$(DAGSTER_HOME):
	@mkdir -p $(DAGSTER_HOME)
	@test -f $(DAGSTER_HOME)/dagster.yaml || cp configs/dagster.yaml $(DAGSTER_HOME)/dagster.yaml

run: install | $(DAGSTER_HOME)
	$(BIN)/heritage-pipeline run

test: install
	$(BIN)/python -m pytest -m "not slow" -q

test-slow: install
	$(BIN)/python -m pytest -m slow -q

dev: install | $(DAGSTER_HOME)
	$(BIN)/dagster dev -w workspace.yaml -h 127.0.0.1 -p $${PORT:-3000}

# The peer chunkers (optional `bench` extra) are installed on first use; torch pinned again for the same reason.
BENCH_STAMP := $(VENV)/.bench-stamp
$(BENCH_STAMP): $(STAMP)
	$(BIN)/pip install -q torch==2.13.0 -e '.[dev,bench]'
	@touch $(BENCH_STAMP)

bench: install $(BENCH_STAMP)
	$(BIN)/python -m heritage_pipeline_eval.bench.chunker $(BENCH_ARGS)

clean:
	rm -rf data/output .dagster_home
