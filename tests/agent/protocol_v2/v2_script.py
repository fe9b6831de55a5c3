"""The scripted model of the v2 protocol tests: prompt prefixes and what each makes it do."""

from __future__ import annotations

WRITE = "WRITE:"  # the model writes main.tf (asks for permission), then answers
SLOW = "SLOW:"  # streams for ~10 s unless interrupted
#: The model runs a long ``bash`` command (a shell and a background sleep, each writing its
#: pid into the workspace), then answers from the result.
LONG_BASH = "LONG_BASH:"
LONG_BASH_COMMAND = "echo $$ > shell.pid; sleep 300 & echo $! > sleep.pid; wait"
#: The model endpoint is overloaded once (HTTP 529, retried), then answers.
RETRY = "RETRY:"
#: The model endpoint refuses the request (HTTP 400, not retried): the turn fails.
FAIL = "FAIL:"
WRITTEN_TEXT = 'resource "aws_vpc" "main" {}\n'
FINAL_TEXT = "Wrote main.tf."
BASH = "BASH:"  # the model runs the rest of the prompt with bash (asks), then answers
RAN_TEXT = "Ran it."
#: The model asks the user which region (``ask_user``: a v2 form elicitation), then answers.
ASK = "ASK:"
ASK_CHOICES = ["eu-west-1", "us-east-1"]
