"""The schema of ``spec.federateGroups`` (see :mod:`.groups`)."""

from __future__ import annotations

from typing import Any

from .schema_parts import (
    GROUP_NAME,
    MEMBER,
    PARAM,
    env_var,
    node_selector,
    resources,
    rule,
    tolerations,
)

__all__ = ["CPU_IMAGE", "federate_groups"]

#: the project's CPU runtime image (any registry and tag): no CUDA, so no GPU for its pods
CPU_IMAGE = r"(^|/)reactorfed-runtime([:@].*)?$"


def _group() -> dict[str, Any]:
    bank_only = "!has(self.replicas) && !has(self.maxReplicas) && !has(self.minReplicas) && !has(self.widthParam)"
    return {
        "type": "object",
        "required": ["name"],
        "x-kubernetes-validations": [
            rule("has(self.federate) != has(self.bank)",
                 "a group places exactly one of federate (one federate of the program) or bank (a bank of it)"),
            rule(f"!has(self.federate) || ({bank_only} && !(has(self.scale) && self.scale))",
                 "only a bank group has a width (replicas, minReplicas, maxReplicas, widthParam, scale)"),
            rule("!has(self.maxReplicas) || !has(self.replicas) || self.replicas <= self.maxReplicas",
                 "replicas must be at most maxReplicas (the elastic bank's maximum width)"),
            rule("!has(self.maxReplicas) || !has(self.minReplicas) || self.minReplicas <= self.maxReplicas",
                 "minReplicas must be at most maxReplicas"),
            rule("has(self.maxReplicas) == has(self.maxParam)",
                 "maxParam (the parameter that receives maxReplicas) is set exactly when maxReplicas is"),
            rule(f"!has(self.follows) || (has(self.bank) && {bank_only} && !(has(self.scale) && self.scale))",
                 "a group with follows is a bank whose width follows another group's: no replicas, minReplicas, "
                 "maxReplicas, widthParam or scale of its own"),
            rule("!has(self.follows) || self.follows.group != self.name", "a group cannot follow itself"),
            rule("!has(self.scale) || !self.scale || !has(self.replicas)",
                 "the scale group's width is spec.samplers.replicas (what kubectl scale sets), not replicas"),
            rule(f"!has(self.gpus) || self.gpus == 0 || !has(self.image) || !self.image.matches('{CPU_IMAGE}')",
                 "a group that asks for GPUs must not run the CPU runtime image (reactorfed-runtime): use "
                 "reactorfed-runtime-gpu, or gpus: 0"),
        ],
        "properties": {
            "name": {"type": "string", "pattern": GROUP_NAME, "maxLength": 24,
                     "description": "The group's name: its pods' reactorfed.io/role label and its entry in status.groups."},
            "federate": {"type": "string", "pattern": MEMBER, "maxLength": 16, "description": "One federate of the program (one pod)."},
            "bank": {"type": "string", "pattern": MEMBER, "maxLength": 16,
                     "description": "A bank of the program: a pod per member, NAME[0] ... NAME[replicas-1]."},
            "widthParam": {"type": "string", "pattern": PARAM, "maxLength": 64,
                           "description": "The program parameter that receives the bank's width (every process gets it)."},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 512,
                         "description": "The bank's width (default 1); the scale group's is spec.samplers.replicas."},
            "minReplicas": {"type": "integer", "minimum": 1, "maximum": 512,
                            "description": "An elastic bank's least width (default 1)."},
            "maxReplicas": {"type": "integer", "minimum": 1, "maximum": 512,
                            "description": "Makes the bank elastic, at most this wide (maxParam receives it)."},
            "maxParam": {"type": "string", "pattern": PARAM, "maxLength": 64,
                         "description": "The program parameter that receives maxReplicas."},
            "scale": {"type": "boolean", "description": "The group kubectl scale, an HPA and the scale subresource act "
                                                        "on (at most one; its width is spec.samplers.replicas)."},
            "image": {"type": "string", "minLength": 1, "maxLength": 512,
                      "description": "Image for this group (e.g. the CUDA build); defaults to spec.program.image."},
            "gpus": {"type": "integer", "minimum": 0, "maximum": 16,
                     "description": "GPUs per pod as nvidia.com/gpu (default 0); > 0 places the pods on GPU nodes."},
            "resources": resources(),
            "nodeSelector": node_selector(cel=False),
            "tolerations": tolerations(),
            "affinity": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                         "description": "The pods' affinity, as in a pod spec."},
            "env": {"type": "array", "maxItems": 64, "items": env_var(),
                    "description": "Environment for this group's containers (after spec.program.env)."},
            "volumes": {"type": "array", "maxItems": 16, "description": "Volumes of this group's pods, as in a pod spec.",
                        "items": {"type": "object", "required": ["name"], "x-kubernetes-preserve-unknown-fields": True,
                                  "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 63}}}},
            "volumeMounts": {"type": "array", "maxItems": 16, "items": {
                "type": "object", "required": ["name", "mountPath"], "properties": {
                    "name": {"type": "string"}, "mountPath": {"type": "string", "pattern": "^/.*"},
                    "subPath": {"type": "string"}, "readOnly": {"type": "boolean"}}}},
            "follows": {"type": "object", "required": ["group"],
                        "description": "A bank with perMember members for each member of another bank group (e.g. each "
                                       "data-parallel learner's own samplers): its width is that group's width times "
                                       "perMember, and follows it when it is scaled.",
                        "properties": {
                            "group": {"type": "string", "pattern": GROUP_NAME, "maxLength": 24,
                                      "description": "The bank group followed (not elastic, not itself a follower)."},
                            "perMember": {"type": "integer", "minimum": 1, "maximum": 64,
                                          "description": "Members of this bank per member of the group followed (default 1)."},
                            "param": {"type": "string", "pattern": PARAM, "maxLength": 64,
                                      "description": "The program parameter that receives perMember."}}},
            "checkpoint": {"type": "boolean", "description": "The group holds state: its pods mount spec.checkpoint's "
                                                            "volume (--checkpoint-dir) and are stopped first."},
        },
    }


def federate_groups() -> dict[str, Any]:
    return {
        "type": "array",
        "description": "The federate groups (replaces the samplers/learner shorthand): each places one federate or "
                       "one bank of the program with its own width, image, GPUs, placement, environment and volumes.",
        "minItems": 1,
        "maxItems": 16,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": _group(),
        "x-kubernetes-validations": [
            rule("self.all(g, !has(g.federate) || self.exists_one(h, has(h.federate) && h.federate == g.federate))",
                 "a federate is placed by exactly one group"),
            rule("self.all(g, !has(g.bank) || self.exists_one(h, has(h.bank) && h.bank == g.bank))",
                 "a bank is placed by exactly one group"),
            rule("self.filter(g, has(g.scale) && g.scale).size() <= 1", "at most one group has scale: true"),
            rule("self.all(g, !has(g.follows) || self.exists(h, h.name == g.follows.group && has(h.bank) && "
                 "!has(h.follows) && !has(h.maxReplicas)))",
                 "follows.group must name a bank group of this list that is neither elastic nor a follower itself"),
        ],
    }


