"""The ReactorFederation CRD's schema and defaults: the one source.

``crds/reactorfederations.reactorfed.io.yaml`` and the Helm chart's copy are generated
from this module (``python -m reactorfed_operator.crdgen``; ``scripts/check-chart-crds.sh``
fails when a checked-in file differs), and :mod:`.spec` reads its defaults from
:data:`DEFAULTS`, so a default is written once.
"""

from __future__ import annotations

from typing import Any

from .schema_groups import CPU_IMAGE, federate_groups
from .schema_parts import (
    DURATION,
    ENTRYPOINT,
    GROUP_NAME,
    IDENT,
    MEMBER,
    PARAM,
    QUANTITY,
    env_var,
    node_selector,
    quantity,
    resources,
    rule,
    tolerations,
)

__all__ = ["DEFAULTS", "DURATION", "ENTRYPOINT", "GROUP_NAME", "IDENT", "LEAD_WINDOW", "MEMBER", "PARAM", "QUANTITY",
           "spec_schema"]

#: spec.coordination.leadWindow: a duration, or none (no window)
LEAD_WINDOW = f"^(none|{DURATION[1:-1]})$"

#: every defaulted field of ``spec``, by its dotted path
DEFAULTS: dict[str, Any] = {
    "program.imagePullPolicy": "IfNotPresent",
    "program.configMap.key": "program.py",
    #: the runtime's default (reactorfed.execution.threads.DEFAULT_THREADS; a test keeps them equal)
    "program.threads": 1,
    "program.allowThreadChange": False,
    "rti.port": 15045,
    "rti.metricsPort": 9100,
    "samplers.replicas": 2,
    "samplers.name": "samplers",
    "samplers.param": "num_samplers",
    "samplers.maxParam": "max_samplers",
    "learner.name": "learner",
    "learner.gpus": 1,
    "coordination.fast": False,
    "coordination.mode": "centralized",
    #: the runtime's default (reactorfed.federation.process.defaults.DEFAULT_LEAD_WINDOW_NS; a test keeps them equal)
    "coordination.leadWindow": "1s",
    "secretRef.key": "secret",
    "checkpoint.mountPath": "/checkpoints",
    "observability.trace.mountPath": "/traces",
    "failurePolicy.maxRestarts": 3,
    "terminationGracePeriodSeconds": 30,
    "suspend": False,
}

def _d(path: str, **schema: Any) -> dict[str, Any]:
    """``schema`` with the default of ``path`` from :data:`DEFAULTS`."""
    return {**schema, "default": DEFAULTS[path]}


def _program() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "What to run. The image must provide the `reactorfed` command.",
        "required": ["image", "entrypoint"],
        "x-kubernetes-validations": [rule(
            "!has(self.configMap) || (self.configMap.key.endsWith('.py') && self.entrypoint.startsWith("
            "self.configMap.key.substring(0, self.configMap.key.size() - 3) + ':'))",
            "with spec.program.configMap the entrypoint's module must be the ConfigMap key without '.py' "
            "(key my_prog.py -> entrypoint my_prog:Main)")],
        "properties": {
            "image": {"type": "string", "minLength": 1, "maxLength": 512,
                      "description": "Container image holding reactorfed and the program."},
            "imagePullPolicy": _d("program.imagePullPolicy", type="string", enum=["Always", "IfNotPresent", "Never"]),
            "imagePullSecrets": {"type": "array", "maxItems": 8, "items": {
                "type": "object", "required": ["name"], "properties": {"name": {"type": "string", "minLength": 1}}}},
            "entrypoint": {
                "type": "string",
                "description": "The main reactor: module:Attr, or /absolute/path/to/file.py:Attr inside the image "
                               "(Attr is a Reactor class or a function returning the main reactor).",
                "maxLength": 256,
                "pattern": ENTRYPOINT,
            },
            "configMap": {
                "type": "object",
                "description": "A ConfigMap holding the program file; it is mounted and put on PYTHONPATH.",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 253},
                    "key": _d("program.configMap.key", type="string", pattern=r"^[A-Za-z_][A-Za-z0-9_]*\.py$"),
                },
            },
            "params": {
                "type": "object",
                "description": "Program parameters passed to every process as --param KEY=VALUE.",
                "maxProperties": 64,
                "x-kubernetes-validations": [rule(f"self.all(k, k.matches('{PARAM}'))",
                                                  "parameter names must be Python identifiers, or dotted paths "
                                                  "of them (a nested field: ppo.learning_rate)")],
                "additionalProperties": {"type": "string", "maxLength": 1024},
            },
            "threads": _d("program.threads", type="integer", minimum=1, maximum=256,
                          description="torch's threads (the runtime's --threads) and OMP_NUM_THREADS in every pod, "
                                      "whatever its CPU resources or its node's size: the thread count changes "
                                      "torch's float sums, so a seed gives the same weights only with the same "
                                      "count. The learner's checkpoint records it and refuses to resume with "
                                      "another. CPU requests and limits only place the pods."),
            "allowThreadChange": _d("program.allowThreadChange", type="boolean",
                                    description="Let the learner resume from a checkpoint written with another "
                                                "threads (the runtime's --allow-thread-change): the run then does "
                                                "not end with the weights of an uninterrupted one."),
            "env": {
                "type": "array",
                "description": "Extra plain environment variables for every container.",
                "maxItems": 64,
                "items": env_var(),
            },
        },
    }


def _port(path: str) -> dict[str, Any]:
    return _d(path, type="integer", minimum=1024, maximum=65535)


def _samplers() -> dict[str, Any]:
    return {
        "type": "object",
        "default": {},
        "description": "The bank of sampler federates (CPU). `kubectl scale` sets replicas. With maxReplicas the bank "
                       "is elastic: a change of replicas adds or removes sampler pods in the running federation, and a "
                       "failed sampler pod is replaced, while the RTI and the learner run on; without it, a change of "
                       "replicas restarts the federation from its checkpoint.",
        "x-kubernetes-validations": [
            rule("!has(self.maxReplicas) || !has(self.replicas) || self.replicas <= self.maxReplicas",
                 "spec.samplers.replicas must be between 1 and spec.samplers.maxReplicas (the elastic bank's maximum width)"),
            rule("!has(self.maxReplicas) || !has(self.param) || !has(self.maxParam) || self.param != self.maxParam",
                 "spec.samplers.maxParam must differ from spec.samplers.param"),
        ],
        "properties": {
            "replicas": _d("samplers.replicas", type="integer", minimum=1, maximum=512,
                           description="The number of samplers (what `kubectl scale` and an HPA set); at most "
                                       "maxReplicas when that is set."),
            "maxReplicas": {
                "type": "integer",
                "description": "Makes the bank elastic, at most this wide: the program declares it with "
                               "elastic_bank(..., Elastic(min=1, max=<maxParam>, initial=<param>)). Changing it "
                               "restarts the federation (the bounds are part of the program).",
                "minimum": 1,
                "maximum": 512,
            },
            "name": _d("samplers.name", type="string", pattern=MEMBER,
                       description="The bank's name in the main reactor (members are NAME[i])."),
            "param": _d("samplers.param", type="string", pattern=IDENT,
                        description="The program parameter that receives the sampler count."),
            "maxParam": _d("samplers.maxParam", type="string", pattern=IDENT,
                           description="The program parameter that receives maxReplicas (elastic banks only); param "
                                       "then receives the width the running incarnation started with."),
            "resources": resources(**{"x-kubernetes-validations": [rule(
                "!has(self.limits) || !self.limits.exists(k, k == 'nvidia.com/gpu')",
                "samplers run on CPU nodes: request GPUs for the learner, not the samplers")]}),
            "nodeSelector": node_selector(),
            "tolerations": tolerations(),
        },
    }


def _learner() -> dict[str, Any]:
    return {
        "type": "object",
        "default": {},
        "description": "The learner federate, placed on a GPU node when gpus > 0.",
        "properties": {
            "image": {"type": "string", "minLength": 1, "maxLength": 512,
                      "description": "Image for the learner only (e.g. the CUDA build); defaults to spec.program.image."},
            "name": _d("learner.name", type="string", pattern=MEMBER, description="The learner's name in the main reactor."),
            "gpus": _d("learner.gpus", type="integer", minimum=0, maximum=16,
                       description="GPUs requested as nvidia.com/gpu (0 runs the learner on CPU)."),
            "resources": resources(),
            "nodeSelector": node_selector(description="Defaults to {reactorfed.io/accelerator: nvidia} when gpus > 0."),
            "tolerations": tolerations(),
        },
        "x-kubernetes-validations": [rule("!has(self.name) || self.name != 'rti'", "spec.learner.name must not be 'rti'")],
    }


def _rest() -> dict[str, Any]:
    """coordination, secretRef, checkpoint, observability, failurePolicy, terminationGracePeriodSeconds, suspend."""
    return {
        "coordination": {"type": "object", "default": {}, "properties": {
            "timeout": {"type": "string", "pattern": DURATION,
                        "description": "Logical-time bound for the run, e.g. '10 s', '500ms', '2 h'; unset runs until "
                                       "the program stops."},
            "joinTimeout": {"type": "string", "pattern": DURATION,
                            "description": "How long the RTI waits from its start for every federate to join (the "
                                           "runtime's --join-timeout; default 60 s). Raise it for wide federations "
                                           "whose pods take long to be scheduled or to start."},
            "advanceMessageInterval": {"type": "string", "pattern": DURATION,
                                       "description": "Lingua Franca's advance-message-interval (the runtime's "
                                                      "--advance-message-interval; default 10 ms, at least 1 ms): a "
                                                      "federate whose outputs a physical action reaches renews its "
                                                      "promise, bounded by physical time, this often while it waits."},
            "fast": _d("coordination.fast", type="boolean",
                       description="Run as fast as possible instead of tracking physical time."),
            "mode": _d("coordination.mode", type="string", enum=["centralized", "decentralized"],
                       description="centralized: the RTI grants tags; decentralized (Lingua Franca's "
                                   "coordination: decentralized): no grant, each federate advances on its "
                                   "upstream peers' word or once its maxwait has passed (the runtime's "
                                   "--coordination)."),
            "leadWindow": _d("coordination.leadWindow", type="string", pattern=LEAD_WINDOW,
                             description="How far in logical time a federate may run ahead of the slowest federate "
                                         "downstream of it, e.g. '1s', '250ms', or 'none' for no limit (the "
                                         "runtime's --lead-window). Bounds what queues at a slow consumer and how "
                                         "far past a stop request the federation runs, under fast."),
        }},
        "secretRef": {
            "type": "object",
            "description": "A Secret holding the federation's shared secret; the operator creates one when omitted.",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 253},
                "key": _d("secretRef.key", type="string", minLength=1),
            },
        },
        "checkpoint": {
            "type": "object",
            "description": "The learner's checkpoint volume (kept across restarts and rescaling).",
            "x-kubernetes-validations": [rule("has(self.claimName) != has(self.size)",
                                              "spec.checkpoint needs exactly one of claimName (an existing PVC) or size "
                                              "(the operator creates a PVC)")],
            "properties": {
                "claimName": {"type": "string", "minLength": 1, "maxLength": 253},
                "size": quantity(),
                "storageClassName": {"type": "string"},
                "mountPath": _d("checkpoint.mountPath", type="string", pattern="^/.*"),
            },
        },
        "observability": {
            "type": "object",
            "description": "Traces of the run (docs/observability.md): spans to an OpenTelemetry collector, trace files "
                           "to a volume, or both.",
            "properties": {
                "otlpEndpoint": {"type": "string", "pattern": "^https?://[^ ]+$", "maxLength": 2048,
                                 "description": "OTLP/HTTP traces endpoint every pod exports its spans to (the "
                                                "runtime's --otlp-endpoint), e.g. http://collector:4318/v1/traces."},
                "trace": {
                    "type": "object",
                    "description": "Trace files (the runtime's --trace): every pod writes MOUNTPATH/INCARNATION/"
                                   "PROCESS.rftrace on this PVC, which every node must be able to mount "
                                   "(ReadWriteMany); 'reactorfed trace merge' reads the incarnation's folder.",
                    "required": ["claimName"],
                    "properties": {
                        "claimName": {"type": "string", "minLength": 1, "maxLength": 253},
                        "mountPath": _d("observability.trace.mountPath", type="string", pattern="^/.*"),
                    },
                },
            },
        },
        "failurePolicy": {"type": "object", "default": {}, "properties": {
            "maxRestarts": _d("failurePolicy.maxRestarts", type="integer", minimum=0, maximum=100,
                              description="Restarts of the whole federation from its checkpoint after a pod fails, "
                                          "before Failed."),
        }},
        "terminationGracePeriodSeconds": _d(
            "terminationGracePeriodSeconds", type="integer", minimum=0, maximum=3600,
            description="Time a federate gets on SIGTERM to reach a safe point and write its checkpoint."),
        "suspend": _d("suspend", type="boolean",
                      description="Stop every pod (the checkpoint is kept); false starts again from it."),
    }


def spec_schema() -> dict[str, Any]:
    """The schema of ``spec``."""
    return {
        "type": "object",
        "required": ["program"],
        "x-kubernetes-validations": [
            rule("has(self.federateGroups) || !has(self.program.params) || !has(self.samplers) || "
                 "!has(self.samplers.param) || "
                 "!(self.samplers.param in self.program.params)",
                 "spec.program.params must not set the sampler-count parameter named by spec.samplers.param; the "
                 "operator sets it from spec.samplers.replicas"),
            rule("!has(self.samplers) || !has(self.learner) || !has(self.samplers.name) || !has(self.learner.name) || "
                 "self.samplers.name != self.learner.name",
                 "spec.learner.name must differ from spec.samplers.name"),
            rule("has(self.federateGroups) || !has(self.samplers) || !has(self.samplers.maxReplicas) || "
                 "!has(self.program.params) || "
                 "!((has(self.samplers.maxParam) ? self.samplers.maxParam : 'max_samplers') in self.program.params)",
                 "spec.program.params must not set the parameter named by spec.samplers.maxParam; the operator sets it "
                 "from spec.samplers.maxReplicas"),
            rule("!has(self.federateGroups) || !has(self.samplers) || !has(self.samplers.replicas) || "
                 "self.federateGroups.all(g, !has(g.scale) || !g.scale || !has(g.maxReplicas) || "
                 "self.samplers.replicas <= g.maxReplicas)",
                 "spec.samplers.replicas (the scale group's width) must be at most that group's maxReplicas"),
            rule("!has(self.federateGroups) || self.federateGroups.all(g, !has(g.gpus) || g.gpus == 0 || has(g.image) "
                 f"|| !self.program.image.matches('{CPU_IMAGE}'))",
                 "a group that asks for GPUs must not run the CPU runtime image (spec.program.image is "
                 "reactorfed-runtime): give the group image reactorfed-runtime-gpu, or gpus: 0"),
        ],
        "properties": {
            "program": _program(),
            "rti": {
                "type": "object",
                "default": {},
                "properties": {
                    "image": {"type": "string", "minLength": 1, "maxLength": 512,
                              "description": "Image for the RTI only; defaults to spec.program.image. The RTI is given "
                                             "the program's layout, written by an init container that runs "
                                             "spec.program.image, and imports neither the program nor torch: an "
                                             "image of reactorfed without torch serves (images/rti.Dockerfile)."},
                    "port": _port("rti.port"),
                    "metricsPort": _port("rti.metricsPort"),
                    "resources": resources(),
                    "nodeSelector": node_selector(),
                },
                "x-kubernetes-validations": [rule("!has(self.port) || !has(self.metricsPort) || self.port != self.metricsPort",
                                                  "spec.rti.port and spec.rti.metricsPort must differ")],
            },
            "samplers": _samplers(),
            "learner": _learner(),
            "federateGroups": federate_groups(),
            **_rest(),
        },
    }
