"""Heat's template validate API over plain HTTP (the endpoint of a launched Heat)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.core.plan.spelled import Spelling
from tripleo_flow.core.plan.stack_request import request_secrets


def _heat_message(body: bytes) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace").strip()[:2000]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"]).strip()
    return str(data.get("explanation") or data)[:2000] if isinstance(data, dict) else str(data)


def validate_template(endpoint: str, request: dict[str, Any], template_name: str,
                      timeout: float = 300.0) -> dict[str, Any]:
    """``POST {endpoint}/validate?show_nested=true`` and return Heat's answer.

    :param endpoint: Heat's API with the tenant (``http://127.0.0.1:8006/v1/admin``).
    :param template_name: the root template's name, for error messages.
    :raises InvalidTemplate: when Heat rejects the template (with Heat's message).
    :raises HeatError: when Heat cannot be reached or fails.
    """
    req = urllib.request.Request(
        f"{endpoint.rstrip('/')}/validate?show_nested=true",
        data=json.dumps(request, default=str).encode(), method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json",
                 "X-Auth-Token": "tripleo-flow"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - http only
            answer = json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()
        # a template can make Heat's message spell a secret the request holds
        message = Spelling.of(request_secrets(request)).mask(_heat_message(body))
        if exc.code == 400:
            raise exceptions.InvalidTemplate(
                template_name, f"Heat rejected the plan: {message}") from exc
        raise exceptions.HeatError(
            f"Heat failed to validate {template_name!r} (HTTP {exc.code}): {message}") from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise exceptions.HeatError(
            f"Cannot validate {template_name!r} with Heat at {endpoint}: {exc}") from exc
    if not isinstance(answer, dict):
        raise exceptions.HeatError(f"Heat answered validate with {type(answer).__name__}.")
    return answer
