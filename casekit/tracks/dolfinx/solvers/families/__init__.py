"""One module per family; each registers its solver with ``@family(name)``."""
