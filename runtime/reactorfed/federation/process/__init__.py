"""The federation's processes and their drivers: the federate's driver (:mod:`.federate`,
configured by :mod:`.federate_config`, with :mod:`.inbound`, :mod:`.outputs`,
:mod:`.outbound`, :mod:`.join`, :mod:`.heartbeat`), the RTI's server (:mod:`.rti_server`),
running one of them in this process (:mod:`.runner`), a whole federation in threads
(:mod:`.threads`) or as local processes (:mod:`.launch`, with its fork server), and the
command-line subcommands (:mod:`.commands`).

The thin I/O layer around :mod:`..coordination`'s pure cores: it may import every other
layer; nothing below imports it.
"""
