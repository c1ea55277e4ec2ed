# Every target creates its own virtual environment on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= dev,distributed,lightgbm,xgboost,catboost,docs

.PHONY: demo test fuzz lint docs clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[$(EXTRAS)]"
	-$(PY) -m pip install --quiet "passagemath-cmr" || echo "optional extra 'tu' (passagemath-cmr) not installed; the CMR TU method will report itself unavailable"
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/prune-opt demo --out demo-output

test: $(VENV)/.installed
	$(PY) -m pytest -n 2 -q tests --doctest-modules prune_opt forest_builders

# random hypothesis profile with many examples; run before landing (not in CI)
fuzz: $(VENV)/.installed
	HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest -n 2 -q tests -p no:cacheprovider

docs: $(VENV)/.installed
	$(PY) -m sphinx -W --keep-going -b html docs docs/_build/html

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) demo-output .pytest_cache
