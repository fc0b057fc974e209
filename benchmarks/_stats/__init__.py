"""The subcommands of benchmarks/stats.py (one module each, with its own ``main(argv)``)."""
