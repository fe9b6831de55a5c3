"""The scripted model of the v2 protocol tests: prompt prefixes and what each makes it do."""

from __future__ import annotations

WRITE = "WRITE:"  # the model writes main.tf (asks for permission), then answers
SLOW = "SLOW:"  # streams for ~10 s unless interrupted
WRITTEN_TEXT = 'resource "aws_vpc" "main" {}\n'
FINAL_TEXT = "Wrote main.tf."
BASH = "BASH:"  # the model runs the rest of the prompt with bash (asks), then answers
RAN_TEXT = "Ran it."
