"""A value larger than a federate takes in one message is refused where it is sent,
naming the link, instead of being dropped by the receiver (which would then wait for ever
for a message the counts say was sent)."""

from __future__ import annotations

from reactorfed import ms
from reactorfed.federation import FederationError

from .harness import Federation
from .release_programs import Flood


def test_a_value_over_the_message_limit_ends_the_federation_naming_the_link() -> None:
    fed = Federation(lambda: Flood(count=1, mib=2))
    fed.start_all(timeout=ms(5), max_message=1 << 20, unix_sockets=False, shm_bytes=0)
    fed.wait(60)
    err = fed.errors.get("src")
    assert isinstance(err, FederationError), fed.errors
    assert "Flood.src.out -> Flood.sink.inp: a value of 2,097,152 bytes is larger" in str(err), err
    # the federation ended with the reason (the RTI was told), nobody waits
    assert "larger than a federate takes" in str(fed.rti_error), fed.rti_error
    assert "larger than a federate takes" in str(fed.errors.get("sink")), fed.errors
