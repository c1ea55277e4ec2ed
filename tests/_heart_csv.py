"""A real CSV with text columns for the command-line tests: UCI Cleveland heart disease
(bundled with prune_opt) with named columns, three categorical columns written as words
and a yes/no target."""

import csv
from importlib import resources

SEX = {"0.0": "female", "1.0": "male"}
CHEST_PAIN = {"1.0": "typical", "2.0": "atypical", "3.0": "non-anginal", "4.0": "asymptomatic"}
THAL = {"3.0": "normal", "6.0": "fixed", "7.0": "reversible", "?": ""}


def heart_names():
    text = (resources.files("prune_opt") / "data" / "heart-disease.cost").read_text()
    return [line.split(":")[0].strip() for line in text.splitlines() if ":" in line]


def write_heart_csv(path, *, rows=None, columns=None):
    """Write the table; ``rows`` keeps the first rows, ``columns`` reorders/subsets them.

    Returns the header written."""
    text = (resources.files("prune_opt") / "data" / "processed.cleveland.data").read_text()
    names = heart_names() + ["disease"]
    body = [line.split(",") for line in text.splitlines() if line.strip()]
    table = []
    for r in body[:rows]:
        rec = dict(zip(names, (v.strip() for v in r)))
        rec["sex"] = SEX[rec["sex"]]
        rec["cp"] = CHEST_PAIN[rec["cp"]]
        rec["thal"] = THAL[rec["thal"]]
        rec["disease"] = "no" if rec["disease"] == "0" else "yes"
        table.append(rec)
    header = columns or names
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows([[rec[c] for c in header] for rec in table])
    return header
