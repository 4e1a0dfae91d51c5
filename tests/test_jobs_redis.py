"""The Redis backend's promise against a real redis-server and real Celery workers:
a lost, duplicated or redelivered Celery message never trains a job twice or loses it.

The drain task carries no job (tempsup.jobs.redis): the claim in Redis decides
who trains what. These tests put the broker in the states that promise is
about, by writing to the broker's own Redis keys what Celery/kombu would:

- duplicates: more drain messages than jobs, among them byte-identical copies
  of one message (same task id), for two workers at once;
- lost: the drain message never reaches the broker (a Redis restart without
  persistence); polling the queued job must re-send one;
- redelivered: a worker is killed mid-job (kill -9) and its unacknowledged
  message is put back on the queue, as kombu does once the visibility timeout
  passes (late acks), for a fresh worker.

Every test has its own redis-server, so the broker's shared keys (kombu's
`unacked` hash) hold only this test's messages. Waits are on conditions
(states, an empty broker, a job held at its gate: `tests.gate`), never on clocks.
"""

from __future__ import annotations

import json
import os
import signal

import pytest
import redis

from app.jobwords import describe
from tempsup.jobs import celery_app
from tempsup.jobs.record import JobState
from tempsup.jobs.redis import RedisQueue
from tempsup.jobs.worker import WorkerPool
from tempsup.model.config import RunConfig, snapshot_steps
from tests.gate import GATED
from tests.helpers import DEADLINE, wait_for
from tests.services import RedisServer

TINY = {"steps": 40, "batch": 64, "seeds": 2, "snapshot_every": 10}
LONG = {**TINY, "steps": 2400, "snapshot_every": 80}  # 31 frames: held at a gate, many to come
UNACKED = "unacked"  # kombu's hash of delivered, not yet acknowledged messages


@pytest.fixture
def server(tmp_path):
    with RedisServer(tmp_path / "redis") as srv:
        yield srv


@pytest.fixture
def queue(server) -> RedisQueue:
    return RedisQueue(
        server.url, "dup:", "WARNING", notify=celery_app.drain_hook(server.url, "dup:")
    )


@pytest.fixture
def broker(server) -> redis.Redis:
    client = redis.Redis.from_url(server.url)
    yield client
    client.close()


def pending(broker: redis.Redis, queue: RedisQueue) -> list[bytes]:
    """The drain messages waiting in the broker for this queue's workers."""
    return broker.lrange(queue.task_queue, 0, -1)


def broker_idle(broker: redis.Redis, queue: RedisQueue):
    """Probe: nothing waiting and nothing delivered but unacknowledged (late acks:
    a message is acked when its task has returned)."""
    return lambda: broker.llen(queue.task_queue) == 0 and broker.hlen(UNACKED) == 0


def finished_or_failed(queue: RedisQueue, config: RunConfig):
    return lambda: queue.status(config.key).state in (JobState.DONE, JobState.FAILED)


def assert_trained_once(queue: RedisQueue, config: RunConfig) -> None:
    status = queue.status(config.key)
    assert status.state == JobState.DONE, status.message
    assert queue.details(config.key)["attempts"] == 1  # one claim, one training
    frames = queue.frames(config.key)
    assert [int(f["step"]) for f in frames] == snapshot_steps(config.steps, config.snapshot_every)
    assert queue.run(config.key).n_frames == config.n_snapshots


def test_duplicated_and_repeated_messages_train_each_job_once(queue, broker, gate):
    # `a` is held at its gate while running: meanwhile the other worker takes the surplus
    # messages, whose drains must leave the running job alone
    a, b = RunConfig(**LONG, seed=1), RunConfig(**TINY, seed=2)
    gate.hold(a.key, after=1)
    queue.submit(a, client="alice")  # one drain message each
    queue.submit(b, client="bob")
    assert len(pending(broker, queue)) == 2
    for _ in range(4):  # surplus messages: a web process that sends too many
        celery_app.send_drain(queue.url, queue.prefix)
    copy = pending(broker, queue)[0]
    assert json.loads(copy)["headers"]["task"] == "tempsup.drain"
    broker.lpush(queue.task_queue, copy, copy)  # the same message (same task id) twice more
    assert len(pending(broker, queue)) == 8

    with WorkerPool(queue, n=2, threads=1, imports=GATED):  # 8 messages, 2 jobs, 2 workers
        gate.wait_held(a.key)
        wait_for(f"job {b.key}", finished_or_failed(queue, b))
        # every message but the one whose drain holds `a` is consumed while `a` runs
        wait_for("the surplus messages", lambda: broker.llen(queue.task_queue) == 0)
        assert queue.status(a.key).state == JobState.RUNNING
        assert queue.details(a.key)["attempts"] == 1
        gate.open(a.key)
        for config in (a, b):
            wait_for(f"job {config.key}", finished_or_failed(queue, config))
        wait_for("the surplus messages to be consumed", broker_idle(broker, queue))
        finished = {c.key: queue.details(c.key)["finished"] for c in (a, b)}
        # more surplus after the jobs are done: still nothing to train
        celery_app.send_drain(queue.url, queue.prefix)
        broker.lpush(queue.task_queue, copy)
        wait_for("the late messages to be consumed", broker_idle(broker, queue))
    for config in (a, b):
        assert_trained_once(queue, config)
        assert queue.details(config.key)["finished"] == finished[config.key]  # not redone
    assert queue.queued() == [] and queue.running() == []


def test_a_lost_message_is_resent_when_the_queued_job_is_polled(queue, broker, monkeypatch):
    config = RunConfig(**TINY, seed=3)
    lost: list[str] = []
    monkeypatch.setattr(celery_app, "send_drain", lambda url, prefix: lost.append(prefix))
    queue.submit(config)  # the drain message goes nowhere
    monkeypatch.undo()
    assert lost == ["dup:"] and pending(broker, queue) == []

    assert queue.status(config.key).state == JobState.QUEUED  # a page polls: re-sent
    assert len(pending(broker, queue)) == 1
    assert queue.status(config.key).state == JobState.QUEUED  # at most one per KICK_EVERY
    assert len(pending(broker, queue)) == 1

    with WorkerPool(queue, n=1, threads=1):
        wait_for("the job", finished_or_failed(queue, config))
        wait_for("the broker to empty", broker_idle(broker, queue))
    assert_trained_once(queue, config)


def test_a_redelivered_message_of_a_killed_worker_never_reruns_its_job(queue, broker, gate):
    config = RunConfig(**LONG, seed=4)
    gate.hold(config.key, after=2)
    pool = WorkerPool(queue, n=1, threads=1, imports=GATED)
    try:
        queue.submit(config, client="alice")
        gate.wait_held(config.key)
        ((tag, entry),) = broker.hgetall(UNACKED).items()  # its message, delivered, not acked
        payload, _exchange, routing_key = json.loads(entry)
        assert routing_key == queue.task_queue and payload["headers"]["task"] == "tempsup.drain"
        pid = queue.details(config.key)["pid"]
        (process,) = [p for p in pool.processes if p.pid == pid]
        os.kill(pid, signal.SIGKILL)  # kill -9 mid-job: the message stays unacknowledged
        process.wait(timeout=DEADLINE)
        assert queue.details(config.key)["state"] == "running"

        # what kombu does after the visibility timeout: the message goes back on its queue
        payload["headers"]["redelivered"] = True
        payload["properties"]["delivery_info"]["redelivered"] = True
        with broker.pipeline() as pipe:
            pipe.hdel(UNACKED, tag).zrem("unacked_index", tag)
            pipe.rpush(queue.task_queue, json.dumps(payload)).execute()
        assert pool.check() == 1  # a fresh worker takes the redelivered message
        wait_for("the redelivered message to be consumed", broker_idle(broker, queue))
    finally:
        pool.stop()
    status = queue.status(config.key)
    assert status.state == JobState.FAILED, status  # reported, not silently re-run
    assert describe(status) == f"worker died at step {status.step}; press Train to retry"
    assert queue.details(config.key)["attempts"] == 1
    assert len(queue.frames(config.key)) == status.n_frames == 2
    assert queue.queued() == [] and queue.running() == []
