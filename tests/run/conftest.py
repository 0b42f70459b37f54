"""Fixtures for the runner tests: a fixed fake machine and a fast output folder."""

from __future__ import annotations

import pytest
import torch

from collector.run.plan import Machine


@pytest.fixture(autouse=True)
def _threads():
    torch.set_num_threads(2)
    yield


@pytest.fixture
def cpu_machine() -> Machine:
    """A CPU-only machine description, independent of the host running the tests."""
    return Machine(host="testhost", cpu="Test CPU", cores=2)
