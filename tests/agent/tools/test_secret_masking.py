"""Credential shapes are masked, references and ordinary values are not (SPEC §6)."""

from __future__ import annotations

import pytest
from iac_code.tools.secret_masking import MASK, mask_json, mask_secrets, overwrites_a_masked_value

MASKED = [
    ('db_password = "hunter2-prod"', 'db_password = "***masked***"'),
    ("DB_PASSWORD=hunter2-prod", "DB_PASSWORD=***masked***"),
    ("export API_KEY=abcd1234efgh", "export API_KEY=***masked***"),
    ("password: hunter2-prod", "password: ***masked***"),
    ('"client_secret": "abcd1234"', '"client_secret": "***masked***"'),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG", "aws_secret_access_key = ***masked***"),
    ("key AKIAIOSFODNN7EXAMPLE here", "key ***masked*** here"),
    ("LTAI5tAbCdEfGhIjKlMn", MASK),
    ("AIza" + "B" * 35, MASK),
    ("ghp_" + "a1" * 18, MASK),
    ("xoxb-1234567890-abcdef", MASK),
    ("sk-ant-api03-" + "x" * 30, MASK),
    ("Authorization: Bearer abc.def-ghi_123", "Authorization: Bearer ***masked***"),
    ("eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4", MASK),
    ("main.tf:3:token = s3cr3tvalue", "main.tf:3:token = ***masked***"),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
        "-----END OPENSSH PRIVATE KEY-----",
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{MASK}\n-----END OPENSSH PRIVATE KEY-----",
    ),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx1234567\nAAAAbbbbCCCCdddd1234\n(cut)",
        f"-----BEGIN RSA PRIVATE KEY-----\n{MASK}\n(cut)",
    ),
]
UNTOUCHED = [
    "password = var.db_password",
    "password = random_password.db.result",
    'api_key = "${var.api_key}"',
    "password: ${DB_PASSWORD}",
    "MasterUserPassword: !Ref DbPassword",
    "secret_arn = aws_secretsmanager_secret.db.arn",
    "max_tokens = 4096",
    "token_count = 5",
    "manage_master_user_password = true",
    'variable "db_password" {',
    "ssh-rsa AAAAB3NzaC1yc2E user@host",
    "-----BEGIN PUBLIC KEY-----",
    'region = "eu-west-1"',
]


@pytest.mark.parametrize(("text", "expected"), MASKED)
def test_credential_shapes_are_masked(text: str, expected: str) -> None:
    assert mask_secrets(text) == expected


@pytest.mark.parametrize("text", UNTOUCHED)
def test_references_and_ordinary_values_stay(text: str) -> None:
    assert mask_secrets(text) == text


def test_json_is_masked_everywhere_and_keeps_its_shape() -> None:
    value = {"a": ["password=hunter2-prod", 3, None], "b": {"c": "AKIAIOSFODNN7EXAMPLE"}}
    assert mask_json(value) == {"a": [f"password={MASK}", 3, None], "b": {"c": MASK}}


def test_a_long_line_without_spaces_is_masked_in_linear_time() -> None:
    text = "a." * 200_000 + " password=hunter2-prod"
    assert mask_secrets(text).endswith(f"password={MASK}")


def test_writing_the_mask_over_a_file_without_it_is_refused() -> None:
    assert overwrites_a_masked_value(f"x = {MASK}", "x = 1") is not None
    assert overwrites_a_masked_value(f"x = {MASK}", None) is not None
    assert overwrites_a_masked_value(f"x = {MASK}", f"y = {MASK}") is None
    assert overwrites_a_masked_value("x = 1", "x = 2") is None
