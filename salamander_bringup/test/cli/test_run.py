"""`salamanderctl run start`'s decisions without ROS: when the action server counts as gone (cli/run.py)."""

from salamander_bringup.cli import run as run_cli


class FakeServer:
    ready = True

    def server_is_ready(self) -> bool:
        return self.ready


def test_the_action_server_counts_as_lost_only_after_the_timeout_without_it(monkeypatch):
    # Before, a run whose server died waited for its result for ever, without a word.
    clock = [100.0]
    monkeypatch.setattr(run_cli.time, "monotonic", lambda: clock[0])
    server = FakeServer()
    lost = run_cli._ServerWatch(server, 2.0)  # type: ignore[arg-type]
    clock[0] += 5.0
    assert not lost()  # there all along
    server.ready = False
    clock[0] += 1.9
    assert not lost()
    server.ready = True  # back within the timeout (a moment of graph churn): the wait goes on
    clock[0] += 0.5
    assert not lost()
    server.ready = False
    clock[0] += 2.1
    assert lost()
