# SPDX-License-Identifier: BSD-2-Clause
"""Shared fixtures: a running digital twin for tests that drive it over its real transport (TCP + UARTBone)."""

import pytest

from boards import twin


@pytest.fixture(scope="session")
def twin_link(tmp_path_factory):
    log = open(tmp_path_factory.mktemp("twin") / "twin.log", "w")
    with twin.running(log=log) as (url, csr):
        yield url, csr
    log.close()
