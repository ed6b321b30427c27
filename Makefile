# Two commands do all the set-up: `make demo` and `make test`. Both build .venv when it is missing
# or older than any package definition.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.tensorweave-installed
PACKAGE_FILES := pyproject.toml $(wildcard packages/*/pyproject.toml) $(wildcard examples/plugins/*/pyproject.toml) \
	$(wildcard packages/kernels-cpu/CMakeLists.txt) $(wildcard packages/kernels-cpu/csrc/*)
EDITABLES := -e "packages/core[test]" -e "packages/kernels-cpu[test]" \
	$(foreach p,$(wildcard examples/plugins/*/pyproject.toml),-e $(dir $(p))) -e ".[all,examples]"
PYTEST_ARGS ?=

.PHONY: venv test demo bench clean tox

venv: $(STAMP)

$(STAMP): $(PACKAGE_FILES) Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(EDITABLES)
	touch $(STAMP)

test: venv
	$(BIN)/python -m pytest tests $(PYTEST_ARGS)

demo: venv
	$(BIN)/python examples/digits_cnn.py

bench: venv
	$(BIN)/python -m benchmarks

tox: venv
	$(BIN)/python -m pip install --quiet tox
	$(BIN)/tox -p 2

clean:
	rm -rf $(VENV) .tox build dist
