"""The watch dashboard: array and member throughput, utilisation, CPU and md threads, live."""
