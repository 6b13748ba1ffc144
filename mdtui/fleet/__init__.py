"""Many hosts: benchmarks through fio client/server mode and fleet comparison."""
