"""Strict reading of a library's JSON model document (XGBoost, CatBoost): the parse and
the field checks every JSON importer shares, each error naming the document and the
field.
"""

from __future__ import annotations

import json

__all__ = ["json_field", "json_object", "parse_json_object"]


def parse_json_object(text, what):
    """The JSON object in ``text``; ``what`` names the document in every error (e.g.
    ``"XGBoost model JSON"``).  Non-finite numbers, invalid or too deeply nested JSON and
    a document that is not an object are refused.

    Examples
    --------
    >>> parse_json_object('{"a": 1}', "demo JSON")
    {'a': 1}
    >>> parse_json_object('[1]', "demo JSON")
    Traceback (most recent call last):
    ...
    ValueError: demo JSON: the document must be a JSON object, got list
    """
    def refuse_constant(name):
        raise ValueError(f"{what}: contains the non-finite number {name}; a model's numbers "
                         "must be finite")

    try:
        doc = json.loads(text, parse_constant=refuse_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what}: not valid JSON ({exc.msg} at line {exc.lineno}, column "
                         f"{exc.colno}); is the file truncated?") from None
    except RecursionError:
        raise ValueError(f"{what}: nested too deeply to be a model") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{what}: the document must be a JSON object, got "
                         f"{type(doc).__name__}")
    return doc


def json_object(value, where, what):
    """``value`` when it is a JSON object, else a ValueError naming ``where``."""
    if not isinstance(value, dict):
        raise ValueError(f"{what}: {where} must be an object, got {type(value).__name__}")
    return value


def json_field(obj, key, where, what):
    """``obj[key]``, or a ValueError naming the missing field and ``where``."""
    if key not in obj:
        raise ValueError(f"{what}: {where} lacks the field {key!r}")
    return obj[key]
