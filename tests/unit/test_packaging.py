"""pyproject.toml's metadata in the form current build backends accept (issue 25 finding 18):
``project.license`` as a TOML table is deprecated by setuptools (an error for builds after
2027-02-18); the SPDX expression string needs setuptools 77 or later, which the build system
requires."""

from __future__ import annotations

import tomllib

from packaging.licenses import canonicalize_license_expression
from packaging.requirements import Requirement
from support.paths import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def test_the_license_is_an_spdx_expression_string():
    license_ = PYPROJECT["project"]["license"]
    assert isinstance(license_, str), "a table ({text = ...}) is deprecated"
    assert canonicalize_license_expression(license_) == license_ == "MIT"
    classifiers = PYPROJECT["project"].get("classifiers", [])
    assert not [c for c in classifiers if c.startswith("License ::")]  # refused with one


def test_the_build_requires_a_setuptools_that_reads_spdx_license_strings():
    [setuptools] = [
        Requirement(r)
        for r in PYPROJECT["build-system"]["requires"]
        if Requirement(r).name == "setuptools"
    ]
    assert "76.1" not in setuptools.specifier and "77.0.0" in setuptools.specifier
