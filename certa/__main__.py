"""``python -m certa``: the certa command."""
import sys

from .cli import main

sys.exit(main())
