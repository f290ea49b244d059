"""The federation's processes and their drivers: the federate's driver (:mod:`.federate`,
configured by :mod:`.federate_config`, with :mod:`.federate_receiver`,
:mod:`.federate_sender`, :mod:`.federate_links`, :mod:`.inbound`, :mod:`.outputs`,
:mod:`.outbound`, :mod:`.join`, :mod:`.heartbeat`), the RTI's server (:mod:`.rti_server`,
with :mod:`.rti_grants`, :mod:`.rti_members`, :mod:`.rti_status`), the shared defaults
(:mod:`.defaults`),
running one of them in this process (:mod:`.runner`), a whole federation in threads
(:mod:`.threads`) or as local processes (:mod:`.launch`, with its fork server), and the
command-line subcommands (:mod:`.commands`).

The thin I/O layer around :mod:`..coordination`'s pure cores: it may import every other
layer; nothing below imports it.
"""
