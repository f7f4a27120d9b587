import sys

from phoneid_dev.access.check import main

sys.exit(main())
