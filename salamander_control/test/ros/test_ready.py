"""Both ends of the readiness protocol (`ros.ready`): a node's READY=1 reaches the supervisor's socket."""

from salamander_control.ros.ready import ReadyListener, notify_ready


def test_ready_sent_on_the_socket_named_by_notify_socket_is_drained_once(monkeypatch):
    listener = ReadyListener("test")
    try:
        assert listener.env["NOTIFY_SOCKET"].startswith("@salamander_test_")
        assert not listener.drain()  # nothing came yet
        monkeypatch.setenv("NOTIFY_SOCKET", listener.env["NOTIFY_SOCKET"])
        notify_ready()
        assert listener.drain()
        assert not listener.drain()  # taken: the next process starts with nothing
    finally:
        listener.close()
    first, second = ReadyListener("test"), ReadyListener("test")
    assert first.name != second.name  # one socket each
    first.close()
    second.close()


def test_without_a_supervisor_notify_ready_does_nothing_and_a_dead_socket_is_no_error(monkeypatch, capfd):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    notify_ready()
    assert capfd.readouterr().err == ""
    monkeypatch.setenv("NOTIFY_SOCKET", "@salamander_test_nobody_listens")
    notify_ready()  # one warning on stderr, no exception
    assert "could not tell NOTIFY_SOCKET=@salamander_test_nobody_listens it is up" in capfd.readouterr().err
