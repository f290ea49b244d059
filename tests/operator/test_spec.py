from __future__ import annotations

import pytest

from reactorfed_operator.spec import SpecError, cpu_cores, parse_spec

from .helpers import minimal_spec


def test_defaults_match_the_crd() -> None:
    s = parse_spec(minimal_spec())
    assert s.replicas == 2
    assert s.samplers.name == "samplers"
    assert s.learner.name == "learner"
    assert s.sampler_param == "num_samplers"
    assert s.gpus == 1
    assert (s.rti_port, s.metrics_port, s.federate_metrics_port) == (15045, 9100, 9101)
    assert s.max_restarts == 3 and s.grace_seconds == 30
    assert not s.fast and s.timeout is None and not s.suspend
    assert s.checkpoint is None and s.secret_name is None and s.secret_key == "secret"
    assert s.sampler_names(3) == ["samplers[0]", "samplers[1]", "samplers[2]"]


def test_full_spec() -> None:
    s = parse_spec(
        minimal_spec(
            program={
                "image": "img",
                "entrypoint": "my_prog:Main",
                "configMap": {"name": "prog", "key": "my_prog.py"},
                "params": {"lr": "0.001", "env_id": "ALE/Pong-v5"},
                "env": [{"name": "RENDER", "value": "0"}],
            },
            samplers={"replicas": 8, "resources": {"requests": {"cpu": "1"}}, "nodeSelector": {"pool": "cpu"}},
            learner={"gpus": 2, "tolerations": [{"key": "x", "operator": "Exists"}]},
            coordination={"timeout": "10 s", "fast": True, "joinTimeout": "3m"},
            secretRef={"name": "shared", "key": "token"},
            checkpoint={"size": "1Gi"},
        )
    )
    assert s.program.params == (("env_id", "ALE/Pong-v5"), ("lr", "0.001"))
    assert s.program.config_map == "prog" and s.replicas == 8 and s.gpus == 2
    assert s.timeout == "10 s" and s.join_timeout == "3m" and s.fast and s.secret_name == "shared" and s.secret_key == "token"
    assert s.checkpoint is not None and s.checkpoint.size == "1Gi" and s.checkpoint.mount_path == "/checkpoints"


@pytest.mark.parametrize(
    ("overrides", "field", "fragment"),
    [
        ({"program": {"image": "", "entrypoint": "a:b"}}, "spec.program.image", "required"),
        ({"program": {"image": "i", "entrypoint": "no_colon"}}, "spec.program.entrypoint", "module:Attr"),
        ({"program": {"image": "i", "entrypoint": "a:b", "configMap": {"name": "c", "key": "x.py"}}},
         "spec.program.entrypoint", "'x'"),
        ({"program": {"image": "i", "entrypoint": "a:b", "params": {"num_samplers": "3"}}},
         "spec.program.params", "num_samplers"),
        ({"samplers": {"replicas": 0}}, "spec.samplers.replicas", "between 1 and 512"),
        ({"samplers": {"replicas": "3"}}, "spec.samplers.replicas", "integer"),
        ({"samplers": {"resources": {"limits": {"nvidia.com/gpu": 1}}}}, "spec.samplers.resources", "GPU"),
        ({"learner": {"resources": {"requests": {"cpu": "two"}}}}, "spec.learner.resources.requests.cpu",
         "not a CPU quantity"),
        ({"rti": {"resources": {"limits": {"cpu": "1.5 cores"}}}}, "spec.rti.resources.limits.cpu", "500m"),
        ({"learner": {"name": "samplers"}}, "spec.learner.name", "differ"),
        ({"learner": {"gpus": 17}}, "spec.learner.gpus", "between 0 and 16"),
        ({"rti": {"port": 9100}}, "spec.rti.metricsPort", "differ"),
        ({"coordination": {"timeout": "soon"}}, "spec.coordination.timeout", "10 s"),
        ({"coordination": {"mode": "ptides"}}, "spec.coordination.mode", "decentralized"),
        ({"coordination": {"joinTimeout": "long"}}, "spec.coordination.joinTimeout", "120 s"),
        ({"coordination": {"joinTimeout": "500ms"}}, "spec.coordination.joinTimeout", "at least 1 s"),
        ({"coordination": {"advanceMessageInterval": "500us"}}, "spec.coordination.advanceMessageInterval", "at least 1 ms"),
        ({"coordination": {"advanceMessageInterval": "often"}}, "spec.coordination.advanceMessageInterval", "'10ms'"),
        ({"checkpoint": {"size": "1Gi", "claimName": "x"}}, "spec.checkpoint", "exactly one"),
        ({"suspend": "yes"}, "spec.suspend", "boolean"),
        ({"samplers": {"replicas": 9, "maxReplicas": 8}}, "spec.samplers.replicas",
         "between 1 and spec.samplers.maxReplicas (8)"),
        ({"samplers": {"maxReplicas": 0}}, "spec.samplers.maxReplicas", "between 1 and 512"),
        ({"samplers": {"maxReplicas": "8"}}, "spec.samplers.maxReplicas", "integer"),
        ({"samplers": {"maxReplicas": 8, "maxParam": "num_samplers"}}, "spec.samplers.maxParam", "differ"),
        ({"samplers": {"maxReplicas": 8, "maxParam": "max-samplers"}}, "spec.samplers.maxParam", "identifier"),
        ({"program": {"image": "i", "entrypoint": "a:b", "params": {"max_samplers": "3"}},
          "samplers": {"maxReplicas": 8}}, "spec.program.params", "spec.samplers.maxReplicas"),
        ({"coordination": {"leadWindow": "soon"}}, "spec.coordination.leadWindow", "'none'"),
    ],
)  # fmt: skip
def test_semantic_errors_name_the_field(overrides: dict, field: str, fragment: str) -> None:
    spec = minimal_spec()
    spec.update(overrides)
    with pytest.raises(SpecError) as info:
        parse_spec(spec)
    assert info.value.field == field
    assert fragment in str(info.value)


def test_elastic_bank() -> None:
    s = parse_spec(minimal_spec(samplers={"replicas": 3, "maxReplicas": 8}))
    assert s.elastic and (s.replicas, s.max_replicas, s.max_param) == (3, 8, "max_samplers")
    s = parse_spec(minimal_spec(samplers={"replicas": 8, "maxReplicas": 8, "maxParam": "most"}))
    assert s.replicas == 8 and s.max_param == "most"
    fixed = parse_spec(minimal_spec(program={"image": "i", "entrypoint": "a:b", "params": {"max_samplers": "3"}}))
    assert not fixed.elastic and fixed.max_replicas == 0  # a fixed bank's program may have such a parameter


def test_entrypoint_may_be_a_file_in_the_image() -> None:
    s = parse_spec(minimal_spec(program={"image": "i", "entrypoint": "/opt/reactorfed/examples/rl/qlearning.py:Main"}))
    assert s.program.entrypoint.endswith("qlearning.py:Main")
    with pytest.raises(SpecError, match="module:Attr"):
        parse_spec(minimal_spec(program={"image": "i", "entrypoint": "relative/qlearning.py:Main"}))


def test_params_may_set_a_nested_field_by_its_dotted_name() -> None:
    """A recipe's Args nests its algorithm's config: ppo.total_timesteps reaches it."""
    s = parse_spec(minimal_spec(program={"image": "i", "entrypoint": "a:b", "params": {"ppo.total_timesteps": "5"}}))
    assert s.program.params == (("ppo.total_timesteps", "5"),)
    for bad in ("ppo.", ".lr", "ppo..lr", "ppo.1", "ppo-lr"):
        with pytest.raises(SpecError, match=r"spec\.program\.params"):
            parse_spec(minimal_spec(program={"image": "i", "entrypoint": "a:b", "params": {bad: "1"}}))


def test_not_an_object() -> None:
    with pytest.raises(SpecError, match=r"spec\.program: must be an object"):
        parse_spec({"program": ["x"]})


@pytest.mark.parametrize(("quantity", "cores"), [("500m", 0.5), ("2", 2.0), (2, 2.0), ("1.5", 1.5), (".5", 0.5),
                                                 ("1e3m", 1.0), ("2500m", 2.5), ("1k", 1000.0)])
def test_cpu_quantities(quantity: object, cores: float) -> None:
    assert cpu_cores(quantity) == pytest.approx(cores)
