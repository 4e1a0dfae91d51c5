"""gunicorn settings for serving the app: `gunicorn -c gunicorn.conf.py app:server`.

The settings (`tempsup.settings`) are read here, once, in the master: a bad
`TEMPSUP_*` value stops gunicorn before it binds, with one line naming it.
SIGTERM or SIGINT to the master stops the web workers and then (`on_exit`)
the training workers it started, within seconds.
"""

import os
import sys

from gunicorn.glogging import Logger

from tempsup.settings import Settings, SettingsError

try:
    _settings = Settings.from_env(os.environ)
except SettingsError as exc:
    sys.exit(f"gunicorn: error: {exc}")

wsgi_app = "app:server"
bind = f"0.0.0.0:{_settings.port}"
# One web process with four threads. Each web process keeps its own caches (decoded runs,
# drawn frames, shared answers, the count of its pages: app/streams.py, app/answers.py,
# app/audience.py): with two, every stream a class watched was drawn in both, and a page
# whose requests alternated between them cost both. The web's work is Python under one
# interpreter lock, and the training workers have the cores; more threads only queue for
# the lock (kept-alive connections wait in gunicorn's loop, not in a thread). Measured in
# the classroom benchmark (README, "Deploy a teaching demo"). More processes: `--workers N`
# on gunicorn's command line (or in GUNICORN_CMD_ARGS), which overrides this file.
workers = 1
threads = 4
timeout = 60
# Callbacks answer in well under a second; a stop must not wait long. A stop takes at most
# this plus the training pool's STOP_TIMEOUT (`on_exit` stops the pool once the web workers
# are gone): 3 + 6 s, inside the 10 s a service manager or `docker stop` grants.
graceful_timeout = 3
accesslog = "-"
CALLBACKS = "/_dash-update-component"  # where Dash's renderer sends every callback


class AccessLog(Logger):
    """gunicorn's access log less the callback requests the app answered. A class of 60
    watching a job sends them about 130 times a second, each line the same POST to the
    same path (which callback is in the body), and writing one cost a web process 0.12 to
    0.15 ms, a quarter of a plain request's 0.5 ms (measured on /healthz). Page loads,
    assets, the health check, and every answer of 400 or more, callbacks' included, are
    logged as before."""

    def access(self, resp, req, environ, request_time) -> None:  # noqa: ANN001 - gunicorn's
        if req.path.endswith(CALLBACKS) and (resp.status_code or 500) < 400:
            return
        super().access(resp, req, environ, request_time)


logger_class = AccessLog


def on_starting(server) -> None:  # noqa: ANN001 - gunicorn hook signature
    """Start the training workers once, in the master, beside the web workers.

    The web workers never run torch; the pool's processes are separate
    programs (not forks), and the master stops them on shutdown.
    """
    from app.services import start

    server.tempsup_pool = start()


def post_worker_init(worker) -> None:  # noqa: ANN001 - gunicorn hook signature
    """Each web process, once it has imported the app: its start-up heap is frozen and its
    garbage collected in larger batches (`app.heap`)."""
    from app.heap import settle

    settle()


def on_exit(server) -> None:  # noqa: ANN001
    pool = getattr(server, "tempsup_pool", None)
    if pool is not None:
        pool.stop()
