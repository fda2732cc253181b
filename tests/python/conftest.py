"""pytest setup of the Python tests: this folder on sys.path (for the oracles) and the
shared random generator. The NumPy tests need ml_dtypes, the torch tests torch, the GPU
tests torch with CUDA; each module skips visibly when its needs are missing."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture
def rng():
    np = pytest.importorskip("numpy")
    return np.random.default_rng(1234)
