"""Prints template.yaml after the SAM transform, as JSON, the way cfn-lint
applies it (cfn-lint bundles SAM's translator). infra/deploy's tests read
what SAM will really deploy from it: stages, deployments, permissions."""
import json
import logging
import sys

logging.disable(logging.CRITICAL)

from cfnlint.decode import decode  # noqa: E402
from cfnlint.template.transforms._sam import Transform  # noqa: E402

template, problems = decode(sys.argv[1])
if problems:
    print("\n".join(str(p) for p in problems), file=sys.stderr)
    sys.exit(1)
transform = Transform(sys.argv[1], template, "us-east-1")
problems = transform.transform_template()
if problems:
    print("\n".join(str(p) for p in problems), file=sys.stderr)
    sys.exit(1)
json.dump(transform._template, sys.stdout, default=str)
