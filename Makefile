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

.PHONY: lab instructor exercise student-release demo test notebooks browser exercises bench reproduce setup lock clean

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
	@# LowCost's search is compiled by Numba on its first call (about 5 s) and kept in __pycache__: once, here
	$(PY) -c "from cluster_sim.morpheus.packing.lowcost import lowcost_window; lowcost_window([[0, 0]], 2, 1, [1])"
	@touch $(STAMP)

# requirements.lock anew: the newest versions pyproject.toml allows, frozen (then run `make test` before committing it)
lock: $(STAMP)
	$(PY) -m pip install --quiet --upgrade --upgrade-strategy eager -e ".[test,dev]" ./kernelspec
	@{ sed -n '/^#/p' requirements.lock; $(PY) -m pip freeze --exclude-editable | grep -v '^cluster-sim-kernel'; } > requirements.lock.new
	@mv requirements.lock.new requirements.lock; touch $(STAMP); echo "requirements.lock: $$(grep -vc '^#' requirements.lock) packages"

# `make lab`: a student's JupyterLab on the tour. JupyterLab refuses to start as root unless told (containers and
# lab machines often are root), so --allow-root is added then; LAB_ARGS adds options of your own to it, e.g.
# `make lab LAB_ARGS="--port 9999"`. Idle kernels are shut down after 30 minutes (a closed tab leaves its kernel
# running). The student's JupyterLab hides nbgrader's instructor tools (student-jupyter/ holds that setting);
# `make instructor` opens one with them.
ROOT_ARGS := $(if $(filter 0,$(shell id -u)),--allow-root,)
LAB_ARGS ?=
LAB_PORT ?= 8888
TOUR := notebooks/00_cluster_sim_tour.ipynb
JUPYTER_LAB = $(VENV)/bin/jupyter lab --ServerApp.root_dir="$(CURDIR)" --ServerApp.ip=127.0.0.1 \
	--ServerApp.port=$(LAB_PORT) --ServerApp.default_url=/lab/tree/$(TOUR) \
	--MappingKernelManager.cull_idle_timeout=1800 --MappingKernelManager.cull_interval=300 $(ROOT_ARGS) $(LAB_ARGS)

# the server's token is made here, so the URL printed first is the tour's (JupyterLab's own opens a Launcher)
lab: $(STAMP)
	@token=$$($(PY) -c 'import secrets; print(secrets.token_hex(24))'); \
	echo; echo "cluster_sim: the tour is at http://127.0.0.1:$(LAB_PORT)/lab/tree/$(TOUR)?token=$$token"; \
	echo "Do the exercises in workspace/ (make exercise LAB=NN puts one there); nothing the project runs writes there."; \
	echo; JUPYTER_CONFIG_PATH="$(CURDIR)/student-jupyter" $(JUPYTER_LAB) --IdentityProvider.token=$$token

instructor: $(STAMP)
	@token=$$($(PY) -c 'import secrets; print(secrets.token_hex(24))'); \
	echo; echo "cluster_sim (with nbgrader's tools): http://127.0.0.1:$(LAB_PORT)/lab/tree/$(TOUR)?token=$$token"; echo; \
	$(JUPYTER_LAB) --IdentityProvider.token=$$token

# `make exercise LAB=04`: the lab's exercise copied into workspace/ (git-ignored; only if it is not there yet, so
# your answers are never overwritten); prints its path and starts nothing
exercise:
	@src=$$(ls exercises/$(LAB)_*.ipynb 2>/dev/null | head -1); \
	if [ -z "$$src" ]; then echo "make exercise LAB=NN: there is no exercises/$(LAB)_*.ipynb; the labs are:" \
	  $$(cd exercises && ls *.ipynb | cut -c1-2 | tr '\n' ' '); exit 1; fi; \
	mkdir -p workspace; dst=workspace/$$(basename $$src); \
	if [ -e "$$dst" ]; then echo "$$dst is already there (your work is kept): open it in make lab"; \
	else cp "$$src" "$$dst"; echo "your copy: $$dst (open it in make lab; check an answer by running its check cell)"; fi

# what a graded course hands students: the suite from git without solutions/ (and the tests and CI that read it)
DIST ?= dist
student-release:
	@v=$$(sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml); mkdir -p $(DIST); \
	git archive --format=tar.gz --prefix=cluster_sim-$$v/ -o $(DIST)/cluster_sim-student-$$v.tar.gz HEAD -- . \
	  ':(exclude)solutions' ':(exclude)tests' ':(exclude).ci'; \
	echo "$(DIST)/cluster_sim-student-$$v.tar.gz: the committed suite without solutions/, tests/ and .ci/"

# one lab as a dashboard for a workshop (Voila: prose, panels and figures; code hidden), on 127.0.0.1 by default.
# HOST=0.0.0.0 serves a room: then Voila asks for a token (printed in its URL) that only people you give it to have;
# anyone with the token can run code as you on this machine, so serve a room only on a network you trust.
# Served from the repository's root, so a notebook's link to the references page in docs/ opens it (Voila serves
# files it is allowed to: images, and here the docs' Markdown), not "403: File not allowlisted".
VOILA_FILES := --Voila.root_dir="$(CURDIR)" --VoilaConfiguration.file_allowlist='.*\.(png|jpg|gif|svg)' \
	--VoilaConfiguration.file_allowlist='docs/[^/]*\.md'
LAB ?= 00
DEMO_PORT ?= 8866
HOST ?= 127.0.0.1
demo: $(STAMP)
	@nb=$$(cd notebooks && ls $(LAB)_*.ipynb 2>/dev/null | head -1); \
	if [ -z "$$nb" ]; then echo "make demo LAB=NN: there is no notebooks/$(LAB)_*.ipynb; the labs are:" \
	  $$(cd notebooks && ls *.ipynb | cut -c1-2 | tr '\n' ' '); exit 1; fi; \
	if [ "$(HOST)" = 127.0.0.1 ] || [ "$(HOST)" = localhost ]; then token=""; \
	  echo "serving notebooks/$$nb as a dashboard at http://127.0.0.1:$(DEMO_PORT)/ (Ctrl-C stops it)"; \
	else token=$$($(PY) -c 'import secrets; print(secrets.token_urlsafe(16))'); \
	  echo "serving notebooks/$$nb to the room at http://$(HOST):$(DEMO_PORT)/?token=$$token (Ctrl-C stops it)"; fi; \
	$(VENV)/bin/voila "notebooks/$$nb" $(VOILA_FILES) --no-browser --Voila.ip=$(HOST) --port=$(DEMO_PORT) \
	  $$( [ -n "$$token" ] && echo "--token=$$token" )

# HYPOTHESIS_PROFILE=ci: the property tests' examples are the same on every run (tests/conftest.py)
test: $(STAMP)
	HYPOTHESIS_PROFILE=ci $(PY) -m pytest -n 2 --dist loadgroup -q

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
