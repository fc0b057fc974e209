"""The subcommands of benchmarks/integrations.py (one module each, with its own ``main(argv)``)."""
