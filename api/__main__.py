from __future__ import annotations

import sys

from api.cli import main

sys.exit(main())
