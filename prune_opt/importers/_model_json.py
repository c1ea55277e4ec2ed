"""Strict reading of a library's JSON model document (XGBoost, CatBoost): the parse and
the field checks every JSON importer shares, each error naming the document and the
field.
"""

from __future__ import annotations

import json

from ._guards import model_text

__all__ = ["json_field", "json_object", "parse_json_object", "load_json_document"]


def load_json_document(data, what, how_to_save):
    """The JSON object of a model's ``data`` (str, or UTF-8 bytes; a byte-order mark is
    dropped, see :func:`~._guards.model_text`), parsed by :func:`parse_json_object`."""
    return parse_json_object(model_text(data, what, how_to_save), what)


def parse_json_object(text, what):
    """The JSON object in ``text``; ``what`` names the document in every error (e.g.
    ``"XGBoost model JSON"``).  Non-finite numbers, invalid or too deeply nested JSON, a
    key given twice in one object (``json`` would keep the last without a word, the
    library reading the file perhaps another) and a document that is not an object are
    refused.

    Examples
    --------
    >>> parse_json_object('{"a": 1}', "demo JSON")
    {'a': 1}
    >>> parse_json_object('[1]', "demo JSON")
    Traceback (most recent call last):
    ...
    ValueError: demo JSON: the document must be a JSON object, got list
    >>> parse_json_object('{"a": 1, "a": 2}', "demo JSON")
    Traceback (most recent call last):
    ...
    ValueError: demo JSON: an object gives the key 'a' twice; JSON readers keep one of the two without a word, so which one the model means is unknown: remove the other (or save the model again)
    """
    def refuse_constant(name):
        raise ValueError(f"{what}: contains the non-finite number {name}; a model's numbers "
                         "must be finite")

    def refuse_twice(pairs):
        obj = dict(pairs)
        if len(obj) < len(pairs):
            seen = set()
            key = next(k for k, _ in pairs if k in seen or seen.add(k))
            raise ValueError(f"{what}: an object gives the key {key[:60]!r} twice; JSON "
                             "readers keep one of the two without a word, so which one the "
                             "model means is unknown: remove the other (or save the model "
                             "again)")
        return obj

    try:
        doc = json.loads(text, parse_constant=refuse_constant, object_pairs_hook=refuse_twice)
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
