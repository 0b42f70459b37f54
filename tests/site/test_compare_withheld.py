"""Compare: pairs that are not like for like are left out of the tables, and counted."""

from collector.site.pages import compare


class Data:
    """The two tables the test reads; every other topic is empty."""

    snapshot = "snap"
    studies: dict = {}

    def __init__(self, rows):
        self._rows = rows

    def rows(self, table):
        return self._rows.get(table, [])


def test_withheld_pairs_are_counted_not_shown():
    row = {
        "kind": "measured", "source": "official", "scale": None, "round": "v1.0",
        "benchmark": "dlrm", "accelerators": 8, "precision": None, "interconnect": "nvswitch",
        "baseline_interconnect": "pcie", "gain": None, "gain_ci_low": None,
        "gain_ci_high": None, "within_noise": None, "confounders": None, "systems": "a",
        "baseline_systems": "b", "runs": 5, "baseline_runs": 5, "qualifiers": None,
        "withheld_reason": "different submitters: the systems differ in more than the link",
    }  # fmt: skip
    sheet = compare.page(Data({"interconnect_delta": [row, dict(row)]}))
    (topic,) = [t for t in sheet.rows["topics"] if t["table"] == "interconnect_delta"]
    assert topic["tables"] == []
    assert topic["withheld"] == [(row["withheld_reason"], 2)]
