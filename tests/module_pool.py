"""One open extraction pool per test module, on the module's event loop, as a run has one.

Without it every page a simulated verdict fetched started an interpreter of its own to import trafilatura,
and a pool per test started a zygote (0.8 s of CPU) each. A module imports `pool` (pytest then offers it
as a fixture there) and marks its tests that use it ON_THE_MODULE_LOOP, the loop the pool lives on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from fanout.tools.extract_pool import ExtractionPool

ON_THE_MODULE_LOOP = pytest.mark.asyncio(loop_scope="module")
"""The module's async tests share one event loop, and on it the one extraction pool."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool() -> AsyncIterator[ExtractionPool]:
    async with ExtractionPool() as opened:
        yield opened
