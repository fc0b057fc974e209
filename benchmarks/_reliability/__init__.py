"""The subcommands of benchmarks/reliability.py (one module each, with its own ``main(argv)``)."""
