"""iomodel.replay: IOR generation, replay and prediction (see the replay issue)."""
