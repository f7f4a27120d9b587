import sys

from phoneid_cli.main import main

sys.exit(main())
