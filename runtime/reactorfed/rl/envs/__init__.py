"""Environments: one copy (:mod:`.runner`), vectors of copies (:mod:`.vector`), and what
steps them (:mod:`.backends`: gymnasium or EnvPool, :mod:`.envpool_env`)."""
