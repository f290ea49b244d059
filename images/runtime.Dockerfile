# reactorfed runtime, CPU: runs the RTI, the samplers and (gpus: 0) learners.
#   docker build -f images/runtime.Dockerfile -t reactorfed-runtime:0.1.0 .
# Multi-stage: build a virtualenv with CPU-only torch, copy it into a slim non-root image.
# Bases are pinned by version; pin by digest in your registry mirror (renovate/dependabot).
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ARG TORCH_VERSION=2.15.0
# where torch comes from: the CPU-only wheels (the default wheel on PyPI is the CUDA build)
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PATH=/opt/venv/bin:$PATH
WORKDIR /src
# torch's wheels (GBs) stay in a BuildKit cache between builds; nothing of it lands in a layer
# torch first, from the CPU index: the default wheel would pull in CUDA libraries.
RUN --mount=type=cache,target=/root/.cache/pip \
    python -m venv /opt/venv \
 && pip install --index-url "${TORCH_INDEX}" "torch==${TORCH_VERSION}"
COPY pyproject.toml README.md ./
COPY runtime ./runtime
COPY operator ./operator
# The project itself (a local path): its dependencies are bounded in pyproject.toml.
# hadolint ignore=DL3013
RUN pip install --no-cache-dir ".[rl]"

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="reactorfed-runtime" \
      org.opencontainers.image.description="reactorfed runtime (CPU): reactor programs, RTI and federates" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --gid 10001 reactorfed \
 && useradd --uid 10001 --gid 10001 --home-dir /home/reactorfed --create-home --shell /usr/sbin/nologin reactorfed
COPY --from=build /opt/venv /opt/venv
# the example programs, as examples/k8s/ names them: /opt/reactorfed/examples/rl/*.py:Main
COPY examples/rl /opt/reactorfed/examples/rl
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 HOME=/home/reactorfed
WORKDIR /home/reactorfed
# numeric user: the operator's pods set runAsNonRoot, which needs a numeric UID to verify
USER 10001:10001
# RTI port, RTI metrics/status, federate metrics
EXPOSE 15045 9100 9101
ENTRYPOINT ["reactorfed"]
CMD ["--help"]
