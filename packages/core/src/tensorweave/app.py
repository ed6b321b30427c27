"""``tf.app``: ``run(main=None, argv=None)`` parses the flags and calls ``main(argv)``, as TF 1.x did.

TF 1.x ran absl's ``app.run`` with one change: flags it does not know are left in the ``argv`` that ``main``
receives rather than refused, so a script may read extra arguments itself. absl handles the rest:
``--help``/``--helpshort``/``--helpfull``, ``--flagfile``, a missing required flag (usage and exit 1), and
``sys.exit(main(argv))``.
"""

import sys as _sys

from absl import app as _absl_app

from tensorweave import flags

__all__ = ["flags", "run"]


def _parse_known_flags(argv):
    """The flags parser ``run`` gives absl: known flags parsed, the rest of ``argv`` returned for main."""
    return flags.FLAGS(_sys.argv if argv is None else argv, known_only=True)


def run(main=None, argv=None):
    """Parses ``argv`` (default ``sys.argv``) and exits with ``main(remaining argv)``; ``main`` defaults to
    ``__main__.main``."""
    main = main or _sys.modules["__main__"].main
    _absl_app.run(main=main, argv=argv, flags_parser=_parse_known_flags)
