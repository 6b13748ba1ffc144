"""Benchmarks that print overhead and fidelity figures (not part of the test suite)."""
