"""iomodel.models: the I/O model (see the analyzer issue)."""
