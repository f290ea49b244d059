# The reactorfed operator (Kopf). The Helm chart runs it with its own arguments.
#   docker build -f images/operator.Dockerfile -t ghcr.io/reactorfed/reactorfed-operator:0.1.0 .
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PATH=/opt/venv/bin:$PATH
WORKDIR /src
RUN python -m venv /opt/venv
COPY pyproject.toml README.md ./
COPY runtime ./runtime
COPY operator ./operator
# The project itself (a local path): its dependencies are bounded in pyproject.toml.
# hadolint ignore=DL3013
RUN pip install --no-cache-dir ".[operator]"

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="reactorfed-operator" \
      org.opencontainers.image.description="Kubernetes operator for ReactorFederation resources" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --gid 10001 reactorfed \
 && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin reactorfed
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["python", "-m", "reactorfed_operator"]
