"""A virtual environment holding only cppdb's *base* dependencies, built offline from the test
environment (which has every extra installed).

`pip install -e .` on a fresh machine installs the base dependency list of pyproject.toml and
what those packages require, nothing else. This module reproduces that environment without a
network: it walks the requirement graph of the base list through the installed packages'
metadata (extras and non-matching markers left out) and links exactly those distributions'
files into a new venv. A module that a default code path imports from an extra-only package
(pyarrow, when it was only in ``[spark]``; torch; pyspark ...) is then missing there, exactly as
on a user's fresh machine.
"""
from __future__ import annotations

import importlib.metadata as metadata
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
#: present in every venv `python -m venv` makes on the supported Pythons
VENV_OWN = {"pip", "setuptools"}


def base_requirements(pyproject: Path = REPO / "pyproject.toml") -> list[str]:
    """The ``[project] dependencies`` list: what `pip install -e .` installs (no extras)."""
    return list(tomllib.loads(pyproject.read_text("utf-8"))["project"]["dependencies"])


def _applies(requirement: Requirement) -> bool:
    return requirement.marker is None or requirement.marker.evaluate({"extra": ""})


def closure(requirements: list[str]) -> set[str]:
    """Canonical names of the distributions these requirements install, transitively.

    Raises ``LookupError`` for a required distribution that the test environment lacks (the
    base install would then be incomplete here too)."""
    seen: set[str] = set()
    todo = [Requirement(text) for text in requirements]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        if name in seen or not _applies(requirement):
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise LookupError(f"{name} (required by the base install) is not installed") from None
        seen.add(name)
        todo.extend(Requirement(text) for text in dist.requires or [])
    return seen


def _site_packages(venv: Path) -> Path:
    return venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def build(venv: Path, requirements: list[str] | None = None) -> Path:
    """A venv at ``venv`` with cppdb (from this checkout) and only the distributions that
    ``requirements`` (default: the base list) install; returns its python executable."""
    wanted = closure(base_requirements() if requirements is None else requirements)
    wanted -= VENV_OWN
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = _site_packages(venv)
    for name in sorted(wanted):
        dist = metadata.distribution(name)
        for file in dist.files or []:
            source = Path(dist.locate_file(file)).resolve()
            target = site / file
            if not source.is_file() or ".." in file.parts or target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(source, target)
    # cppdb itself from this checkout, as an editable install would
    (site / "cppdb-checkout.pth").write_text(f"{REPO}\n", "utf-8")
    own = metadata.distribution("cppdb")
    info = site / f"cppdb-{own.version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: cppdb\nVersion: {own.version}\n",
                                   "utf-8")
    return venv / "bin" / "python"


def installed_names(python: Path) -> set[str]:
    """Canonical names of the distributions the venv of ``python`` sees."""
    out = subprocess.run([str(python), "-c", "import importlib.metadata as m; "
                          "print('\\n'.join(d.metadata['Name'] for d in m.distributions()))"],
                         check=True, capture_output=True, text=True).stdout
    return {canonicalize_name(line) for line in out.split()}
