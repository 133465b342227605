"""Detach the Fast DDS participant's listener with a bounded wait, before the last node is destroyed.

Why: rmw_fastrtps destroys the process's DomainParticipant when its last node is destroyed, and first
calls ``DomainParticipant::set_listener(nullptr)`` with Fast DDS's default, infinite timeout. If a
discovery callback is running at that moment (another process's entities come or go: a whole stack
stopping at once), Fast DDS 3.2.2 waits for it with a deadline that overflows: the wait never sleeps,
the destroying thread takes the participant's listener mutex again and again, and the discovery thread,
which needs that mutex to end its callback, starves. `destroy_node` then never returns
(eProsima/Fast-DDS#6513; the stacks: docs/design/respawn_and_stop.md, "The stop hang in destroy_node").

`detach_participant_listener` makes the same call first with a finite timeout, whose deadline does not
overflow: the wait sleeps on the condition variable, the callback ends, and the listener is detached.
The middleware's own call later finds no listener and returns at once. Invariant: only called when the
process is about to destroy its nodes (the middleware's graph stops following discovery from then on).
Any other RMW, or a library without these symbols, is left alone.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import rclpy
from rclpy.node import Node

FASTRTPS = "rmw_fastrtps_cpp"
_GET_PARTICIPANT = "_ZN16rmw_fastrtps_cpp22get_domain_participantEP10rmw_node_s"
# DomainParticipant::set_listener(DomainParticipantListener*, std::chrono::seconds)
_SET_LISTENER_WITH_TIMEOUT = (
    "_ZN8eprosima7fastdds3dds17DomainParticipant12set_listenerEPNS1_25DomainParticipantListener"
    "ENSt6chrono8durationIlSt5ratioILl1ELl1EEEE"
)


def detach_participant_listener(node: Node, timeout_s: int = 3) -> str:
    """Detach the listener of `node`'s DomainParticipant, waiting at most `timeout_s` for a callback.

    Returns a short outcome: ``"detached"``, ``"busy"`` (a callback still ran after `timeout_s`: the
    middleware's teardown may then hang as before), or why nothing was done (another RMW, a library
    without the symbols). Never raises.
    """
    try:
        if rclpy.get_rmw_implementation_identifier() != FASTRTPS:
            return f"not {FASTRTPS}"
        rcl, rmw, fastdds = (_loaded(s) for s in ("librcl.so", "librmw_fastrtps_cpp.so", "libfastdds.so"))
        if rcl is None or rmw is None or fastdds is None:
            return "libraries not found"
        rcl.rcl_node_get_rmw_handle.restype = ctypes.c_void_p
        rcl.rcl_node_get_rmw_handle.argtypes = [ctypes.c_void_p]
        get_participant = getattr(rmw, _GET_PARTICIPANT)
        get_participant.restype = ctypes.c_void_p
        get_participant.argtypes = [ctypes.c_void_p]
        set_listener = getattr(fastdds, _SET_LISTENER_WITH_TIMEOUT)
        set_listener.restype = ctypes.c_int32
        set_listener.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        with node.handle:
            rmw_node = rcl.rcl_node_get_rmw_handle(node.handle.pointer)
            participant = get_participant(rmw_node) if rmw_node else None
            if not participant:
                return "no participant"
            code = set_listener(participant, None, timeout_s)  # ctypes lets go of the GIL while it waits
    except (AttributeError, OSError, RuntimeError) as exc:
        return f"not done: {exc}"
    return "detached" if code == 0 else "busy"


def _loaded(stem: str) -> ctypes.CDLL | None:
    """The already loaded shared library whose file name starts with `stem` (from /proc/self/maps)."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and Path(fields[5]).name.startswith(stem):
            return ctypes.CDLL(fields[5])
    return None
