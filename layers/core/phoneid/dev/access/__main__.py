import sys

from phoneid.dev.access.check import main

sys.exit(main())
