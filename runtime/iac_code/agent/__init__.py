"""The iac-code agent: ACP method handlers, sessions, prompt turns and conversation history."""
