# Lagscope: one image for the API (with the web UI inside), the Celery worker and beat, the
# heartbeat writer, migrations, and the lab's load generator, tuning scenario and latency proxy.
#   docker build -t lagscope .        (docker-compose.yml builds it for every service)

# ---- the web UI: frontend/ built with Node (engines: node >= 20.19) -------------------------
FROM node:20-bookworm-slim AS ui
WORKDIR /frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

# ---- the Python package ---------------------------------------------------------------------
FROM python:3.12-slim-bookworm AS app
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
# Dependencies first (pinned by constraints.txt), so a code change does not reinstall them.
COPY pyproject.toml constraints.txt README.md ./
COPY backend/lagscope/__init__.py backend/lagscope/
RUN pip install -c constraints.txt -e . && rm -rf backend/lagscope.egg-info
COPY alembic.ini ./
COPY migrations/ migrations/
COPY backend/ backend/
# Editable on purpose: `lagscope migrate` finds alembic.ini and migrations/ beside the package.
RUN pip install --no-deps -c constraints.txt -e .
COPY --from=ui /frontend/dist/ /app/frontend/dist/
ENV LAGSCOPE_UI_DIST=/app/frontend/dist
RUN useradd --system --uid 10001 --home-dir /app lagscope
USER lagscope
EXPOSE 8000
# The API; the compose file gives worker, beat, heartbeat, migrate and the lab their commands.
CMD ["lagscope", "api", "--host", "0.0.0.0", "--port", "8000"]
