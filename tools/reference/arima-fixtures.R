# Reference fixtures for test/models/aarima.test.ts, from R's forecast::auto.arima() and Arima()
# (forecast 8.20, R 4.2 at the time of writing). Each fixture holds the series, what
# auto.arima(y) chose with its defaults, its forecasts with 80% and 95% intervals, and fixed-order
# Arima() fits (same estimator, no search) to check the estimator on its own.
#
# Usage (from the repository root):
#   Rscript tools/reference/arima-fixtures.R [path to m4-hourly.csv.gz] [path to m4-weekly.csv.gz]
# Writes test/fixtures/arima/<name>.json, one file per series.

suppressPackageStartupMessages({
  library(forecast)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = TRUE)
hourly_path <- if (length(args) >= 1) args[[1]] else "datasets/m4-hourly.csv.gz"
weekly_path <- if (length(args) >= 2) args[[2]] else "datasets/m4-weekly.csv.gz"
out_dir <- "test/fixtures/arima"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)

m4_series <- function(path, id) {
  d <- read.csv(gzfile(path), stringsAsFactors = FALSE)
  d <- d[d$unique_id == id & d$split == "train", ]
  list(y = d$y, m = d$freq[[1]])
}

# Everything a fit needs to be compared: orders, named coefficients, criteria, variances.
describe_fit <- function(fit) {
  list(
    arma = I(as.integer(fit$arma)), # p, q, P, Q, m, d, D
    coef = I(unname(as.numeric(fit$coef))),
    coef_names = I(as.character(names(fit$coef))),
    var_coef_diag = I(if (length(fit$var.coef)) unname(diag(fit$var.coef)) else numeric(0)),
    loglik = fit$loglik,
    aic = fit$aic,
    aicc = if (is.null(fit$aicc)) NA else fit$aicc,
    sigma2 = fit$sigma2,
    constant = isTRUE(fit$constant)
  )
}

describe_forecast <- function(fit, h) {
  fc <- forecast(fit, h = h, level = c(80, 95))
  list(
    h = h,
    mean = I(as.numeric(fc$mean)),
    lower80 = I(as.numeric(fc$lower[, 1])), upper80 = I(as.numeric(fc$upper[, 1])),
    lower95 = I(as.numeric(fc$lower[, 2])), upper95 = I(as.numeric(fc$upper[, 2]))
  )
}

# A fixed-order spec: orders plus how the constant enters ("none", "mean", "drift").
fixed_fit <- function(y, order, seasonal, constant, method = "CSS-ML") {
  fit <- Arima(y, order = order, seasonal = seasonal,
               include.mean = constant == "mean", include.drift = constant == "drift", method = method)
  c(list(order = I(order), seasonal = I(seasonal), constant = constant, method = method), describe_fit(fit))
}

make_fixture <- function(name, y, m, fixed = list(), h = NULL, note = "", approximation = NULL) {
  y <- ts(as.numeric(y), frequency = m)
  if (is.null(h)) h <- if (m > 1) 2 * m else 12
  t0 <- proc.time()[["elapsed"]]
  res <- tryCatch({
    # approximation NULL: auto.arima's own rule (n > 150 or m > 12).
    fit <- if (is.null(approximation)) auto.arima(y) else auto.arima(y, approximation = approximation)
    list(ok = TRUE, fit = fit)
  }, error = function(e) list(ok = FALSE, error = conditionMessage(e)))
  elapsed <- proc.time()[["elapsed"]] - t0
  out <- list(name = name, note = note, m = m, y = I(as.numeric(y)), r_seconds = elapsed)
  if (!is.null(approximation)) out$approximation <- approximation
  # The differencing tests on their own (NA where R would not run them).
  out$tests <- list(
    is_constant = is.constant(y),
    ndiffs = if (length(y) > 1) ndiffs(y) else NA,
    kpss_stat = if (length(y) > 2 && !is.constant(y)) urca::ur.kpss(y, type = "mu", use.lag = trunc(3 * sqrt(length(y)) / 13))@teststat else NA,
    nsdiffs = if (m > 1 && length(y) > 2 * m) nsdiffs(y) else NA,
    seas_strength = if (m > 1 && length(y) > 2 * m && !is.constant(y)) forecast:::seas.heuristic(y) else NA
  )
  if (res$ok) {
    fit <- res$fit
    out$auto <- describe_fit(fit)
    out$forecast <- describe_forecast(fit, h)
    out$forecast_h1 <- describe_forecast(fit, 1)
    # The chosen specification refitted by Arima(): isolates the estimator from the search.
    if (!isTRUE(fit$constant)) {
      a <- fit$arma
      nd <- a[6] + a[7]
      constant <- if ("drift" %in% names(fit$coef)) "drift" else if ("intercept" %in% names(fit$coef)) "mean" else "none"
      fixed <- c(list(list(order = c(a[1], a[6], a[2]), seasonal = c(a[3], a[7], a[4]), constant = constant)), fixed)
    }
  } else {
    out$auto_error <- res$error
  }
  out$fixed <- lapply(fixed, function(s) {
    r <- tryCatch(fixed_fit(y, s$order, s$seasonal, s$constant, if (is.null(s$method)) "CSS-ML" else s$method),
                  error = function(e) list(order = I(s$order), seasonal = I(s$seasonal), constant = s$constant, error = conditionMessage(e)))
    r
  })
  path <- file.path(out_dir, paste0(name, ".json"))
  writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, null = "null", na = "null"), path)
  message(sprintf("%s: %s (%.1fs)", name, if (res$ok) arimaorder_string(res$fit) else res$error, elapsed))
}

arimaorder_string <- function(fit) {
  if (isTRUE(fit$constant)) return("constant")
  a <- fit$arma
  sprintf("(%d,%d,%d)(%d,%d,%d)[%d] %s", a[1], a[6], a[2], a[3], a[7], a[4], a[5], paste(names(fit$coef), collapse = " "))
}

set.seed(20240611)

# Classic data sets.
make_fixture("airpassengers-log", log(AirPassengers), 12,
  fixed = list(list(order = c(0, 1, 1), seasonal = c(0, 1, 1), constant = "none"),
               list(order = c(2, 1, 0), seasonal = c(1, 1, 0), constant = "none"),
               list(order = c(1, 0, 0), seasonal = c(1, 1, 0), constant = "drift")),
  note = "n = 144, m = 12: exact ML search")
make_fixture("lynx", lynx, 1,
  fixed = list(list(order = c(2, 0, 0), seasonal = c(0, 0, 0), constant = "mean"),
               list(order = c(4, 0, 1), seasonal = c(0, 0, 0), constant = "mean"),
               list(order = c(2, 0, 0), seasonal = c(0, 0, 0), constant = "mean", method = "CSS")),
  note = "non-seasonal, d = 0 with a mean")
make_fixture("wwwusage", WWWusage, 1,
  fixed = list(list(order = c(1, 1, 1), seasonal = c(0, 0, 0), constant = "drift"),
               list(order = c(3, 1, 0), seasonal = c(0, 0, 0), constant = "none")),
  note = "non-seasonal, d = 1")
make_fixture("usaccdeaths", USAccDeaths, 12, note = "n = 72, m = 12, seasonal difference")

# M4 Hourly (m = 24, long: CSS approximation in the search, then ML refits).
for (id in c("H5", "H7")) {
  s <- m4_series(hourly_path, id)
  make_fixture(paste0("m4-", tolower(id)), s$y, s$m, h = 48, note = paste("M4 Hourly", id))
}
# M4 Hourly with n < 2m: no seasonal differencing is tried.
s <- m4_series(hourly_path, "H7")
make_fixture("m4-h7-short40", tail(s$y, 40), 24, h = 48, note = "last 40 values of M4 H7, m = 24 with n < 2m")
# M4 Weekly, m = 52 (approximation because m > 12) and n < 2m.
s <- m4_series(weekly_path, "W295")
make_fixture("m4-w295", s$y, s$m, h = 13, note = "M4 Weekly W295, n = 80 < 2m")

# Simulated series for the corners.
set.seed(8)
make_fixture("needs-d2", 50 + cumsum(cumsum(rnorm(100))), 1, note = "integrated twice: ndiffs gives d = 2")
set.seed(7)
make_fixture("needs-d2-ar", 50 + cumsum(cumsum(rnorm(100))), 1, note = "integrated twice, AR terms chosen")
set.seed(20240611)
make_fixture("ar1-mean", as.numeric(arima.sim(list(ar = 0.6), n = 80)) + 10, 1, note = "stationary AR(1) around 10")
make_fixture("seasonal-trend-m4", 20 + 0.3 * (1:60) + rep(c(3, -1, -4, 2), 15) + rnorm(60), 4,
  note = "quarterly-like, trend plus season")
make_fixture("constant", rep(7.25, 30), 1, note = "constant series: forecasts repeat it with zero width")
make_fixture("constant-seasonal", rep(3, 50), 12, note = "constant series, m = 12")
make_fixture("linear-trend", 5 + 2 * (1:40), 1, note = "exact line: differenced data constant, drift fixed")
make_fixture("short-n10", c(12.1, 13.4, 12.9, 14.2, 15.0, 14.1, 15.8, 16.3, 15.9, 17.2), 1, note = "n = 10")
make_fixture("short-n10-m4", c(12.1, 13.4, 12.9, 14.2, 15.0, 14.1, 15.8, 16.3, 15.9, 17.2), 4, note = "n = 10, m = 4")
make_fixture("short-n5", c(3.1, 4.2, 3.8, 5.0, 4.6), 1, note = "n = 5")
make_fixture("short-n4", c(3.1, 4.2, 3.8, 5.0), 1, note = "n = 4")
make_fixture("short-n3", c(3.1, 4.2, 3.8), 1, note = "n = 3 (AIC instead of AICc)")
make_fixture("short-n2", c(3.1, 4.2), 1, note = "n = 2")
make_fixture("short-n1", c(3.1), 1, note = "n = 1: a constant series")
make_fixture("short-n4-m24", c(3.1, 4.2, 3.8, 5.0), 24, note = "n = 4, m = 24")
# approximation = FALSE (model_config approximation "off"): every candidate by its ML fit, on
# series long enough (n > 150) that auto.arima would otherwise approximate.
set.seed(23)
make_fixture("exact-monthly-n180", 50 + 0.2 * (1:180) + 8 * sin(2 * pi * (1:180) / 12) + 0.8 * cumsum(rnorm(180)) + rnorm(180, sd = 1.5), 12,
             note = "n = 180, m = 12, approximation = FALSE", approximation = FALSE)
make_fixture("exact-daily-n200", 50 + 0.1 * (1:200) + 5 * sin(2 * pi * (1:200) / 7) + 0.8 * cumsum(rnorm(200)) + rnorm(200, sd = 1.5), 7,
             note = "n = 200, m = 7, approximation = FALSE", approximation = FALSE)

# Regression with ARIMA errors: two regressors, fixed-order fit (the estimator with xreg,
# including the rotation of several regressors onto their principal axes) and the search.
set.seed(31)
n <- 120
x1 <- rnorm(n)
x2 <- cumsum(rnorm(n)) / 4
yx <- 2 + 0.5 * x1 - 0.3 * x2 + as.numeric(arima.sim(list(ar = 0.5), n = n))
X <- cbind(x1 = x1, x2 = x2)
fit <- Arima(yx, order = c(1, 0, 0), xreg = X)
auto <- auto.arima(yx, xreg = X)
writeLines(toJSON(list(
  name = "xreg-regression", y = I(yx), xreg = list(x1 = I(x1), x2 = I(x2)),
  fixed = c(list(order = I(c(1, 0, 0)), seasonal = I(c(0, 0, 0)), constant = "mean"), describe_fit(fit)),
  fixed_ma = c(list(order = I(c(0, 0, 1)), seasonal = I(c(0, 0, 0)), constant = "none"),
               describe_fit(Arima(yx, order = c(0, 0, 1), xreg = X, include.mean = FALSE))),
  auto = describe_fit(auto)
), auto_unbox = TRUE, digits = NA, null = "null", na = "null"), file.path(out_dir, "xreg-regression.json"))
message("xreg-regression: ", arimaorder_string(auto))
