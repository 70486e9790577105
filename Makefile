# Two commands set everything up on a fresh machine:  `make demo`  and  `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: demo test test-fast bench sysdeps sysdeps-test javadeps benchfonts install install-test clean

# System packages: a CJK font (test screenshots are rendered from text at test time).
sysdeps:
	@if ! ls /usr/share/fonts/truetype/wqy/wqy-microhei.ttc >/dev/null 2>&1; then \
	  echo "installing the CJK font fonts-wqy-microhei (Debian package)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq fonts-wqy-microhei >/dev/null; \
	fi

# Tests also need headless Chromium (the HTML report is rendered as a person would see it).
sysdeps-test:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  echo "installing chromium (Debian package) for the report rendering test"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; \
	fi

# More CJK faces for the page-OCR benchmark's screenshots (bench/bench_ocr_pages.py).
benchfonts:
	@if ! ls /usr/share/fonts/truetype/arphic/ukai.ttc >/dev/null 2>&1; then \
	  echo "installing fonts-wqy-zenhei fonts-arphic-uming fonts-arphic-ukai (Debian) for the OCR benchmark"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq fonts-wqy-zenhei fonts-arphic-uming fonts-arphic-ukai >/dev/null; \
	fi

# Java for the Spark engine's tests (the [spark] extra); Debian's headless JRE 17.
javadeps:
	@if ! command -v java >/dev/null 2>&1; then \
	  echo "installing openjdk-17-jre-headless (Debian package) for the Spark engine"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null; \
	fi

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[test,neural,stanza,eflomal,hf,spark]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

demo: sysdeps install
	$(BIN)/python -m cppdb.demo

# The whole suite, with the 15 slowest tests listed (CI runs this).
test: sysdeps sysdeps-test javadeps install-test
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=15 tests

# The fast lane (a few minutes): everything but the tests marked slow (whole pipelines
# killed and resumed, Spark parity, the README on a fresh venv, the demo).
test-fast: sysdeps sysdeps-test install-test
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=15 -m "not slow" tests

# The benchmarks that need no argument, on bundled data (the list: bench/run_all.py; the ones
# that need a corpus: docs/BENCHMARKS.md).  None of them starts Spark, so no Java here.
bench: sysdeps benchfonts install-test
	$(BIN)/python -m bench.run_all

clean:
	rm -rf $(VENV) demo-run build *.egg-info
