# reactorfed RTI: reactorfed and its own dependencies (numpy, pyzmq, msgpack,
# prometheus-client), without torch, gymnasium or any program.
#   docker build -f images/rti.Dockerfile -t reactorfed-rti:0.1.0 .
# The RTI needs only its federation's layout, which the operator's init container writes
# with the program's image (`reactorfed layout`); the RTI reads it (`reactorfed rti
# --layout FILE`) and imports neither the program nor torch: spec.rti.image runs this
# image, a few hundred MB where the runtime image (torch) takes GBs.
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

# The dependency list alone: editing pyproject.toml's tool settings leaves the layers below.
FROM ${PYTHON_IMAGE} AS requirements
WORKDIR /src
COPY pyproject.toml ./
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; print('\n'.join(p['dependencies']))" > /requirements.txt

FROM ${PYTHON_IMAGE} AS deps
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PATH=/opt/venv/bin:$PATH
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
LABEL org.opencontainers.image.title="reactorfed-rti" \
      org.opencontainers.image.description="reactorfed RTI: serves a federation from its layout, without torch" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --gid 10001 reactorfed \
 && useradd --uid 10001 --gid 10001 --home-dir /home/reactorfed --create-home --shell /usr/sbin/nologin reactorfed
COPY --from=deps /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 HOME=/home/reactorfed
RUN --mount=type=bind,from=wheel,source=/wheels,target=/wheels \
    pip install --no-deps --no-cache-dir --disable-pip-version-check /wheels/*.whl
WORKDIR /home/reactorfed
# numeric user: the operator's pods set runAsNonRoot, which needs a numeric UID to verify
USER 10001:10001
# RTI port, RTI metrics/status
EXPOSE 15045 9100
ENTRYPOINT ["reactorfed"]
CMD ["rti", "--help"]
