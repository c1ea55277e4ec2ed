"""Write numbers into a CatBoost JSON model so that CatBoost reads back the same doubles.

CatBoost's JSON reader is RapidJSON's default number parser, not a correctly
rounded one: it reads a number's digits into a 64-bit integer (the digits of a
fraction only while that integer stays below 2^53, the further ones into a
double, times 10 plus the digit), turns it into a double and multiplies or
divides that by a power of ten taken from a table of doubles.  Rounding twice,
it reads about one in seven of Python's shortest round-trip decimals
(``repr``) one unit in the last place off; a model written with them predicts
to 1e-15, not bit for bit.

:func:`catboost_number` writes each double ``v`` as a decimal that this reader
reads as ``v`` *and* that a correctly rounding reader reads as ``v`` too:
``repr(v)`` when it reads back, else a significand of up to 40 more digits and
an exponent, found by bisection over the significands that round to ``v``
(:func:`read_like_catboost` is the reader, step by step).  About one double in
40,000 has no such decimal (the reader skips it); it is written as ``repr(v)``
and read one unit in the last place off.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction

__all__ = ["read_like_catboost", "catboost_number", "catboost_json_text"]

_POW10 = [float(f"1e{k}") for k in range(309)]  # RapidJSON's table: 1e0 .. 1e308
_NUMBER = re.compile(r"(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?")
_FAST = (1 << 53) - 1
#: how many more exponents than the shortest the search tries before giving up
SEARCH_EXPONENTS = 40


def _scale(d, p):
    if p < -308:
        return 0.0
    return d * _POW10[p] if p >= 0 else d / _POW10[-p]


def _finish(d, p):
    """The reader's last step: ``d`` times ten to the ``p`` (RapidJSON's
    ``StrtodNormalPrecision``)."""
    return _scale(_scale(d, -308), p + 308) if p < -308 else _scale(d, p)


def read_like_catboost(text):
    """The double CatBoost's JSON reader makes of the number ``text`` (RapidJSON's
    ``ParseNumber`` without ``kParseFullPrecisionFlag``, step by step).

    Examples
    --------
    >>> v = 0.1 + 0.02                      # repr: 0.12000000000000001, 17 digits
    >>> read_like_catboost(repr(v)) == v    # 12000000000000001 rounds, then / 1e17 rounds
    False
    >>> read_like_catboost(catboost_number(v)) == v == float(catboost_number(v))
    True
    """
    m = _NUMBER.fullmatch(text)
    if m is None:
        raise ValueError(f"not a JSON number: {text!r:.40}")
    minus, whole, frac, exp = m.group(1) == "-", m.group(2), m.group(3), m.group(4)
    i = i64 = 0
    use64 = use_double = False
    d = 0.0
    digits = 0  # significant digits read
    pos = 1
    if whole[0] != "0":
        i = int(whole[0])
        limit, last = (214748364, 8) if minus else (429496729, 5)  # 2^31, 2^32 - 1
        while pos < len(whole):
            c = int(whole[pos])
            if i >= limit and (i != limit or c > last):
                i64, use64 = i, True
                break
            i, digits, pos = i * 10 + c, digits + 1, pos + 1
        if use64:
            limit, last = ((0x0CCCCCCCCCCCCCCC, 8) if minus  # 2^63
                           else (0x1999999999999999, 5))  # 2^64 - 1
            while pos < len(whole):
                c = int(whole[pos])
                if i64 >= limit and (i64 != limit or c > last):
                    d, use_double = float(i64), True
                    break
                i64, digits, pos = i64 * 10 + c, digits + 1, pos + 1
        while use_double and pos < len(whole):
            d, pos = d * 10 + int(whole[pos]), pos + 1
    exp_frac = 0
    if frac is not None:
        q = 0
        if not use_double:
            if not use64:
                i64 = i
            while q < len(frac) and i64 <= _FAST:
                i64, exp_frac, q = i64 * 10 + int(frac[q]), exp_frac - 1, q + 1
                digits += i64 != 0
            d, use_double = float(i64), True
        for c in frac[q:]:
            if digits < 17:
                d, exp_frac = d * 10.0 + int(c), exp_frac - 1
                digits += d > 0.0
    p = 0
    if exp is not None:
        if not use_double:
            d, use_double = float(i64 if use64 else i), True
        p = int(exp)
    if not use_double:
        v = float(i64 if use64 else i)
        return -v if minus else v
    d = _finish(d, p + exp_frac)
    return -d if minus else d


def _exact_read(text):
    """Whether the reader's one rounding is the only one: a significand below 2^53 and
    a power of ten a double holds exactly (10^22 at most)."""
    m = _NUMBER.fullmatch(text)
    mantissa = (m.group(2) + (m.group(3) or "")).lstrip("0") or "0"
    p = int(m.group(4) or 0) - len(m.group(3) or "")
    return len(mantissa) <= 16 and int(mantissa) <= _FAST and -22 <= p <= 22


def _search(v):
    """A decimal read back as ``v`` by both readers, or None (see the module)."""
    a = Fraction(abs(v))
    sign = "-" if v < 0 else ""
    up = Fraction(math.nextafter(abs(v), math.inf)) - a
    down = a - Fraction(math.nextafter(abs(v), 0.0))
    e10 = math.floor(math.log10(abs(v)))
    whole = (1 << 63) if v < 0 else (1 << 64) - 1  # the significands a 64-bit integer keeps
    for k in range(16 - e10, 16 - e10 + SEARCH_EXPONENTS):
        scale = Fraction(10) ** k
        # the significands D with D / 10^k strictly inside v's rounding interval
        lo = math.floor((a - down / 2) * scale) + 1
        hi = math.ceil((a + up / 2) * scale) - 1

        def text(D, k=k):
            return f"{sign}{D}e{-k}"

        def read(D, k=k):  # |what the reader makes of text(D)|
            if D <= whole:  # one conversion to double, one power of ten
                return _finish(float(D), -k)
            return abs(read_like_catboost(text(D)))

        if lo > hi or read(hi) < abs(v):
            continue
        while lo < hi:  # the reader is monotone in D: the smallest D reading >= |v|
            mid = (lo + hi) // 2
            if read(mid) >= abs(v):
                hi = mid
            else:
                lo = mid + 1
        if read_like_catboost(text(lo)) == v:
            return text(lo)
    return None


def _number(v):
    """``(text, whether CatBoost reads it back as v)`` of a finite double."""
    text = repr(v)
    if v == 0.0 or _exact_read(text) or read_like_catboost(text) == v:
        return text, True
    found = _search(v)
    return (found, True) if found is not None else (text, False)


def catboost_number(v):
    """The JSON text of the finite double ``v`` that CatBoost reads back as ``v``
    (``repr(v)`` when no decimal is, see the module).

    Examples
    --------
    >>> catboost_number(0.5), catboost_number(-0.12000000000000001)
    ('0.5', '-120000000000000009e-18')
    """
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"a CatBoost model's numbers are finite, got {v!r}")
    return _number(v)[0]


def catboost_json_text(doc):
    """``(text, inexact)``: the JSON text of ``doc`` (dicts, lists, strings, booleans,
    None, ints and finite floats) with every float written by
    :func:`catboost_number`, and how many floats CatBoost reads back otherwise.

    Examples
    --------
    >>> catboost_json_text({"a": [0.5, 1, "x"], "b": None})
    ('{"a":[0.5,1,"x"],"b":null}', 0)
    """
    out, inexact = [], 0
    written = {}  # a pruned symmetric tree repeats its values: each is searched once

    def write(obj):
        nonlocal inexact
        if isinstance(obj, dict):
            out.append("{")
            for n, (key, value) in enumerate(obj.items()):
                out.append(("," if n else "") + json.dumps(str(key)) + ":")
                write(value)
            out.append("}")
        elif isinstance(obj, (list, tuple)):
            out.append("[")
            for n, value in enumerate(obj):
                if n:
                    out.append(",")
                write(value)
            out.append("]")
        elif isinstance(obj, float):
            key = obj if obj else repr(obj)  # 0.0 and -0.0 apart
            if key not in written:
                if not math.isfinite(obj):
                    raise ValueError(f"a CatBoost model's numbers are finite, got {obj!r}")
                written[key] = _number(float(obj))
            text, exact = written[key]
            inexact += not exact
            out.append(text)
        else:  # str, bool, None, int
            out.append(json.dumps(obj))

    write(doc)
    return "".join(out), inexact
