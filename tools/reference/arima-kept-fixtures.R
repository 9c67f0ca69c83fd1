# Reference fixtures for test/models/aarima-reuse.test.ts: a model selected by
# forecast::auto.arima() on the start of a series, carried to the whole series with
# Arima(y, model = fit), as a backtest that refits only at some dates does. R keeps the orders, the
# coefficients and the residual variance of the first fit; the later observations only pass
# through the Kalman filter.
#
# Usage (from the repository root): Rscript tools/reference/arima-kept-fixtures.R
# Writes test/fixtures/arima-kept/kept-models.json.

suppressPackageStartupMessages({
  library(forecast)
  library(jsonlite)
})

out_path <- "test/fixtures/arima-kept/kept-models.json"
dir.create(dirname(out_path), showWarnings = FALSE, recursive = TRUE)

kept_case <- function(name, y, fit_length, h, note) {
  first <- ts(head(as.numeric(y), fit_length), start = start(y), frequency = frequency(y))
  fit <- auto.arima(first)
  kept <- Arima(y, model = fit)
  fc <- forecast(kept, h = h, level = c(80, 95))
  message(sprintf("%s: %s", name, paste(arimaorder(fit), collapse = ",")))
  list(
    name = name, note = note, m = frequency(y), y = I(as.numeric(y)), fit_length = fit_length, h = h,
    fit = list(
      arma = I(as.integer(fit$arma)), # p, q, P, Q, m, d, D
      coef = I(unname(as.numeric(fit$coef))),
      coef_names = I(as.character(names(fit$coef))),
      sigma2 = fit$sigma2
    ),
    kept = list(
      sigma2 = kept$sigma2,
      mean = I(as.numeric(fc$mean)),
      lower80 = I(as.numeric(fc$lower[, 1])), upper80 = I(as.numeric(fc$upper[, 1])),
      lower95 = I(as.numeric(fc$lower[, 2])), upper95 = I(as.numeric(fc$upper[, 2]))
    )
  )
}

set.seed(41)
drifting <- ts(20 + cumsum(0.8 + rnorm(70)), frequency = 1)
cases <- list(
  kept_case("usaccdeaths", USAccDeaths, 48, 12, "seasonal difference, no constant; fit on 1973-1976"),
  kept_case("airpassengers-log", log(AirPassengers), 120, 12, "m = 12, fit on the first ten years"),
  kept_case("lynx", lynx, 90, 10, "non-seasonal with a mean"),
  kept_case("wwwusage", WWWusage, 80, 10, "non-seasonal, d = 1"),
  kept_case("drift", drifting, 50, 8, "a random walk with drift: the drift column counts on")
)
writeLines(toJSON(cases, auto_unbox = TRUE, digits = NA, null = "null", na = "null"), out_path)
