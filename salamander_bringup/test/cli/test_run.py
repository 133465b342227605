"""`salamanderctl run start` waiting for the result, without ROS: a server that dies or comes back."""

from salamander_bringup.cli import run as run_cli


class FakeFuture:
    def __init__(self) -> None:
        self.answered = False

    def done(self) -> bool:
        return self.answered


class FakeServer:
    """The action client's view of the server, and the goal handle's result requests."""

    def __init__(self) -> None:
        self.ready = True
        self.requests: list[FakeFuture] = []

    def server_is_ready(self) -> bool:
        return self.ready

    def get_result_async(self) -> FakeFuture:
        self.requests.append(FakeFuture())
        return self.requests[-1]


def test_a_server_gone_for_the_timeout_ends_the_wait(monkeypatch):
    # Before, a run whose server died waited for its result for ever, without a word.
    clock = [100.0]
    monkeypatch.setattr(run_cli.time, "monotonic", lambda: clock[0])
    server = FakeServer()
    wait = run_cli._ResultWait(server, server, 2.0)  # type: ignore[arg-type]
    clock[0] += 5.0
    assert not wait.settled()  # there all along: the run goes on
    server.ready = False
    clock[0] += 1.9
    assert not wait.settled()
    clock[0] += 0.2
    assert wait.settled() and not wait.future.done()  # gone for 2.1 s: the outcome is unknown


def test_a_server_that_comes_back_is_asked_again_until_it_answers(monkeypatch):
    # A respawned server (the runner's, within 2 s) does not know the goal: the dead one's request is
    # never answered, so the result is asked again, and again while discovery may lose the request.
    clock = [100.0]
    monkeypatch.setattr(run_cli.time, "monotonic", lambda: clock[0])
    server = FakeServer()
    wait = run_cli._ResultWait(server, server, 2.0)  # type: ignore[arg-type]
    server.ready = False
    clock[0] += 1.0
    assert not wait.settled()
    server.ready = True  # back within the timeout
    clock[0] += 1.0
    assert not wait.settled() and len(server.requests) == 2  # asked again at once
    clock[0] += 1.0
    assert not wait.settled() and len(server.requests) == 2
    clock[0] += 1.5  # no answer for more than the timeout: that request may have been lost
    assert not wait.settled() and len(server.requests) == 3
    server.requests[-1].answered = True  # STATUS_UNKNOWN from the new server, say
    assert wait.settled() and wait.future is server.requests[-1]


def test_a_healthy_server_is_asked_once():
    server = FakeServer()
    wait = run_cli._ResultWait(server, server, 2.0)  # type: ignore[arg-type]
    for _ in range(100):
        assert not wait.settled()
    assert len(server.requests) == 1  # a run of minutes is one request, answered at its end
