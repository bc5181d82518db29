"""Start-up cost of the search path: heavy imports and model loading with the cyclic garbage collector paused.

Importing LanceDB builds hundreds of thousands of long-lived objects (mostly pydantic validators of LanceDB's REST
namespace client, ``lance_namespace_urllib3_client``, which local tables never call). While they are created the
cyclic collector runs its full collections again and again over that growing heap, and at interpreter exit its last
collection walks it once more. Measured on 2 cores (load 0.5, ``python -c "import lancedb"``): 1.13 s wall, of
which 0.16 s after the last statement; with the collector paused during the import and the result frozen
(:func:`gc.freeze`, the standard library's documented way to exempt long-lived objects from collection):
0.90 s wall, 0.02 s at exit.

Deferring ``lance_namespace`` itself with :class:`importlib.util.LazyLoader` does not work: ``lancedb.db`` does
``from lance_namespace import LanceNamespace, ...`` and ``lance_namespace`` does
``from lance_namespace_urllib3_client.models import ...`` at import time, and a ``from X import name`` reads an
attribute of the lazy module, which executes it at once (measured: same import time).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Run the block with the cyclic garbage collector disabled, then freeze what survived.

    The objects alive at the end (imported modules, a loaded model) move to the collector's permanent generation:
    later collections, and the one at interpreter exit, no longer walk them. Cyclic garbage made inside the block
    is frozen with them (it is not freed); keep the block to one-time loading.

    Returns:
        A context manager; the collector's previous state (enabled or not) is restored on exit, also on error.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def import_lancedb():
    """``import lancedb`` with the collector paused (:func:`paused_gc`) the first time.

    Returns:
        The ``lancedb`` module.
    """
    import sys

    if "lancedb" not in sys.modules:
        with paused_gc():
            import lancedb  # noqa: F401
    return sys.modules["lancedb"]
