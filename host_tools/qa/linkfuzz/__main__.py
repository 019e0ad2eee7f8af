"""`python -m host_tools.qa.linkfuzz`: the command line of cli.py."""

import sys

from host_tools.qa.linkfuzz.cli import main

sys.exit(main())
