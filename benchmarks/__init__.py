"""privopt's performance harness: ``python -m benchmarks --size quick`` (see README.md here)."""
