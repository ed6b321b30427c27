"""``tensorweave-board --logdir runs/ [--host 127.0.0.1] [--port 6006]``: serves the dashboard."""

import argparse
import errno
import ipaddress
import logging
import math
import os
import re
import socket
import sys

from tensorweave_board.server.logdir import Logdir
from tensorweave_board.server.web import BoardServer

_LABEL = r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?"
_HOST_NAME = re.compile(rf"{_LABEL}(\.{_LABEL})*\.?", re.IGNORECASE)
_ADDRESSES = "127.0.0.1 or ::1 (this machine only), 0.0.0.0 (every IPv4 interface) or :: (every interface)"


def _port(text):
    try:
        port = int(text)
    except ValueError:
        port = None
    if port is None or not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port: give a whole number from 0 to 65535 "
                                         f"(0 picks a free one)")
    return port


def _host(text):
    """An IPv4 or IPv6 address (brackets allowed: [::1]) or a host name, checked for form only."""
    host = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    if ":" in host or re.fullmatch(r"[0-9.]+", host):
        try:
            return str(ipaddress.ip_address(host))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an IPv4 or IPv6 address; use {_ADDRESSES}") from None
    if len(host) > 253 or not _HOST_NAME.fullmatch(host):
        raise argparse.ArgumentTypeError(f"{text!r} is neither an address nor a host name; use {_ADDRESSES}")
    return host


def _seconds(text):
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0.1 <= seconds <= 86400:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from 0.1 to 86400")
    return seconds


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="tensorweave-board", description=(
        "Serve the Tensorweave dashboard (scalars, histograms, images, text, graph, step timeline) for the "
        "event files under a log directory. Each folder holding event files is a run."))
    parser.add_argument("--logdir", required=True, help="the directory whose runs to show (searched recursively)")
    parser.add_argument("--host", type=_host, default="127.0.0.1",
                        help="address or name to listen on (default 127.0.0.1: this machine only; ::1 for IPv6; "
                             "0.0.0.0 or :: for every network interface)")
    parser.add_argument("--port", type=_port, default=6006, help="port, 0 to 65535 (default 6006; 0 picks a free one)")
    parser.add_argument("--reload-interval", type=_seconds, default=1.0,
                        help="seconds between looks for new event files and new data in them (0.1 to 86400; "
                             "default 1)")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    return parser.parse_args(argv)


def _where(host, port):
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _why_not(error, host, port):
    """What to do when listening on ``host``:``port`` failed with ``error``."""
    if error.errno == errno.EADDRINUSE:
        return f"port {port} is in use (another dashboard?): pick another --port, or --port 0 for a free one"
    if error.errno == errno.EACCES:
        return f"port {port} needs administrator rights: pick a --port from 1024 up (or --port 0 for a free one)"
    if error.errno == errno.EADDRNOTAVAIL:
        return f"this machine has no address {host}: use {_ADDRESSES}"
    if error.errno == errno.EAFNOSUPPORT:
        return f"this machine does not support the address family of {host}: use 127.0.0.1 or 0.0.0.0"
    return error.strerror or str(error)


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format="%(message)s")
    if not os.path.isdir(args.logdir):
        print(f"tensorweave-board: --logdir {args.logdir!r} is not a directory; point it at the folder your "
              f"FileWriter writes to (e.g. runs/)", file=sys.stderr)
        return 2
    logdir = Logdir(args.logdir, reload_interval=args.reload_interval)
    try:
        server = BoardServer(logdir, args.host, args.port)
    except socket.gaierror as e:
        print(f"tensorweave-board: cannot find the address of --host {args.host!r} ({e.strerror}); use a name "
              f"this machine resolves, or {_ADDRESSES}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"tensorweave-board: cannot listen on {_where(args.host, args.port)}: "
              f"{_why_not(e, args.host, args.port)}", file=sys.stderr)
        return 1
    print(f"tensorweave-board serving {logdir.root} at {server.url} (Ctrl-C to stop)", flush=True)
    logdir.start()  # after the message: reading a big log directory at once would hold it up
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        logdir.stop()  # (which also answers waiting long polls)
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
