# The reactorfed operator (Kopf). The Helm chart runs it with its own arguments.
#   docker build -f images/operator.Dockerfile -t ghcr.io/reactorfed/reactorfed-operator:0.1.0 .
# The dependencies' layer is rebuilt only when pyproject.toml's dependency lists change; a
# change of the code rebuilds only the project's own small layer.
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS requirements
WORKDIR /src
COPY pyproject.toml ./
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; print('\n'.join(p['dependencies'] + p['optional-dependencies']['operator']))" > /requirements.txt

FROM ${PYTHON_IMAGE} AS deps
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PATH=/opt/venv/bin:$PATH
COPY --from=requirements /requirements.txt /tmp/requirements.txt
# Their versions are bounded in pyproject.toml.
# hadolint ignore=DL3013
RUN python -m venv /opt/venv && pip install --no-cache-dir -r /tmp/requirements.txt

FROM deps AS wheel
WORKDIR /src
COPY pyproject.toml README.md ./
COPY runtime ./runtime
COPY operator ./operator
RUN pip wheel --no-deps --no-cache-dir --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="reactorfed-operator" \
      org.opencontainers.image.description="Kubernetes operator for ReactorFederation resources" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --gid 10001 reactorfed \
 && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin reactorfed
COPY --from=deps /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
RUN --mount=type=bind,from=wheel,source=/wheels,target=/wheels \
    pip install --no-deps --no-cache-dir --disable-pip-version-check /wheels/*.whl
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["python", "-m", "reactorfed_operator"]
