"""The dashboard's HTTP server: the page and its scripts from the package (no CDN, works offline) and
the data API under /api/. Static files are served from a fixed list made at start-up, so no request
path ever reaches the file system; anything else is a 404. Listening on a loopback address, it
answers only requests addressed to a loopback name, so another site cannot read it by DNS rebinding.
It listens on IPv4 or IPv6, whichever the host given is."""

import gzip
import ipaddress
import json
import logging
import mimetypes
import socket
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources

from tensorweave_board.server.api import Api, BadRequest, NotFound

_log = logging.getLogger("tensorweave_board")


def host_of(header):
    """The host named by a Host header, without its port or IPv6 brackets, lower case: '[::1]:6006' -> '::1'."""
    header = header.strip().lower()
    if header.startswith("["):
        end = header.find("]")
        return header[1:end] if end > 0 and header[end + 1:end + 2] in ("", ":") else header
    return header.rpartition(":")[0] if ":" in header else header


def is_loopback(host):
    """Whether ``host`` (a name or an address, no brackets) names this machine's loopback interface."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve(host, port):
    """(address family, socket address) to listen on at ``host`` (an IPv4 or IPv6 address or a name) and
    ``port``; raises ValueError for a port out of range, socket.gaierror for a name that does not resolve."""
    if not (isinstance(port, int) and 0 <= port <= 65535):
        raise ValueError(f"port {port!r} is out of range: a port is a whole number from 0 to 65535 (0: any free one)")
    family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    return family, address


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
    timeout = 60  # seconds a connection may stay idle (a long poll answers within 25 s), so each thread ends

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
            host = host_of(self.headers.get("Host", ""))
            if not is_loopback(host):
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
        """Listens on ``host`` (IPv4 or IPv6 address, or a name) at ``port`` (0: any free one). Raises
        ValueError for a port out of range, socket.gaierror for an unknown name, OSError if it cannot bind."""
        self.address_family, address = resolve(host, port)
        super().__init__(address, _Handler)
        self.logdir = logdir
        self.api = Api(logdir)
        self.static = _static_files()
        self.loopback = is_loopback(self.server_address[0].partition("%")[0])

    def server_bind(self):
        if self.address_family == socket.AF_INET6 and ipaddress.ip_address(self.server_address[0]).is_unspecified:
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)  # '::' takes IPv4 too
        super().server_bind()

    @property
    def url(self):
        host, port = self.server_address[:2]
        if ":" in host:
            host = "[" + host.replace("%", "%25") + "]"
        return f"http://{host}:{port}/"

    def start(self):
        """Serves on a background thread (for tests and notebooks); ``shutdown()`` stops it."""
        thread = threading.Thread(target=self.serve_forever, name="tensorweave-board-http", daemon=True)
        thread.start()
        return thread
