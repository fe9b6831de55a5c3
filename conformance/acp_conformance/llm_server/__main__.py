"""``python -m acp_conformance.llm_server`` — the old name of ``python -m acp_scripted_llm``."""

import sys

from acp_scripted_llm.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
