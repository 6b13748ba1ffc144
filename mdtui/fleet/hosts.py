"""Hosts of a fleet: `HOST[:PORT]` as the user writes it, a hosts file, and the SSH tunnel to reach one."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

from mdtui.errors import PlanError

FIO_SERVER_PORT = 8765  # fio --server listens here unless told otherwise
HOSTS_FILE_MAX_BYTES = 1 << 20
# RFC 1123 labels (underscores tolerated, as in some internal zones), an optional root dot; matched whole
# with fullmatch, so no trailing newline or option-like leading '-' gets through.
_LABEL = r"(?!-)[A-Za-z0-9_-]{1,63}(?<!-)"
_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*\.?")
_NAME_MAX = 253


@dataclass(frozen=True)
class Host:
    """A host running `fio --server`: its name or address and the port the server listens on."""

    name: str
    port: int = FIO_SERVER_PORT

    @property
    def label(self) -> str:
        """How tables and stored runs name the host: "store1", or "store1:8766" off the default port."""
        shown = f"[{self.name}]" if ":" in self.name else self.name
        return shown if self.port == FIO_SERVER_PORT else f"{shown}:{self.port}"

    @property
    def client_arg(self) -> str:
        """fio's --client value: ip6:ADDR,PORT for an IPv6 address, else NAME,PORT."""
        return f"ip6:{self.name},{self.port}" if ":" in self.name else f"{self.name},{self.port}"

    def tunnel_command(self, local_port: int | None = None) -> str:
        """The SSH command that forwards a local port to a fio server bound to the host's loopback."""
        local = local_port or self.port
        # Without ExitOnForwardFailure, ssh only warns when the local port is taken (another user's
        # listener, say) and stays up, and the fio client would talk to that listener instead.
        return f"ssh -N -o ExitOnForwardFailure=yes -L {local}:127.0.0.1:{FIO_SERVER_PORT} {self.name}"


def _port(text: str, whole: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 0 < int(text) < 65536:
        raise PlanError(f"{whole!r}: the port must be a number from 1 to 65535")
    return int(text)


def _ipv6(text: str, whole: str) -> str:
    try:
        return str(ipaddress.IPv6Address(text))
    except ValueError:
        raise PlanError(f"{whole!r} is not an IPv6 address") from None


def parse_host(text: str) -> Host:
    """`store1`, `store1:8766`, `10.0.0.5:8766`, `[fe80::1]:8766`; one line of a message when it is none."""
    whole = text
    text = text.strip()
    if not text:
        raise PlanError("an empty host name: give HOST or HOST:PORT")
    port = FIO_SERVER_PORT
    if text.startswith("["):
        address, sep, rest = text[1:].partition("]")
        if not sep:
            raise PlanError(f"{whole!r} is not [IPv6]:PORT")
        address = _ipv6(address, whole)
        if rest:
            if not rest.startswith(":"):
                raise PlanError(f"{whole!r} is not [IPv6]:PORT")
            port = _port(rest[1:], whole)
        return Host(address, port)
    if text.count(":") > 1:
        return Host(_ipv6(text, whole), port)
    name, sep, port_text = text.partition(":")
    if sep:
        port = _port(port_text, whole)
    if len(name) > _NAME_MAX or not _NAME.fullmatch(name):
        raise PlanError(f"{whole!r} is not a host name or address (letters, digits, '.', '-', '_')")
    return Host(name, port)


def read_hosts_file(path: str) -> list[Host]:
    """One HOST[:PORT] per line; blank lines and # comments are skipped."""
    file = Path(path).expanduser()
    try:
        if not file.is_file():
            raise PlanError(f"hosts file {path}: not a regular file")
        if file.stat().st_size > HOSTS_FILE_MAX_BYTES:
            raise PlanError(f"hosts file {path}: larger than {HOSTS_FILE_MAX_BYTES} bytes")
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise PlanError(f"hosts file {path}: {exc.strerror or exc}") from None
    hosts = []
    for number, line in enumerate(text.splitlines(), 1):
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        try:
            hosts.append(parse_host(entry))
        except PlanError as exc:
            raise PlanError(f"hosts file {path}, line {number}: {exc}") from None
    if not hosts:
        raise PlanError(f"hosts file {path} names no host")
    return hosts


def unique_hosts(hosts: list[Host]) -> tuple[Host, ...]:
    """The hosts in order; the same host and port twice is a mistake, not two servers."""
    seen: set[tuple[str, int]] = set()
    for host in hosts:
        key = (host.name.lower(), host.port)
        if key in seen:
            raise PlanError(f"host {host.label} is listed twice")
        seen.add(key)
    return tuple(hosts)
