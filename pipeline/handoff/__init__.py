"""handoff and approve: bundles, the chain-of-custody check."""
