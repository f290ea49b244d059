"""What crosses the wire, as data: the protocol (:mod:`.protocol`, one namespace over
:mod:`.kinds`, :mod:`.messages`, :mod:`.membership` and :mod:`.data`; the HMAC challenge
included) and the payload codec (:mod:`.codec`).

Pure: no sockets, no clock, no threads. Imports only :mod:`reactorfed.time.tag` and the
serialisers (msgpack, numpy); everything else in the federation may import it.
"""
