"""gating.*: a client that advertises nothing — the agent must not call fs/* or terminal/*.

Its scenario doubles as the baseline traffic for the run-wide judges: it is always run when
any of them is selected."""

from __future__ import annotations

from ..harness.client_side import ClientSide
from ..outcomes import Outcome, failed, passed
from ..requirements import check
from ..scenarios.catalog import BASELINE
from ..scenarios.check_context import CheckContext, text_prompt

NEEDS_CAPABILITY = ("fs/", "terminal/")


@check("gating.no-unadvertised-client-methods", scenario=BASELINE)
async def no_fs_or_terminal_calls_without_capabilities(ctx: CheckContext) -> Outcome:
    client = ClientSide(ctx.work, fs_read=False, fs_write=False, terminal=False)
    turns = []
    tools = ctx.tools
    target = str(ctx.work / "gated.txt")
    if tools.write is not None:
        turns.append(
            {
                "content": [
                    {
                        "type": "tool_use",
                        "name": tools.write.name,
                        "input": tools.write.build(target, "gated\n"),
                    }
                ]
            }
        )
    if tools.shell is not None:
        turns.append(
            {
                "content": [
                    {
                        "type": "tool_use",
                        "name": tools.shell.name,
                        "input": tools.shell.build("echo gated"),
                    }
                ]
            }
        )
    turns.append({"content": [{"type": "text", "text": "Done."}]})
    run = await ctx.spawn(client=client, llm_script=turns, for_this_check=True)
    session_id = await ctx.new_session(run)
    response = await ctx.prompt_turn(
        run, text_prompt(session_id, "Write gated.txt, then run echo.")
    )
    calls = [c.method for c in client.calls if c.method.startswith(NEEDS_CAPABILITY)]
    if calls:
        return failed(
            f"without client capabilities the agent called {sorted(set(calls))}",
            frames=[response.frame.seq],
        )
    return passed(
        "no fs/terminal calls from a client without capabilities", frames=[response.frame.seq]
    )
