"""gunicorn settings for serving the app: `gunicorn -c gunicorn.conf.py app:server`."""

import os

wsgi_app = "app:server"
bind = f"0.0.0.0:{os.environ.get('PORT', '8050')}"
workers = 2
threads = 4
timeout = 60
graceful_timeout = 30
accesslog = "-"


def on_starting(server) -> None:  # noqa: ANN001 - gunicorn hook signature
    """Start the training workers once, in the master, beside the web workers.

    The web workers never run torch; the pool's processes are separate
    programs (not forks), and the master stops them on shutdown.
    """
    from app.services import start_preset_fill, start_workers, warm_up

    server.tempsup_pool = start_workers()
    warm_up()
    server.tempsup_fill = start_preset_fill()


def on_exit(server) -> None:  # noqa: ANN001
    from app.services import stop

    stop(getattr(server, "tempsup_fill", None))
    pool = getattr(server, "tempsup_pool", None)
    if pool is not None:
        pool.stop()
