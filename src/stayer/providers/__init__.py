"""Model clients: one small `Provider` contract (base.py) and one module per wire protocol.

Importing httpx also imports its optional command-line client (click, rich, pygments) whenever
those happen to be installed, which costs about a third of a second of start-up for a feature
stayer never uses. Marking that module as absent before httpx loads makes httpx take its own
fallback for a missing command-line client; everything else in httpx is unaffected.
"""

import sys

if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
