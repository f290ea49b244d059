"""LF's modal-model programs, left out: reactorfed has no modes."""

from __future__ import annotations

_MODES = ("modal models: reactorfed has no modes (LF's `mode` blocks, `reset`/`history` transitions, "
          "mode-local timers, actions and state)")

LEFT_OUT: dict[str, str] = {
    f"modal_models/{name}.lf": _MODES
    for name in (
        "BanksCount3ModesComplex", "BanksCount3ModesSimple", "BanksModalStateReset", "ConvertCaseTest",
        "Count3Modes", "ModalActions", "ModalAfter", "ModalCycleBreaker", "ModalMultiport", "ModalMultiportBank",
        "ModalNestedReactions", "ModalStartupShutdown", "ModalStateReset", "ModalStateResetAuto", "ModalTimers",
        "MultipleOutputFeeder_2Connections", "MultipleOutputFeeder_ReactionConnections",
    )
}
LEFT_OUT["modal_models/util/TraceTesting.lf"] = "library of the modal-model programs (TraceTesting): " + _MODES
