"""``python -m tools.licences``: the licence check (tools/licences/__init__.py)."""

import sys

from tools.licences import main

sys.exit(main())
