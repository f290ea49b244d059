"""The ``reactorfed`` command line: ``run``, ``rti``, ``federate`` and ``launch``."""
