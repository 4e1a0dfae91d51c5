"""Serve the app locally: `python -m app [--port N] [--host H] [--debug]`.

For more than one user, run it under gunicorn instead (see README).
"""

from __future__ import annotations

import argparse
import os


def _default_port() -> int:
    value = os.environ.get("PORT", "8050")
    try:
        return int(value)
    except ValueError:
        raise SystemExit(f"PORT: expected a port number, got {value!r}") from None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m app", description="Serve the tempsup app on one machine."
    )
    parser.add_argument(
        "--port", type=int, default=_default_port(), help="port (default: $PORT, else 8050)"
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
        os.environ["TEMPSUP_WORKERS"] = str(args.workers)

    from app import app
    from app.services import start_preset_fill, start_workers, stop, warm_up

    pool = start_workers()
    warm_up()
    fill = start_preset_fill()
    try:
        app.run(host=args.host, port=args.port, debug=args.debug, use_reloader=False)
    finally:
        stop(fill)
        pool.stop()


if __name__ == "__main__":
    main()
