"""Pieces of the CRD's schema shared by its fields: patterns and small sub-schemas."""

from __future__ import annotations

from typing import Any

__all__ = ["DURATION", "ENTRYPOINT", "GROUP_NAME", "IDENT", "LABEL_KEY", "MEMBER", "PARAM", "QUANTITY", "env_var",
           "node_selector", "quantity", "resources", "rule", "tolerations"]

IDENT = r"^[A-Za-z_][A-Za-z0-9_]*$"
#: a program parameter's name: an identifier, or a dotted path to a nested field (ppo.learning_rate)
#: (the dot as [.]: the pattern is also a CEL string, where "\." is no escape)
PARAM = r"^[A-Za-z_][A-Za-z0-9_]*([.][A-Za-z_][A-Za-z0-9_]*)*$"
ENTRYPOINT = r"^([A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*|/[-A-Za-z0-9_./]+\.py):[A-Za-z_][A-Za-z0-9_]*$"
MEMBER = r"^[a-z_][a-z0-9_]{0,15}$"
#: a federate group's name: its pods' role label and part of status (a DNS label, short)
GROUP_NAME = r"^[a-z]([-a-z0-9]{0,22}[a-z0-9])?$"
#: label keys as Kubernetes checks them on a pod (qualified names; lengths in reactorfed_operator.kube)
LABEL_KEY = (r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
             r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")  # fmt: skip
DURATION = r"^[0-9]+ ?(ns|us|ms|s|sec|m|min|h|hour|hours)$"
QUANTITY = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
            r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")  # fmt: skip


def rule(expr: str, message: str) -> dict[str, str]:
    return {"rule": expr, "message": message}


def quantity() -> dict[str, Any]:
    return {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}], "pattern": QUANTITY}


def resources(**extra: Any) -> dict[str, Any]:
    per = {"type": "object", "additionalProperties": quantity()}
    return {"type": "object", "properties": {"requests": per, "limits": dict(per)}, **extra}


def node_selector(cel: bool = True, **extra: Any) -> dict[str, Any]:
    """A node selector; ``cel`` checks its keys in the API server (too costly inside a
    list: there the operator checks them, reactorfed_operator.kube)."""
    return {
        "type": "object",
        **extra,
        "maxProperties": 32,
        **({} if not cel else {"x-kubernetes-validations": [rule(f"self.all(k, k.size() <= 317 && k.matches('{LABEL_KEY}'))",
                                          "node selector keys must be label keys ([prefix/]name: the prefix a DNS "
                                          "subdomain, the name at most 63 alphanumerics, '-', '_', '.')")]}),
        "additionalProperties": {"type": "string", "maxLength": 63},
    }


def tolerations() -> dict[str, Any]:
    return {
        "type": "array",
        "maxItems": 32,
        "items": {
            "type": "object",
            "properties": {
                "key": {"type": "string"},
                "operator": {"type": "string", "enum": ["Exists", "Equal"]},
                "value": {"type": "string"},
                "effect": {"type": "string", "enum": ["", "NoSchedule", "PreferNoSchedule", "NoExecute"]},
                "tolerationSeconds": {"type": "integer", "format": "int64"},
            },
            "x-kubernetes-validations": [
                rule("!has(self.operator) || self.operator != 'Exists' || !has(self.value) || self.value == ''",
                     "a toleration with operator Exists takes no value"),
                rule("(has(self.key) && self.key != '') || (has(self.operator) && self.operator == 'Exists')",
                     "a toleration without a key must have operator Exists"),
                rule("!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')",
                     "tolerationSeconds is allowed only with effect NoExecute"),
            ],
        },
    }


#: the variables numeric libraries read their thread count from: set in every pod from
#: spec.program.threads (the runtime's ``reactorfed.execution.threads.ENV_VARS``; a test keeps them equal)
THREAD_ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
#: the variables that carry a member's credentials: the shared secret (compatibility mode,
#: spec.secretRef), its own key file, the RTI's member table (the runtime's
#: ``reactorfed.federation.process.defaults.CREDENTIAL_ENV_VARS``; a test keeps them equal)
SECRET_ENV, KEY_FILE_ENV, MEMBER_KEYS_ENV = "REACTORFED_SECRET", "REACTORFED_KEY_FILE", "REACTORFED_MEMBER_KEYS"
CREDENTIAL_ENV_VARS = (SECRET_ENV, KEY_FILE_ENV, MEMBER_KEYS_ENV)
#: the pod's address, from the downward API
POD_IP_ENV = "POD_IP"
#: what the operator sets in every pod of a federation from the resource itself: a
#: program's env (spec.program.env, a group's env) cannot set them
OPERATOR_ENV_VARS = (*CREDENTIAL_ENV_VARS, POD_IP_ENV)


def env_var() -> dict[str, Any]:
    listed = ", ".join(f"'{v}'" for v in THREAD_ENV_VARS)
    operator_set = ", ".join(f"'{v}'" for v in OPERATOR_ENV_VARS)
    return {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {
                "type": "string",
                "pattern": IDENT,
                "x-kubernetes-validations": [
                    rule(f"!(self in [{operator_set}])",
                         "set by the operator in every pod: the member's credentials and the pod's address"),
                    rule(f"!(self in [{listed}])",
                         "the thread count is spec.program.threads: the operator sets it in every pod"),
                ],
            },
            "value": {"type": "string"},
        },
    }


