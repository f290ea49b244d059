"""Time coordination, pure: the federation's :mod:`.layout` (federates, links, path
delays, zero-delay cycles), the RTI's logic (:mod:`.rti_core`) and a federate's
(:mod:`.federate_core`). State machines that take messages and return decisions: no
sockets, no clock reads, no threads, unit-tested without a network.

May import :mod:`reactorfed.time.tag`, :mod:`reactorfed.assembly.partition` (a program's federates and links)
and :mod:`..wire`; never :mod:`..io` or :mod:`..process`.
"""
