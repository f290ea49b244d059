# reactorfed runtime, CPU: runs the RTI, the samplers and (gpus: 0) learners.
#   docker build -f images/runtime.Dockerfile -t reactorfed-runtime:0.1.0 .
# Multi-stage: a virtualenv with CPU-only torch and the project's dependencies, then the
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
# where torch comes from: the CPU-only wheels (the default wheel on PyPI is the CUDA build)
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PATH=/opt/venv/bin:$PATH
# torch's wheels (GBs) stay in a BuildKit cache between builds; nothing of it lands in a layer
# torch first, from the CPU index: the default wheel would pull in CUDA libraries.
RUN --mount=type=cache,target=/root/.cache/pip \
    python -m venv /opt/venv \
 && pip install --index-url "${TORCH_INDEX}" "torch==${TORCH_VERSION}"
COPY --from=requirements /requirements.txt /tmp/requirements.txt
# Their versions are bounded in pyproject.toml.
# hadolint ignore=DL3013
RUN pip install --no-cache-dir -r /tmp/requirements.txt
# Built from PyPI's CUDA torch (scripts/images.sh --local), the CUDA libraries a machine without
# a GPU never loads go (about 2.3 of 6.3 GB; a no-op for the CPU wheel), and torch must still
# train: import it and take an optimizer step.
COPY images/prune_cuda.py /tmp/prune_cuda.py
RUN python /tmp/prune_cuda.py "$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
 && python -c "import torch; m = torch.nn.Linear(4, 2); o = torch.optim.Adam(m.parameters()); m(torch.ones(3, 4)).sum().backward(); o.step(); assert not torch.cuda.is_available()" \
 && rm /tmp/prune_cuda.py

FROM deps AS wheel
WORKDIR /src
COPY pyproject.toml README.md ./
COPY runtime ./runtime
COPY operator ./operator
RUN pip wheel --no-deps --no-cache-dir --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="reactorfed-runtime" \
      org.opencontainers.image.description="reactorfed runtime (CPU): reactor programs, RTI and federates" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --gid 10001 reactorfed \
 && useradd --uid 10001 --gid 10001 --home-dir /home/reactorfed --create-home --shell /usr/sbin/nologin reactorfed
COPY --from=deps /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 HOME=/home/reactorfed
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
