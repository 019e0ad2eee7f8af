"""python -m host_tools.view.tableview: see the package's docstring."""

import sys

from host_tools.view.tableview.cli import main

sys.exit(main())
