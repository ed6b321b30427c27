"""The dashboard's HTTP server: the page and its scripts from the package (no CDN, works offline) and
the data API under /api/. Static files are served from a fixed list made at start-up, so no request
path ever reaches the file system; anything else is a 404. Listening on the loopback address, it
answers only requests addressed to a loopback name, so another site cannot read it by DNS rebinding."""

import gzip
import json
import logging
import mimetypes
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources

from tensorweave_board.server.api import Api, BadRequest, NotFound

_log = logging.getLogger("tensorweave_board")
_LOOPBACK_NAMES = {"127.0.0.1", "localhost", "[::1]"}


def _static_files():
    """{url path: (bytes, content type)} for everything in the package's static folder."""
    files = {}
    root = resources.files("tensorweave_board.server") / "static"

    def walk(folder, prefix):
        for entry in folder.iterdir():
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif not entry.name.startswith("."):
                kind = mimetypes.guess_type(entry.name)[0] or "application/octet-stream"
                if kind in ("text/javascript", "application/javascript"):
                    kind = "text/javascript"
                files[f"/static/{prefix}{entry.name}"] = (entry.read_bytes(), kind + "; charset=utf-8"
                                                          if kind.startswith("text/") else kind)

    walk(root, "")
    files["/"] = files["/static/index.html"]
    return files


class _Handler(BaseHTTPRequestHandler):
    server_version = "tensorweave-board"
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        _log.debug("%s - %s", self.address_string(), fmt % args)

    def _send(self, status, kind, body, cache=False):
        if len(body) > 1024 and "gzip" in self.headers.get("Accept-Encoding", "") and not kind.startswith("image/"):
            body = gzip.compress(body, 5)
            encoded = True
        else:
            encoded = False
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=3600" if cache else "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        if encoded:
            self.send_header("Content-Encoding", "gzip")
        self.end_headers()
        if self.command != "HEAD":
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the page went away (e.g. during a long poll)
                self.close_connection = True

    def _error(self, status, message):
        self._send(status, "application/json", json.dumps({"error": message}).encode())

    def do_HEAD(self):  # noqa: N802 - http.server's name
        self.do_GET()

    def do_GET(self):  # noqa: N802
        if self.server.loopback:
            host = self.headers.get("Host", "").rsplit(":", 1)[0].lower()
            if host not in _LOOPBACK_NAMES:
                # A page from elsewhere whose name was re-pointed at 127.0.0.1 (DNS rebinding) gets nothing.
                self._error(403, f"Host {host!r} refused: open the dashboard as {self.server.url}")
                return
        url = urllib.parse.urlsplit(self.path)
        path = url.path
        static = self.server.static.get(path)
        if static is not None:
            self._send(200, static[1], static[0])
            return
        if not path.startswith("/api/"):
            self._error(404, "not found")
            return
        params = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
        try:
            status, kind, body = self.server.api.handle(path[len("/api/"):], params)
        except NotFound as e:
            self._error(404, str(e))
            return
        except BadRequest as e:
            self._error(400, str(e))
            return
        except Exception as e:  # noqa: BLE001 - a bad file or request must not take the server down
            _log.exception("error serving %s", self.path)
            self._error(500, f"{type(e).__name__}: {e}")
            return
        self._send(status, kind, body)


class BoardServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, logdir, host="127.0.0.1", port=6006):
        super().__init__((host, port), _Handler)
        self.logdir = logdir
        self.api = Api(logdir)
        self.static = _static_files()
        self.loopback = host in ("127.0.0.1", "localhost", "::1")

    @property
    def url(self):
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"

    def start(self):
        """Serves on a background thread (for tests and notebooks); ``shutdown()`` stops it."""
        thread = threading.Thread(target=self.serve_forever, name="tensorweave-board-http", daemon=True)
        thread.start()
        return thread
