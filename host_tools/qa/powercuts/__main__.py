"""`python -m host_tools.qa.powercuts`: the command line of cli.py."""

import sys

from host_tools.qa.powercuts.cli import main

sys.exit(main())
