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
    clock[0] += 1.0
    assert not wait.settled()  # there: the run goes on
    server.ready = False
    clock[0] += 1.9
    assert not wait.settled()
    clock[0] += 0.2
    assert wait.settled() and not wait.future.done()  # gone for 2.1 s: the outcome is unknown


def test_the_result_is_asked_again_every_timeout_so_a_restarted_server_answers(monkeypatch):
    # A respawned server (the runner's, within 2 s, the graph still listing the dead one) does not know
    # the goal, and the dead one never answers: a request every timeout gets the new one's UNKNOWN.
    clock = [100.0]
    monkeypatch.setattr(run_cli.time, "monotonic", lambda: clock[0])
    server = FakeServer()
    wait = run_cli._ResultWait(server, server, 2.0)  # type: ignore[arg-type]
    for _ in range(10):
        clock[0] += 0.5
        assert not wait.settled()
    assert len(server.requests) == 3  # at 0, 2.5 and 5 s
    server.requests[-1].answered = True  # STATUS_UNKNOWN from the new server, say
    assert wait.settled() and wait.future is server.requests[-1]
