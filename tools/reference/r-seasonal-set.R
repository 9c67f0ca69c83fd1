# The seasonal timing set of test/bench/arima-speed.ts: short monthly and quarterly series, the
# kind auto.arima() is most often run on, written to datasets/r-seasonal.csv.gz.
#
# Usage (from the repository root):  Rscript tools/reference/r-seasonal-set.R [output path]
#
# Series (33):
# - R's bundled example series (package datasets unless noted), as shipped with R 4.2.2 and
#   forecast 8.20:
#     monthly (freq 12): AirPassengers (144), USAccDeaths (72), ldeaths, mdeaths, fdeaths (72
#       each), nottem (240), UKDriverDeaths (192), co2 (468), forecast::wineind (176);
#     quarterly (freq 4): UKgas (108), JohnsonJohnson (84), austres (89), forecast::woolyrnq (119).
# - Simulated SARIMA series (set.seed(20240917), stats::arima.sim; parameters and lengths drawn
#   below, lengths 48 to 144):
#     sim-m01..sim-m10: monthly (1,0,1)(0,1,1)[12], ar in (0.2, 0.8), ma in (-0.5, 0.5),
#       sma in (-0.8, -0.2), innovations sd 1, plus a level of 100;
#     sim-q01..sim-q10: quarterly (0,1,1)(1,0,0)[4], ma in (-0.6, 0.4), sar in (0.3, 0.8),
#       innovations sd 1, plus a level of 50.
#
# File format (gzip CSV with a header, long format, one row per series and step):
#   unique_id  series name (above)
#   freq       seasonal period (12 or 4), the same on every row of a series
#   y          the value, printed with 17 significant digits so that it reads back as the same double
# Rows are grouped by series in the order above, each series oldest first. There is no time index
# and no train/test split: the benchmark forecasts 2 x freq steps past the end of each series.

suppressPackageStartupMessages(library(forecast))

args <- commandArgs(trailingOnly = TRUE)
out_path <- if (length(args) >= 1) args[[1]] else "datasets/r-seasonal.csv.gz"

series <- list()
add <- function(id, y) {
  stopifnot(is.ts(y), !anyNA(y))
  series[[length(series) + 1]] <<- list(id = id, freq = frequency(y), y = as.numeric(y))
}

add("AirPassengers", datasets::AirPassengers)
add("USAccDeaths", datasets::USAccDeaths)
add("ldeaths", datasets::ldeaths)
add("mdeaths", datasets::mdeaths)
add("fdeaths", datasets::fdeaths)
add("nottem", datasets::nottem)
add("UKDriverDeaths", datasets::UKDriverDeaths)
add("co2", datasets::co2)
add("wineind", forecast::wineind)
add("UKgas", datasets::UKgas)
add("JohnsonJohnson", datasets::JohnsonJohnson)
add("austres", datasets::austres)
add("woolyrnq", forecast::woolyrnq)

set.seed(20240917)
lengths <- function(k) sort(sample(48:144, k))
monthly_n <- lengths(10)
for (i in seq_along(monthly_n)) {
  n <- monthly_n[[i]]
  ar <- runif(1, 0.2, 0.8)
  ma <- runif(1, -0.5, 0.5)
  sma <- runif(1, -0.8, -0.2)
  # (1 + ma B)(1 + sma B^12) expanded, then one seasonal difference (diffinv at lag 12).
  theta <- c(ma, rep(0, 10), sma, ma * sma)
  w <- arima.sim(list(ar = ar, ma = theta), n = n - 12)
  y <- diffinv(as.numeric(w), lag = 12, xi = rnorm(12, sd = 3)) + 100
  add(sprintf("sim-m%02d", i), ts(y, frequency = 12))
}
quarterly_n <- lengths(10)
for (i in seq_along(quarterly_n)) {
  n <- quarterly_n[[i]]
  ma <- runif(1, -0.6, 0.4)
  sar <- runif(1, 0.3, 0.8)
  # (1 - sar B^4) as a sparse AR(4), one regular difference (arima.sim returns n + 1 values from 0).
  y <- arima.sim(list(order = c(4, 1, 1), ar = c(0, 0, 0, sar), ma = ma), n = n - 1) + 50
  add(sprintf("sim-q%02d", i), ts(as.numeric(y), frequency = 4))
}

con <- gzfile(out_path, "w")
writeLines("unique_id,freq,y", con)
for (s in series) writeLines(sprintf("%s,%d,%s", s$id, as.integer(s$freq), sprintf("%.17g", s$y)), con)
close(con)
message(sprintf("%s: %d series, %d rows", out_path, length(series), sum(vapply(series, function(s) length(s$y), 0L))))
