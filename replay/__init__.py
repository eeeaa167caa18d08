"""iomodel.replay: a model's phases run again, by IOR or iomodel's own replayer (IOR
generation, the backends, the runs and their results).  What a cluster is and what
a model would take there is iomodel.cluster's."""
