"""`make run`: start the workbench and its worker, then hand over to `streamlit run`.

Running Streamlit's own CLI in this process keeps every Streamlit setting
(STREAMLIT_* variables, .streamlit/config.toml, extra flags) working as usual,
while the worker is live from the start rather than from the first page view.
"""

from __future__ import annotations

import sys
from pathlib import Path

from streamlit.web import cli as streamlit_cli

from ui.runtime import start

HOME = Path(__file__).resolve().parent.parent / "Home.py"


def main() -> int:
    start()
    sys.argv = ["streamlit", "run", str(HOME), *sys.argv[1:]]
    return streamlit_cli.main()


if __name__ == "__main__":
    sys.exit(main())
