#!/usr/bin/env python3
"""Download and unpack a tripleo-heat-templates source distribution (cached).

``python tools/fetch_tht.py VERSION [--cache-dir DIR]`` is ``tools/fetch_sdist.py
tripleo-heat-templates VERSION``: it prints the path of the template tree, in
``$TRIPLEO_FLOW_THT_CACHE`` or ``~/.cache/tripleo-flow/tht`` by default.
"""

from __future__ import annotations

import sys

from fetch_sdist import THT, main

if __name__ == "__main__":
    sys.exit(main(project=THT))
