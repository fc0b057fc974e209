"""The subcommands of benchmarks/quantification.py (one module each, with its own ``main(argv)``)."""
