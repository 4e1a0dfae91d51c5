"""Serve the app locally: `python -m app [--port N] [--host H] [--debug] [--workers N]`.

For more than one user, run it under gunicorn instead (see README). The
settings are read once, first: a bad `TEMPSUP_*` value stops the server with
one line naming it. SIGTERM and SIGINT stop the server and every process it
started (the training workers, which give their running job back to the queue).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from tempsup.settings import Settings, SettingsError


def _stop(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds app.run, so `finally` stops the workers


def main(argv: list[str] | None = None) -> int:
    try:
        settings = Settings.from_env(os.environ)
    except SettingsError as exc:
        print(f"python -m app: error: {exc}", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(
        prog="python -m app", description="Serve the tempsup app on one machine."
    )
    parser.add_argument(
        "--port", type=int, default=settings.port, help="port (default: $PORT, else 8050)"
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--debug", action="store_true", help="Dash dev tools and auto-reload (off by default)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="training worker processes (default: $TEMPSUP_WORKERS, else 1; 0 = none)",
    )
    args = parser.parse_args(argv)
    if args.workers is not None:
        if args.workers < 0:
            parser.error(f"--workers: expected an integer >= 0, got {args.workers}")
        os.environ["TEMPSUP_WORKERS"] = str(args.workers)  # the settings app.services reads

    from app import app
    from app.heap import settle
    from app.services import reload_settings, start

    reload_settings()  # `python -m app` imported the app, which read them, before this ran

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _stop)
    pool = start()
    settle()  # the app is imported and its workers started: see app.heap
    try:
        app.run(host=args.host, port=args.port, debug=args.debug, use_reloader=False)
    except KeyboardInterrupt:
        pass
    finally:
        pool.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
