# reactorfed runtime, GPU: the learner with CUDA torch (the pods ask for nvidia.com/gpu).
#   docker build -f images/runtime-gpu.Dockerfile -t reactorfed-runtime-gpu:0.1.0 .
# CUDA torch wheels carry their CUDA libraries; the driver comes from the node through the
# NVIDIA container toolkit / device plugin, so a slim Python base suffices.
# Multi-stage: a virtualenv with CUDA torch and the project's dependencies, then the
# project's own wheel on top, in a slim non-root image. The dependencies' layer (GBs) is
# rebuilt only when pyproject.toml's dependency lists change; a change of the code rebuilds
# and ships a layer of a few hundred KB.
# Bases are pinned by version; pin by digest in your registry mirror (renovate/dependabot).
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

# The dependency lists alone: editing pyproject.toml's tool settings leaves them, and so
# every layer below, unchanged.
FROM ${PYTHON_IMAGE} AS requirements
WORKDIR /src
COPY pyproject.toml ./
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; print('\n'.join(p['dependencies'] + p['optional-dependencies']['rl']))" > /requirements.txt

FROM ${PYTHON_IMAGE} AS deps
ARG TORCH_VERSION=2.15.0
# where torch comes from: PyTorch's CUDA 13.2 wheels. This stage is runtime.Dockerfile's, word
# for word, but for this default: built with the same --build-arg TORCH_INDEX (as
# scripts/images.sh --local does), the two images share their dependencies' layers.
ARG TORCH_INDEX=https://download.pytorch.org/whl/cu132
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PATH=/opt/venv/bin:$PATH
# torch's wheels (GBs) stay in a BuildKit cache between builds; nothing of it lands in a layer
RUN --mount=type=cache,target=/root/.cache/pip \
    python -m venv /opt/venv \
 && pip install --index-url "${TORCH_INDEX}" "torch==${TORCH_VERSION}"
COPY --from=requirements /requirements.txt /tmp/requirements.txt
# Their versions are bounded in pyproject.toml.
# hadolint ignore=DL3013
RUN pip install --no-cache-dir -r /tmp/requirements.txt

FROM deps AS wheel
WORKDIR /src
COPY pyproject.toml README.md ./
COPY runtime ./runtime
COPY operator ./operator
RUN pip wheel --no-deps --no-cache-dir --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="reactorfed-runtime-gpu" \
      org.opencontainers.image.description="reactorfed runtime with CUDA torch, for GPU learners" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --gid 10001 reactorfed \
 && useradd --uid 10001 --gid 10001 --home-dir /home/reactorfed --create-home --shell /usr/sbin/nologin reactorfed
COPY --from=deps /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 HOME=/home/reactorfed \
    NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility
# the project itself, without dependencies (the layer above has them, pinned by the build)
RUN --mount=type=bind,from=wheel,source=/wheels,target=/wheels \
    pip install --no-deps --no-cache-dir --disable-pip-version-check /wheels/*.whl
# the example programs, as examples/k8s/ names them: /opt/reactorfed/examples/rl/*.py:Main,
# /opt/reactorfed/examples/dataflow/*.py:Main
COPY examples/rl /opt/reactorfed/examples/rl
COPY examples/dataflow /opt/reactorfed/examples/dataflow
WORKDIR /home/reactorfed
# numeric user: the operator's pods set runAsNonRoot, which needs a numeric UID to verify
USER 10001:10001
# RTI port, RTI metrics/status, federate metrics
EXPOSE 15045 9100 9101
ENTRYPOINT ["reactorfed"]
CMD ["--help"]
