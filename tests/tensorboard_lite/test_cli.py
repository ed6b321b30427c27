"""``tensorweave-board``'s command line: --port, --host and --reload-interval are checked with messages that
say what to give instead; IPv6 addresses are listened on as IPv6 and shown in brackets; a failure to
listen says why (port in use, no such address, unknown name) and never ends in a traceback."""

import json
import socket
import urllib.request

import pytest

from tensorweave_board.server import cli
from tensorweave_board.server.logdir import Logdir
from tensorweave_board.server.web import BoardServer


def _refused(capsys, *argv):
    with pytest.raises(SystemExit) as exit_:
        cli.parse_args(["--logdir", "runs", *argv])
    assert exit_.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("port", ["99999", "65536", "-1", "abc", "80.5", ""])
def test_a_port_out_of_range_is_refused_with_the_range(capsys, port):
    assert f"argument --port: {port!r} is not a port: give a whole number from 0 to 65535" in _refused(
        capsys, "--port", port)


@pytest.mark.parametrize("host", ["1.2.3.4.5", "256.0.0.1", "::1::", "[::1", "fe80::zz"])
def test_a_malformed_address_is_refused(capsys, host):
    assert f"argument --host: {host!r} is not an IPv4 or IPv6 address; use 127.0.0.1 or ::1" in _refused(
        capsys, "--host", host)


@pytest.mark.parametrize("host", ["my host", "bad_-", "-lead.example", "a..b", "x" * 64, ""])
def test_a_malformed_name_is_refused(capsys, host):
    assert f"argument --host: {host!r} is neither an address nor a host name" in _refused(capsys, f"--host={host}")


@pytest.mark.parametrize("seconds", ["nan", "0", "-1", "inf", "0.01", "x"])
def test_a_reload_interval_that_would_spin_or_never_reload_is_refused(capsys, seconds):
    assert f"{seconds!r} is not a number of seconds from 0.1 to 86400" in _refused(
        capsys, "--reload-interval", seconds)


@pytest.mark.parametrize("host,expected", [("::1", "::1"), ("[::1]", "::1"), ("127.0.0.1", "127.0.0.1"),
                                           ("localhost", "localhost"), ("0.0.0.0", "0.0.0.0"), ("::", "::"),
                                           ("my-host.example.org.", "my-host.example.org."),
                                           ("0:0:0:0:0:0:0:1", "::1")])
def test_addresses_and_names_are_taken(host, expected):
    args = cli.parse_args(["--logdir", "runs", "--host", host, "--port", "0"])
    assert (args.host, args.port) == (expected, 0)


def _ipv6():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6(), reason="this machine has no IPv6 loopback")
@pytest.mark.parametrize("host", ["::1", "::"])
def test_an_ipv6_server_listens_on_ipv6_and_shows_its_address_in_brackets(tmp_path, host):
    server = BoardServer(Logdir(str(tmp_path)), host, 0)
    server.start()
    try:
        port = server.server_address[1]
        assert server.socket.family == socket.AF_INET6 and server.url == f"http://[{host}]:{port}/"
        with urllib.request.urlopen(f"http://[::1]:{port}/api/runs", timeout=10) as reply:
            assert json.loads(reply.read())["runs"] == []
        if host == "::":  # every interface, IPv4 ones too
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs", timeout=10) as reply:
                assert reply.status == 200
    finally:
        server.shutdown()
        server.server_close()


def test_a_port_in_use_says_so(tmp_path, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert cli.main(["--logdir", str(tmp_path), "--port", str(port)]) == 1
    assert f"cannot listen on 127.0.0.1:{port}: port {port} is in use" in capsys.readouterr().err


def test_an_address_this_machine_lacks_says_so(tmp_path, capsys):
    assert cli.main(["--logdir", str(tmp_path), "--host", "192.0.2.1", "--port", "0"]) == 1  # (TEST-NET-1)
    assert "cannot listen on 192.0.2.1:0: this machine has no address 192.0.2.1: use 127.0.0.1" in \
        capsys.readouterr().err


def test_a_name_that_does_not_resolve_says_so(tmp_path, capsys):
    assert cli.main(["--logdir", str(tmp_path), "--host", "no-such-host.invalid", "--port", "0"]) == 2
    assert "cannot find the address of --host 'no-such-host.invalid'" in capsys.readouterr().err


@pytest.mark.parametrize("port", [65536, -1, 99999])
def test_the_server_itself_refuses_a_port_out_of_range(tmp_path, port):
    with pytest.raises(ValueError, match=f"port {port} is out of range: a port is a whole number from 0 to 65535"):
        BoardServer(Logdir(str(tmp_path)), "127.0.0.1", port)
