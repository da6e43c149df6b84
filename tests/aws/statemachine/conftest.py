"""What the template tests share: template.yaml as plain JSON and a region for the SAM
translator's ARNs (a module may define its own, as the older ones do)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from cfnlint.decode import cfn_yaml
from support.template import REGION, TEMPLATE, plain


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return plain(cfn_yaml.load(str(TEMPLATE)))


@pytest.fixture(scope="module")
def region() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_DEFAULT_REGION", REGION)
        yield REGION
