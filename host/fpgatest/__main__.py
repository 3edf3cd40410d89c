# SPDX-License-Identifier: BSD-2-Clause
"""python -m fpgatest"""

import sys

from fpgatest.cli import main

sys.exit(main())
