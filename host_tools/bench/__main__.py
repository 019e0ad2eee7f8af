import sys

from host_tools.bench import main

sys.exit(main())
