from __future__ import annotations

import sys

from almanac.api.cli import main

sys.exit(main())
