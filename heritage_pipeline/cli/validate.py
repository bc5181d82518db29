"""``heritage-pipeline validate-config``: validate chunking.yaml and pipeline.yaml.
"""

from __future__ import annotations

import argparse

from heritage_pipeline.core.config import (
    ConfigError,
    load_chunking_config,
    load_pipeline_config,
)

from .console import console, err


# ------------------------------------------------------------------------------------------------ validate-config
def cmd_validate(args: argparse.Namespace) -> int:
    ok = True
    for path, loader in ((args.config, load_chunking_config), (args.pipeline_config, load_pipeline_config)):
        try:
            loader(path)
            console.print(f"{path}: OK")
        except ConfigError as exc:
            err.print(str(exc))
            ok = False
    return 0 if ok else 2
