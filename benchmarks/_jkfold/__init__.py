"""The subcommands of benchmarks/jkfold.py (one module each, with its own ``main(argv)``)."""
