import sys

from countgrid.cli._main import main

sys.exit(main())
