"""fio servers for the fleet tests: the real `fio --server` processes of bench/fio_servers.py, and a hostile
server that speaks fio's net protocol to a `fio --client` (SENDFILE, IOLOG)."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from dataclasses import dataclass, field

from bench.fio_servers import START_TIMEOUT_S, FioServer, free_port, start_servers

__all__ = ["START_TIMEOUT_S", "FioServer", "HostileFioServer", "free_port", "start_servers"]

# -- a hostile fio server -------------------------------------------------------------------------------
# fio's net protocol, as fio's server.h and crc/crc16.c define it: every command is a little-endian
# header (version, opcode, flags, tag, pdu_len, then the CRC-16 of those 20 bytes and of the payload)
# and a payload of at most 1024 bytes a fragment. The client obeys SENDFILE (it opens the path the server
# names and sends its bytes back) and IOLOG (it writes "<name>.<host>" with the bytes the server sent).
_HEADER = struct.Struct("<HHIQIHH")
_HEADER_CRC_BYTES = 20
_MAX_FRAGMENT = 1024
CMD_QUIT = 1
CMD_IOLOG = 17
CMD_SENDFILE = 21
_NAME_MAX = 256
_STORE_COMPRESSED = 2  # the client writes the IOLOG payload as it came, byte for byte
# struct cmd_iolog_pdu before its samples: nr_samples, six uint32 fields, name[256]
_IOLOG_PDU = struct.Struct(f"<QIIIIII{_NAME_MAX}s")


def crc16(data: bytes) -> int:
    """fio's CRC-16 (polynomial 0x8005, reflected, initial value 0)."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def net_command(version: int, opcode: int, payload: bytes, tag: int = 0) -> bytes:
    """One fio_net_cmd, cut into fragments the way fio's sender does."""
    out = bytearray()
    chunks = [payload[i : i + _MAX_FRAGMENT] for i in range(0, len(payload), _MAX_FRAGMENT)] or [b""]
    for index, chunk in enumerate(chunks):
        flags = 1 if index < len(chunks) - 1 else 0
        head = _HEADER.pack(version, opcode, flags, tag, len(chunk), 0, 0)[:_HEADER_CRC_BYTES]
        out += head + struct.pack("<HH", crc16(head), crc16(chunk)) + chunk
    return bytes(out)


@dataclass
class HostileFioServer:
    """Answers a `fio --client` with SENDFILE for ``read_path`` and IOLOG writes to each of ``plant``.

    ``received`` is every byte the client sent; ``sendfile_reply`` the (error, data) of its SENDFILE answer.
    """

    read_path: str
    plant: tuple[str, ...]
    planted_bytes: bytes = b"PLANTED-BY-A-HOSTILE-FIO-SERVER\n"
    port: int = 0
    received: bytearray = field(default_factory=bytearray)
    sendfile_reply: tuple[int, bytes] | None = None
    version: int | None = None
    _listener: socket.socket | None = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> HostileFioServer:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(START_TIMEOUT_S * 3)
        self.port = int(self._listener.getsockname()[1])
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        return self

    def _read(self, conn: socket.socket, size: int) -> bytes:
        data = bytearray()
        while len(data) < size:
            chunk = conn.recv(size - len(data))
            if not chunk:
                raise EOFError
            self.received += chunk
            data += chunk
        return bytes(data)

    def _command(self, conn: socket.socket) -> tuple[int, int, bytes]:
        """(version, opcode, payload) of the client's next command, its fragments joined."""
        payload = bytearray()
        while True:
            version, opcode, flags, _tag, length, _c1, _c2 = _HEADER.unpack(self._read(conn, _HEADER.size))
            payload += self._read(conn, length)
            if not flags & 1:
                return version, opcode, bytes(payload)

    def _serve(self) -> None:
        assert self._listener is not None
        with contextlib.suppress(OSError, EOFError), self._listener:
            conn, _ = self._listener.accept()
            with conn:
                conn.settimeout(START_TIMEOUT_S)
                version, _opcode, _payload = self._command(conn)  # the client's probe: speak its version
                self.version = version
                path = self.read_path.encode()[: _NAME_MAX - 1]
                conn.sendall(net_command(version, CMD_SENDFILE, path.ljust(_NAME_MAX, b"\0"), tag=7))
                for name in self.plant:
                    head = _IOLOG_PDU.pack(0, 0, 0, _STORE_COMPRESSED, 0, 0, 0, name.encode()[: _NAME_MAX - 1])
                    conn.sendall(net_command(version, CMD_IOLOG, head + self.planted_bytes))
                while self.sendfile_reply is None:
                    _version, opcode, payload = self._command(conn)
                    if opcode == CMD_SENDFILE and len(payload) >= 8:
                        size, error = struct.unpack_from("<II", payload)
                        self.sendfile_reply = (error, payload[8 : 8 + size])
                conn.sendall(net_command(version, CMD_QUIT, b""))
                with contextlib.suppress(OSError, EOFError):
                    while True:
                        self._command(conn)

    def stop(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.close()
        if self._thread is not None:
            self._thread.join(timeout=START_TIMEOUT_S)
