import math

import pytest

from collector.ingest.values import BadValue, as_float, decode_value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"value": 0.5, "epoch": 1}', {"value": 0.5, "epoch": 1}),
        ("{'value': 0.5, 'epoch': 1}", {"value": 0.5, "epoch": 1}),
        ("  32 ", 32),
        ("True", True),
        ("None", None),
        ("(224, 224, 3)", (224, 224, 3)),
        ("categorical_cross_entropy", "categorical_cross_entropy"),
        ("", None),
        ("1\u00b2", "1\u00b2"),  # a digit that int() refuses: kept as written
    ],
)
def test_decode_value_accepts_what_logs_write(text, expected):
    assert decode_value(text) == expected


def test_decode_value_nan_is_a_float():
    assert math.isnan(decode_value("NaN"))


def test_decode_value_rejects_broken_structures():
    with pytest.raises(BadValue):
        decode_value('{"value": [unclosed')


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"value": 0.7, "epoch": 3}, 0.7),
        (21.8, 21.8),
        ({"BBOX": 0.38, "SEGM": 0.34}, 0.38),
        ("0.25", 0.25),
        (True, None),
        ("high", None),
        ([1, 2], None),
    ],
)
def test_as_float(value, expected):
    assert as_float(value) == expected
