"""A node's readiness, both sides: systemd's sd_notify protocol, ``READY=1`` on ``NOTIFY_SOCKET``.

`notify_ready` is the node's side (`ros.run.run_node` calls it once the node is built and on its
executor, before any callback; a robot's systemd unit can be ``Type=notify`` on it). `ReadyListener` is
the supervisor's side, one per node process: the launch runner (`salamander_bringup.runner`, no rclpy)
and the test kit (`salamander_testing.process`) give each node one and, when the process has exited,
`drain` says whether it had said it was up (`salamander_bringup.respawn.startup_crash`). A name starting
with "@" is a Linux abstract socket (sd_notify(3)): no file to clean up. No rclpy here.
"""

from __future__ import annotations

import itertools
import os
import socket

_LISTENERS = itertools.count()
"""Numbers the listeners of one process (their socket names are unique by pid and number)."""


def _address(name: str) -> str:
    """The socket address of a ``NOTIFY_SOCKET`` value ("@name": abstract)."""
    return "\0" + name[1:] if name.startswith("@") else name


def notify_ready() -> None:
    """Send "READY=1" to the socket named by ``NOTIFY_SOCKET``, if there is one.

    No socket set: nothing to do. A failure to send is one line on stderr, never an exception: readiness
    is advice to the supervisor, not part of the node.
    """
    name = os.environ.get("NOTIFY_SOCKET", "")
    if not name:
        return
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.sendto(b"READY=1", _address(name))
    except OSError as exc:
        os.write(2, f"[WARN] [run_node]: could not tell NOTIFY_SOCKET={name} it is up: {exc}\n".encode())


class ReadyListener:
    """A supervisor's socket for one node process's ``READY=1``: put `env` into the process's environment.

    Args:
        role: part of the socket's name (who listens: "runner", "test").
    """

    def __init__(self, role: str) -> None:
        self.name = f"@salamander_{role}_{os.getpid()}_{next(_LISTENERS)}"
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.bind(_address(self.name))
        self._sock.setblocking(False)

    @property
    def env(self) -> dict[str, str]:
        """The environment entry that names this socket to the node."""
        return {"NOTIFY_SOCKET": self.name}

    def drain(self) -> bool:
        """Take everything that came; whether a ``READY=1`` was among it.

        Call it once the process exited: each process says it once, so what came is the ended process's.
        """
        ready = False
        while True:
            try:
                data = self._sock.recv(4096)
            except OSError:  # nothing left (BlockingIOError), or closed
                return ready
            ready = ready or b"READY=1" in data.split(b"\n")

    def close(self) -> None:
        """Close the socket (the supervisor is done with the node)."""
        self._sock.close()
