"""iomodel: trace an MPI application's I/O once, model its I/O phases, and
predict its I/O time and cost on candidate clusters (the PAS2P-IO method)."""
__version__ = "0.1.0"
