"""Bench row for the infrastructure-changing command classifier (SPEC §6, issue 33).

Every ``bash`` call is classified before the permission decision, so its cost is added to
every command the model runs. Measured in this process (the classifier is pure Python with
no I/O): each sample is one call on one of a set of commands shaped like what models run,
from a one-word ``ls`` to a long pipeline with substitutions, wrappers and a heredoc.
"""

from __future__ import annotations

import time

from iac_code.tools.infra_commands import classify_command

from .context import BenchContext
from .results import Row, at_most, ms_samples, summarize, timing_text

TARGET_S = 0.001  # ≤ 1 ms median per call
ROUNDS = 200

COMMANDS = (
    "ls -la",
    "terraform plan -out=tfplan -var-file=prod.tfvars",
    "terraform -chdir=envs/prod destroy -auto-approve",
    "cd infra && terraform init -backend=false && terraform validate",
    "kubectl -n prod get pods -o wide | grep -v Running | awk '{print $1}'",
    "kubectl apply -f deploy.yaml --dry-run=server",
    "sudo -u deploy env TF_LOG=debug timeout 600 nohup /usr/bin/terraform apply plan.tfplan",
    "bash -lc 'cd stacks && for d in */; do (cd \"$d\" && terragrunt run-all plan); done'",
    'echo "$(aws sts get-caller-identity --query Account --output text)"',
    "aws --profile prod ec2 describe-instances --filters Name=tag:env,Values=prod",
    "find . -name '*.tf' -exec terraform fmt -check {} \\;",
    "git status && git diff --stat && git log --oneline -5",
    'cat > main.tf <<\'EOF\'\nresource "null_resource" "x" {}\nEOF\nterraform fmt main.tf',
    "helm upgrade --install web ./chart -n prod --set image.tag=1.2.3",
    "pulumi --cwd infra preview --diff 2>&1 | tail -50",
    "grep -rn 'resource \"aws_' modules/ | wc -l",
)


def run(ctx: BenchContext, rounds: int = ROUNDS) -> list[Row]:
    samples: list[float] = []
    for _ in range(rounds):
        for command in COMMANDS:
            started = time.perf_counter()
            classify_command(command)
            samples.append(time.perf_counter() - started)
    summary = summarize(samples)
    return [
        Row(
            metric="infra_classifier",
            value=timing_text(summary),
            target="≤ 1 ms median per bash call",
            verdict=at_most(summary.median, TARGET_S),
            notes=f"{len(COMMANDS)} command shapes x {rounds} rounds, in process",
            data={"seconds": summary.as_dict(), "samples_ms": ms_samples(samples[:200])},
        )
    ]
