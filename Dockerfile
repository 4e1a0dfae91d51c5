# The tempsup app for a teaching demo, served by gunicorn on port 8050.
#   docker build -t tempsup .
#   docker run -p 8050:8050 -v tempsup-cache:/srv/tempsup/cache tempsup
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PORT=8050

# PyTorch first, the CPU build from PyTorch's CPU wheel index (PyPI's Linux
# wheel is a multi-GB CUDA build); keep the version in step with scripts/setup.
ARG TORCH_VERSION=2.13.0
RUN pip install "torch==${TORCH_VERSION}" --index-url https://download.pytorch.org/whl/cpu

# No C compiler in this image: the ReLU RNN trains by PyTorch's time loop (the
# workers log this once). To have tempsup.training.fused build its compiled loop in the
# container (about 2.5x faster ReLU RNN jobs, ~100 MB more), add here:
#   RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
#       && rm -rf /var/lib/apt/lists/*

WORKDIR /srv/tempsup
COPY pyproject.toml README.md gunicorn.conf.py mkdocs.yml ./
COPY tempsup ./tempsup
COPY app ./app
COPY assets ./assets
COPY docs ./docs
COPY examples ./examples
# Editable, so that app/ finds the top-level assets/ folder beside it. With the docs
# extra, to build the documentation into build/docs/, which the app serves at /docs/
# (strict, as scripts/docs: a warning or a broken link fails the image's build).
RUN pip install -e ".[docs]" \
    && NO_MKDOCS_2_WARNING=1 mkdocs build --strict

RUN useradd --create-home --uid 1000 tempsup \
    && mkdir -p /srv/tempsup/cache \
    && chown tempsup:tempsup /srv/tempsup/cache
USER tempsup
VOLUME ["/srv/tempsup/cache"]

EXPOSE 8050
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD python -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('PORT', '8050') + '/healthz', timeout=5)" || exit 1

CMD ["gunicorn", "-c", "gunicorn.conf.py", "app:server"]
