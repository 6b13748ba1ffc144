"""Rules that turn inventory, snapshots and results into findings."""
