"""Deprecated location of the scripted LLM server: it now lives in ``acp_scripted_llm``.

Kept only so code written against the old name still imports; the submodules are the very
same module objects (registered under the old dotted names too), so classes compare equal
and ``isinstance`` checks hold across both names. New code imports ``acp_scripted_llm``.
"""

import sys

import acp_scripted_llm
from acp_scripted_llm import *  # noqa: F403  (the old public names)
from acp_scripted_llm import anthropic_wire, openai_wire, script, server

__all__ = acp_scripted_llm.__all__

for _module in (anthropic_wire, openai_wire, script, server):
    sys.modules[f"{__name__}.{_module.__name__.rsplit('.', 1)[-1]}"] = _module
