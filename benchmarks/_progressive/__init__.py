"""The subcommands of benchmarks/progressive.py (one module each, with its own ``main(argv)``)."""
