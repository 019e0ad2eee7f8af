"""python -m host_tools.tableview: see the package's docstring."""

import sys

from host_tools.tableview.cli import main

sys.exit(main())
