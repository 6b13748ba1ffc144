"""Benchmarks: targets, plans, write safety, the md-thread meter, the check pass, progress, the weakest-link report,
and the session that runs every step and stores it."""
