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

.PHONY: install run test test-slow dev bench clean lock

install: $(STAMP)

# torch first, CPU wheel, and the pin repeated in the second command: any looser requirement would let a
# dependency pull a multi-GB CUDA build.
# constraints.txt pins every package the tests ran with (`make lock` regenerates it from the venv), so two installs
# of the same commit get the same versions.
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip wheel
	$(BIN)/pip install -q torch==2.13.0 -c constraints.txt
	$(BIN)/pip install -q torch==2.13.0 -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

# Local version labels (torch's +cpu) are dropped: the constraint must match the wheel whatever index serves it.
lock:
	$(BIN)/pip freeze --exclude-editable | grep -v '^#' | sed 's/+cpu$$//' | LC_ALL=C sort -f > constraints.txt

# The instance settings (telemetry off, run queue, index-write limit) come from configs/dagster.yaml.
$(DAGSTER_HOME): configs/dagster.yaml
	@mkdir -p $(DAGSTER_HOME)
	@cp configs/dagster.yaml $(DAGSTER_HOME)/dagster.yaml  # the project's instance settings win over an older copy

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
	$(BIN)/pip install -q torch==2.13.0 -c constraints.txt -e '.[dev,bench]'
	@touch $(BENCH_STAMP)

bench: install $(BENCH_STAMP)
	$(BIN)/python -m heritage_pipeline_eval.bench.chunker $(BENCH_ARGS)

# data/output holds the derived models too (cache/models: ONNX export, model2vec distillation)
clean:
	rm -rf data/output .dagster_home
