"""``tensorweave-board --logdir runs/ [--host 127.0.0.1] [--port 6006]``: serves the dashboard."""

import argparse
import logging
import os
import sys

from tensorweave_board.server.logdir import Logdir
from tensorweave_board.server.web import BoardServer


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="tensorweave-board", description=(
        "Serve the Tensorweave dashboard (scalars, histograms, images, text, graph, step timeline) for the "
        "event files under a log directory. Each folder holding event files is a run."))
    parser.add_argument("--logdir", required=True, help="the directory whose runs to show (searched recursively)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 for every "
                             "network interface)")
    parser.add_argument("--port", type=int, default=6006, help="port (default 6006; 0 picks a free one)")
    parser.add_argument("--reload-interval", type=float, default=1.0,
                        help="seconds between looks for new event files and new data in them (default 1)")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    return parser.parse_args(argv)


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
    except OSError as e:
        print(f"tensorweave-board: cannot listen on {args.host}:{args.port}: {e.strerror}; pick another --port",
              file=sys.stderr)
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
