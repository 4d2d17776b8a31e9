"""The registered target kinds, one module each (imported by ``TARGET_KINDS``)."""
