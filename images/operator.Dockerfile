# The reactorfed operator (Kopf). The Helm chart runs it with its own arguments.
#   docker build -f images/operator.Dockerfile -t ghcr.io/reactorfed/reactorfed-operator:0.1.0 .
# It carries only what the operator imports: its own package (operator/reactorfed_operator)
# and pyproject.toml's `operator` extra (kopf, kubernetes, pyyaml; pyzmq, to issue the
# members' keys); not the runtime (reactorfed) nor its other dependencies (numpy, msgpack,
# prometheus-client).
# tests/operator/test_images.py checks both: the package imports nothing else, and this
# file installs that extra alone. The dependencies' layer is rebuilt only when the extra
# changes; a change of the code rebuilds only the last small layer.
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS requirements
WORKDIR /src
COPY pyproject.toml ./
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; print('\n'.join(p['optional-dependencies']['operator']))" > /requirements.txt

FROM ${PYTHON_IMAGE} AS deps
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PATH=/opt/venv/bin:$PATH
COPY --from=requirements /requirements.txt /tmp/requirements.txt
# Their versions are bounded in pyproject.toml.
# hadolint ignore=DL3013
RUN python -m venv /opt/venv && pip install --no-cache-dir -r /tmp/requirements.txt

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="reactorfed-operator" \
      org.opencontainers.image.description="Kubernetes operator for ReactorFederation resources" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --gid 10001 reactorfed \
 && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin reactorfed
COPY --from=deps /opt/venv /opt/venv
COPY operator/reactorfed_operator /opt/reactorfed-operator/reactorfed_operator
ENV PATH=/opt/venv/bin:$PATH PYTHONPATH=/opt/reactorfed-operator PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["python", "-m", "reactorfed_operator"]
