"""``heritage-pipeline serve``: a small HTTP search API on 127.0.0.1 with the index and the embedding model kept warm.

Endpoints (JSON):

- ``POST /search`` ``{"query", "k"?, "mode"?, "lang"?, "fts_lang"?, "filters"?, "explain"?, "expand_tokens"?}`` →
  ``{"hits": [...], "took_ms"}`` (hits as :meth:`heritage_pipeline.index.api.SearchHit.to_dict`); 400 with
  ``{"error"}`` for a bad request.
- ``GET /health`` → ``{"uri", "table", "rows", "pid"}``.

While it runs, ``<output_dir>/serve.json`` names its address, process id and index; ``heritage-pipeline search``
reads it and sends its queries there (``--no-server`` answers in-process). The standard library's
``ThreadingHTTPServer`` is enough for one machine's interactive and batch use; nothing listens beyond loopback.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import time
from pathlib import Path

STATE_FILE = "serve.json"


def state_path(output_dir: Path) -> Path:
    """Where a running server records itself: ``<output_dir>/serve.json``."""
    return Path(output_dir) / STATE_FILE


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return True


def client_for(output_dir: Path, uri: str, table: str, timeout_s: float = 30.0):
    """A function answering search requests through the running server of this index, or None when none runs
    (no state file, a dead process, another index, or no answer to ``/health``).

    Args:
        output_dir: the run's output folder (holds ``serve.json``).
        uri, table: the index the caller wants; a server of another index is not used.
        timeout_s: seconds one search request may take.
    Returns:
        ``request dict -> list of hit dicts`` or None. The function raises ValueError with the server's message
        for a request the server rejects (400).
    """
    import urllib.error
    import urllib.request

    p = state_path(output_dir)
    try:
        st = json.loads(p.read_text())
    except (OSError, ValueError):
        return None
    if not _alive(int(st.get("pid", -1))) or st.get("uri") != str(uri) or st.get("table") != table:
        return None
    base = f"http://{st['host']}:{st['port']}"
    try:
        with urllib.request.urlopen(base + "/health", timeout=1.0) as r:
            json.load(r)
    except (OSError, ValueError):
        return None

    def ask(req: dict) -> list[dict]:
        data = json.dumps(req).encode()
        rq = urllib.request.Request(base + "/search", data=data, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(rq, timeout=timeout_s) as r:
                return json.load(r)["hits"]
        except urllib.error.HTTPError as exc:
            body = json.loads(exc.read() or b"{}")
            raise ValueError(body.get("error", f"server answered {exc.code}")) from None

    ask.base_url = base  # type: ignore[attr-defined]  (search names the server that answered)
    return ask


def make_server(searcher, host: str = "127.0.0.1", port: int = 0):
    """A ``ThreadingHTTPServer`` answering ``/search`` and ``/health`` with ``searcher``
    (:class:`heritage_pipeline.index.api.Searcher`). Port 0 picks a free port (``server.server_address``)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def _send(self, code: int, obj: dict) -> None:
            body = json.dumps(obj, ensure_ascii=False).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):  # no access log on the terminal
            pass

        def do_GET(self):
            if self.path == "/health":
                self._send(200, {"uri": str(searcher.uri), "table": searcher.table_name,
                                 "rows": searcher.table.count_rows(), "pid": os.getpid()})
            else:
                self._send(404, {"error": f"no such endpoint {self.path}; use POST /search or GET /health"})

        def do_POST(self):
            if self.path != "/search":
                self._send(404, {"error": f"no such endpoint {self.path}; use POST /search"})
                return
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if not isinstance(req, dict) or not isinstance(req.get("query"), str) or not req["query"].strip():
                    raise ValueError("the body must be a JSON object with a non-empty string 'query'")
                t0 = time.perf_counter()
                hits = searcher.search(req["query"], k=int(req.get("k", 5)), mode=req.get("mode", "hybrid"),
                                       lang=req.get("lang"), filters=req.get("filters") or None,
                                       fts_lang=req.get("fts_lang"), explain=bool(req.get("explain")),
                                       expand_tokens=int(req.get("expand_tokens") or 0))
                self._send(200, {"hits": [h.to_dict() for h in hits],
                                 "took_ms": round((time.perf_counter() - t0) * 1000, 3)})
            except (ValueError, TypeError) as exc:
                self._send(400, {"error": str(exc)})

    srv = ThreadingHTTPServer((host, port), Handler)
    srv.daemon_threads = True
    return srv


def warm(searcher, modes=("fts", "hybrid")) -> dict[str, float]:
    """Load what queries need (index pages, full-text indexes, the embedding model) with one query per mode.

    Returns:
        Seconds per mode of that first query.
    """
    out = {}
    for m in modes:
        t0 = time.perf_counter()
        searcher.search("museum", mode=m, k=1)
        out[m] = round(time.perf_counter() - t0, 3)
    return out


def cmd_serve(args: argparse.Namespace) -> int:
    from heritage_pipeline.core.config import load_pipeline_config
    from heritage_pipeline.index.api import Searcher

    from .console import console

    t0 = time.perf_counter()
    pcfg = load_pipeline_config(args.pipeline_config)
    if args.out:
        pcfg = pcfg.with_paths(output_dir=args.out)
    searcher = Searcher(pcfg.resolve(pcfg.lancedb.uri), pcfg.lancedb.table, pipeline_config=pcfg)
    warm_s = warm(searcher, ("fts",) if args.fts_only else ("fts", "hybrid"))
    srv = make_server(searcher, "127.0.0.1", args.port)
    host, port = srv.server_address[:2]
    sp = state_path(pcfg.output_path)
    sp.write_text(json.dumps({"host": host, "port": port, "pid": os.getpid(), "uri": str(searcher.uri),
                              "table": searcher.table_name}))

    def stop(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    console.print(f"serving {searcher.uri} ({searcher.table.count_rows()} rows) on http://{host}:{port} "
                  f"(ready in {time.perf_counter() - t0:.2f} s; first queries {warm_s}); Ctrl-C stops")
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()
        try:
            if json.loads(sp.read_text()).get("pid") == os.getpid():
                sp.unlink()
        except (OSError, ValueError):
            pass
    return 0
