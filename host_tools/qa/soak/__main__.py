"""`python -m host_tools.qa.soak`: the command line of cli.py."""

import sys

from host_tools.qa.soak.cli import main

sys.exit(main())
