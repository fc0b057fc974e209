"""The subcommands of benchmarks/adaptive.py (one module each, with its own ``main(argv)``)."""
