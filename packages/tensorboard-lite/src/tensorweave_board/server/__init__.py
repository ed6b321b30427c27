"""The dashboard: a web server over a log directory (``tensorweave-board``)."""
