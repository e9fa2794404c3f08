# cluster_sim — `make lab` opens the suite, `make test` passes the tests. Both set up .venv first.
SHELL := /bin/bash
VENV  := .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# The first interpreter that is Python 3.12 or newer (Mesa 3.4+ needs it), oldest first: $(PYTHON) if given,
# then python3.12/python3.13/python3 on PATH, then pyenv's and the usual install locations.
FIND_PYTHON := for p in $${PYTHON:-} python3.12 python3.13 python3 \
	  $$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.1[2-9]*/bin/python 2>/dev/null | sort -V) \
	  /usr/local/bin/python3.12 /usr/local/bin/python3.13 /usr/bin/python3.12 /usr/bin/python3.13; do \
	  if command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then \
	    command -v $$p; exit 0; fi; done; exit 1

.PHONY: lab demo test notebooks browser exercises bench reproduce setup lock clean

setup: $(STAMP)

$(STAMP): pyproject.toml requirements.lock kernelspec/pyproject.toml kernelspec/kernel.json
	@py=$$($(FIND_PYTHON)) || { \
	  echo "cluster_sim needs Python 3.12 or newer (Mesa 3.4+), and none was found."; \
	  echo "Install one (e.g. 'pyenv install 3.12', 'apt-get install python3.12', or conda),"; \
	  echo "or point to it: make PYTHON=/path/to/python3.12 test"; exit 1; }; \
	if [ -x $(PY) ] && ! $(PY) -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then \
	  echo "$(VENV) holds an older Python: recreating it"; rm -rf $(VENV); fi; \
	[ -x $(PY) ] || { echo "creating $(VENV) with $$py ($$($$py --version))"; $$py -m venv $(VENV); }
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c requirements.lock -e ".[test,dev]" ./kernelspec
	@touch $(STAMP)

# requirements.lock anew: the newest versions pyproject.toml allows, frozen (then run `make test` before committing it)
lock: $(STAMP)
	$(PY) -m pip install --quiet --upgrade --upgrade-strategy eager -e ".[test,dev]" ./kernelspec
	@{ sed -n '/^#/p' requirements.lock; $(PY) -m pip freeze --exclude-editable | grep -v '^cluster-sim-kernel'; } > requirements.lock.new
	@mv requirements.lock.new requirements.lock; touch $(STAMP); echo "requirements.lock: $$(grep -vc '^#' requirements.lock) packages"

# JupyterLab refuses to start as root unless told (containers and lab machines often are root).
LAB_ARGS ?= $(if $(filter 0,$(shell id -u)),--allow-root,)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --ServerApp.root_dir="$(CURDIR)" $(LAB_ARGS) notebooks/00_cluster_sim_tour.ipynb

# one lab as a dashboard for a workshop (Voila: prose, panels and figures; code hidden), on 127.0.0.1
LAB ?= 00
DEMO_PORT ?= 8866
demo: $(STAMP)
	@nb=$$(cd notebooks && ls $(LAB)_*.ipynb 2>/dev/null | head -1); \
	if [ -z "$$nb" ]; then echo "make demo LAB=NN: there is no notebooks/$(LAB)_*.ipynb; the labs are:" \
	  $$(cd notebooks && ls *.ipynb | cut -c1-2 | tr '\n' ' '); exit 1; fi; \
	echo "serving notebooks/$$nb as a dashboard at http://127.0.0.1:$(DEMO_PORT)/ (Ctrl-C stops it)"; \
	cd notebooks && ../$(VENV)/bin/voila "$$nb" --no-browser --Voila.ip=127.0.0.1 --port=$(DEMO_PORT)

test: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadgroup -q

notebooks: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadgroup -q tests/notebooks

# the notebooks in JupyterLab in Chromium (Debian's /usr/bin/chromium); report in reports/browser/
browser: $(STAMP)
	$(PY) -m pytest -q tests/browser

exercises: $(STAMP)
	$(PY) -m cluster_sim.exercises

bench: $(STAMP)
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b --quick || exit 1; done

# every lab's notebook at one preset, one static HTML report: reports/reproduce/$(SCALE)/report.html
SCALE ?= ci
reproduce: $(STAMP)
	$(PY) -m cluster_sim.reproduce --scale $(SCALE)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
