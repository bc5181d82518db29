"""``python -m heritage_pipeline.cli``: the same as the ``heritage-pipeline`` command."""

import sys

from . import main

sys.exit(main())
