"""The ``tensorweave`` command: ``tensorweave plugins [--verbose]`` lists what is loaded and from where."""

import argparse
import sys

from tensorweave.plugins import format_listing, list_plugins
from tensorweave.runtime.device_mgr import DeviceMgr


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tensorweave", description="Tensorweave tools")
    sub = parser.add_subparsers(dest="command", required=True)
    plugins = sub.add_parser("plugins", help="list plugins: distribution, version, ops, kernels, devices")
    plugins.add_argument("--verbose", "-v", action="store_true", help="list every op and kernel")
    sub.add_parser("devices", help="list the devices this process would create")
    args = parser.parse_args(argv)
    if args.command == "plugins":
        print(format_listing(verbose=args.verbose))
        return 0 if all(p.ok for p in list_plugins()) else 1
    for d in DeviceMgr().devices:
        print(f"{d.name}  {d.description}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
