"""iomodel.cluster: the cluster side (descriptions, bandwidth profiles, characterize,
predict, compare).  It runs its measurements through iomodel.replay, never the reverse."""
