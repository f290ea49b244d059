# reactorfed runtime, GPU: the learner with CUDA torch (the pods ask for nvidia.com/gpu).
#   docker build -f images/runtime-gpu.Dockerfile -t reactorfed-runtime-gpu:0.1.0 .
# CUDA torch wheels carry their CUDA libraries; the driver comes from the node through the
# NVIDIA container toolkit / device plugin, so a slim Python base suffices.
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ARG TORCH_VERSION=2.15.0
ARG TORCH_CUDA=cu132
ARG TORCH_INDEX=https://download.pytorch.org/whl/${TORCH_CUDA}
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PATH=/opt/venv/bin:$PATH
WORKDIR /src
# torch's wheels (GBs) stay in a BuildKit cache between builds; nothing of it lands in a layer
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
LABEL org.opencontainers.image.title="reactorfed-runtime-gpu" \
      org.opencontainers.image.description="reactorfed runtime with CUDA torch, for GPU learners" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --gid 10001 reactorfed \
 && useradd --uid 10001 --gid 10001 --home-dir /home/reactorfed --create-home --shell /usr/sbin/nologin reactorfed
COPY --from=build /opt/venv /opt/venv
# the example programs, as examples/k8s/ names them: /opt/reactorfed/examples/rl/*.py:Main
COPY examples/rl /opt/reactorfed/examples/rl
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 HOME=/home/reactorfed \
    NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility
WORKDIR /home/reactorfed
USER 10001:10001
EXPOSE 15045 9100 9101
ENTRYPOINT ["reactorfed"]
CMD ["--help"]
