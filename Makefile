# Two commands do all the set-up: `make demo` and `make test`. Both build .venv when it is missing
# or older than any package definition.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.tensorweave-installed
PACKAGE_FILES := pyproject.toml $(wildcard packages/*/pyproject.toml) $(wildcard examples/plugins/*/pyproject.toml) \
	$(wildcard packages/kernels-cpu/CMakeLists.txt) $(wildcard packages/kernels-cpu/csrc/*)
EDITABLES := -e "packages/core[test]" -e "packages/kernels-cpu[test]" -e "packages/kernels-cuda[test]" \
	-e "packages/tensorboard-lite[test]" \
	-e "packages/distributed[test,mpich]" \
	$(foreach p,$(wildcard examples/plugins/*/pyproject.toml),-e $(dir $(p))) -e ".[all,examples]"
PYTEST_ARGS ?=
# The core alone, as `pip install tensorweave` gives it (no kernels, no plugins): its own small venv.
CORE_VENV := .venv-core
CORE_STAMP := $(CORE_VENV)/.tensorweave-installed

.PHONY: venv test demo bench clean tox chromium

venv: $(STAMP)

$(STAMP): $(PACKAGE_FILES) Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(EDITABLES)
	touch $(STAMP)

test: venv chromium $(CORE_STAMP)
	$(BIN)/python -m pytest tests $(PYTEST_ARGS)
	@echo "-- the core alone (no kernel or plugin package installed): tests/core"
	$(CORE_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/core

$(CORE_STAMP): packages/core/pyproject.toml Makefile
	test -x $(CORE_VENV)/bin/python || $(PYTHON) -m venv $(CORE_VENV)
	$(CORE_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(CORE_VENV)/bin/python -m pip install --quiet -e packages/core pytest
	touch $(CORE_STAMP)

# The dashboard's browser tests drive Debian's Chromium (Playwright cannot download its own here):
# installed when missing and we are root; without it those tests skip and say why.
chromium:
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing chromium for the dashboard's browser tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
			|| echo "could not install chromium: the browser tests will be skipped"; \
	fi

demo: venv
	$(BIN)/python examples/digits_cnn.py
	@echo ""
	@echo "See the run in the dashboard:  $(BIN)/tensorweave-board --logdir runs/digits_cnn"
	@echo "then open http://127.0.0.1:6006 (loss and accuracy, weight histograms, inputs, graph, step timeline)"

# TF1 reference rows: TensorFlow runs in its own interpreter, never a dependency (benchmarks/tf1.py):
# TF1_PYTHON=/path/to/python names one; otherwise tensorflow-cpu is installed into .venv-tf1 on first use.
bench: venv
	TENSORWEAVE_BENCH_TF1_INSTALL=1 $(if $(TF1_PYTHON),TENSORWEAVE_BENCH_TF1_PYTHON=$(TF1_PYTHON)) $(BIN)/python -m benchmarks

tox: venv
	$(BIN)/python -m pip install --quiet tox
	$(BIN)/tox -p 2

clean:
	rm -rf $(VENV) $(CORE_VENV) .tox build dist
