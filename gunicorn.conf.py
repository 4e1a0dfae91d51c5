"""gunicorn settings for serving the app: `gunicorn -c gunicorn.conf.py app:server`."""

import os

wsgi_app = "app:server"
bind = f"0.0.0.0:{os.environ.get('PORT', '8050')}"
workers = 2
threads = 4
timeout = 60
graceful_timeout = 30
accesslog = "-"
