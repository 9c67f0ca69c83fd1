# Reference fixtures for the `aets` model (models/families/ets/aets.ts), produced by R's forecast::ets().
#
# Usage (from the project root; needs R with forecast and jsonlite):
#   Rscript tools/reference/ets-fixtures.R [path/to/m4-hourly.csv.gz]
# Writes test/fixtures/ets/r-reference.json and test/fixtures/ets/r-admissible.json.
#
# For every series it records what ets(y) with all defaults selects, its AICc, sigma2 and
# smoothing parameters, the AICc of every candidate structure the automatic search tries, and
# forecast(fit, h) with 80%/95% intervals.
#
# Intervals are recorded twice: `lower`/`upper` from forecast 8.20 as installed, and
# `lowerFixed`/`upperFixed` with class1() patched to put gamma on the newest seasonal state
# (G[p - m + 1, 1] instead of G[3, 1]), the fix later released in forecast. The two differ only for
# ETS(A,N,A) and ETS(M,N,A); our implementation follows the fixed formula.

suppressMessages({
  library(forecast)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = TRUE)
m4_path <- if (length(args) >= 1) args[1] else "datasets/m4-hourly.csv.gz"
out_path <- "test/fixtures/ets/r-reference.json"

stopifnot(packageVersion("forecast") == "8.20")

# A copy of class1 with the seasonal smoothing weight on the newest seasonal state.
class1_fixed <- forecast:::class1
body_text <- deparse(body(class1_fixed))
stopifnot(sum(grepl("G[3, 1]", body_text, fixed = TRUE)) == 1)
body(class1_fixed) <- parse(text = sub("G[3, 1]", "G[p - m + 1, 1]", body_text, fixed = TRUE))[[1]]
class1_orig <- forecast:::class1

intervals <- function(fit, h) {
  fc <- forecast(fit, h = h, level = c(80, 95))
  # I() keeps length-1 vectors as JSON arrays.
  list(mean = I(as.numeric(fc$mean)), lower = unname(lapply(1:2, function(i) I(as.numeric(fc$lower[, i])))),
       upper = unname(lapply(1:2, function(i) I(as.numeric(fc$upper[, i])))))
}

# Every structure ets(y) tries, with its AICc (null where etsmodel fails or declines).
candidates <- function(y) {
  n <- length(y)
  m <- frequency(y)
  if (n <= 6 || is.constant(y)) return(list())
  seasonal <- m > 1 && m <= 24 && n > m
  positive <- min(y) > 0
  out <- list()
  for (e in if (positive) c("A", "M") else "A") {
    for (t in c("N", "A")) {
      for (s in if (seasonal) c("N", "A", "M") else "N") {
        for (d in c(TRUE, FALSE)) {
          if (t == "N" && d) next
          if (e == "A" && s == "M") next
          name <- sprintf("ETS(%s,%s%s,%s)", e, t, if (d) "d" else "", s)
          # etsmodel() is what ets() calls per candidate (ets(y, model = ...) would take the
          # short-series route for some explicit models where the automatic search does not).
          aicc <- tryCatch(
            suppressWarnings(forecast:::etsmodel(
              y, e, t, s, d, lower = c(rep(1e-4, 3), 0.8), upper = c(rep(0.9999, 3), 0.98),
              opt.crit = "lik", nmse = 3, bounds = "both")$aicc),
            error = function(err) NA)
          out[[name]] <- if (is.finite(aicc)) aicc else NA
        }
      }
    }
  }
  out
}

reference <- function(name, y, h, note = "") {
  fit <- suppressWarnings(ets(y))
  assignInNamespace("class1", class1_orig, "forecast")
  as_installed <- intervals(fit, h)
  assignInNamespace("class1", class1_fixed, "forecast")
  fixed <- intervals(fit, h)
  assignInNamespace("class1", class1_orig, "forecast")
  cat(sprintf("%-28s n=%4d m=%3d %-12s aicc=%s\n", name, length(y), frequency(y),
              as.character(fit), format(fit$aicc)))
  list(
    name = name, note = note, m = frequency(y), h = h, y = I(as.numeric(y)),
    method = as.character(fit),
    aicc = if (is.null(fit$aicc)) NA else fit$aicc,
    sigma2 = fit$sigma2,
    par = as.list(fit$par[intersect(c("alpha", "beta", "gamma", "phi"), names(fit$par))]),
    candidates = I(candidates(y)),
    levels = c(80, 95),
    mean = as_installed$mean,
    lower = as_installed$lower, upper = as_installed$upper,
    lowerFixed = fixed$lower, upperFixed = fixed$upper
  )
}

m4 <- read.csv(gzfile(m4_path))
hourly <- function(id, n = NULL) {
  y <- m4$y[m4$unique_id == id & m4$split == "train"]
  if (!is.null(n)) y <- y[seq_len(n)]
  ts(y, frequency = 24)
}

set.seed(20240611)
counts <- ts(pmax(0, round(3 + 3 * sin(2 * pi * (1:60) / 12) + rnorm(60, sd = 1.5))), frequency = 12)
trend_noise <- ts(round(50 + 0.8 * (1:40) + cumsum(rnorm(40, sd = 1.2)), 2), frequency = 1)

cases <- list(
  reference("AirPassengers", AirPassengers, 24, "classic multiplicative seasonal, m = 12"),
  reference("UKgas", UKgas, 8, "quarterly, m = 4"),
  reference("WWWusage", WWWusage, 10, "non-seasonal with trend, m = 1"),
  reference("trend_noise", trend_noise, 10, "synthetic non-seasonal trending, m = 1"),
  reference("ldeaths_minus_2000", ldeaths - 2000, 24, "negatives: additive models only, m = 12"),
  reference("counts_with_zeros", counts, 24, "zeros: additive models only, m = 12"),
  reference("AirPassengers_first30", window(AirPassengers, end = c(1951, 6)), 24,
            "n < 3m: seasonal initial states from the Fourier regression"),
  reference("H1", hourly("H1"), 48, "M4 hourly, m = 24"),
  reference("H41", hourly("H41"), 48, "M4 hourly, m = 24, ETS(A,N,A)"),
  reference("H221", hourly("H221"), 48, "M4 hourly, m = 24"),
  reference("H341", hourly("H341"), 48, "M4 hourly, m = 24"),
  reference("H1_first40", hourly("H1", 40), 48, "m = 24 with n < 2m"),
  reference("H1_m168", ts(hourly("H1")[1:400], frequency = 168), 48,
            "m = 168 > 24: R ignores seasonality"),
  reference("boundary_m4", ts(c(60.04, 49.12, 39.6, 51.73, 59.64, 48.43, 40.4, 51.72, 58.53, 50.41,
                                38.87, 48.73, 57.04, 49.01, 40.87, 48.98, 60.45, 50.23, 36.36, 51.74,
                                60.05, 47.92, 40.88, 48.23, 60.14, 50.37, 38.84, 50.31, 60.99, 49.3,
                                39.72, 50.88, 58.8, 49.53, 39.62), frequency = 4), 8,
            paste("optimum at alpha, gamma ~ 1e-4 where R's polyroot places the root z = 1 at",
                  "|z| > 1 + 1e-10 and rejects admissible points: the simplex paths part")),
  reference("short_n10_m1", ts(c(10, 12, 11, 14, 13, 15, 17, 16, 18, 20), frequency = 1), 5, "n = 10"),
  reference("short_n10_m4", ts(c(10, 12, 11, 14, 13, 15, 17, 16, 18, 20), frequency = 4), 8, "n = 10, m = 4"),
  reference("short_n5", ts(c(10, 12, 11, 14, 13), frequency = 1), 5, "n = 5: least-squares Holt/SES route"),
  reference("short_n5_m12", ts(c(112, 118, 132, 129, 121), frequency = 12), 5, "n = 5, m = 12"),
  reference("short_n3", ts(c(5, 3, 8), frequency = 1), 5, "n = 3"),
  reference("short_n2", ts(c(10, 12), frequency = 1), 3, "n = 2"),
  reference("single", ts(42, frequency = 1), 3, "n = 1 (constant route)"),
  reference("constant", ts(rep(7.5, 30), frequency = 12), 12, "constant series")
)

dir.create(dirname(out_path), recursive = TRUE, showWarnings = FALSE)
write_json(cases, out_path, digits = NA, auto_unbox = TRUE, na = "null", pretty = FALSE)
cat("wrote", out_path, "\n")

# R's admissibility decisions (forecast:::admissible, polyroot based) on random seasonal
# parameter sets, half of them log-uniform towards the small values optimisation often ends at.
set.seed(42)
log_unif <- function(lo, hi) exp(runif(1, log(lo), log(hi)))
admissible_cases <- lapply(1:1000, function(i) {
  m <- sample(c(2, 3, 4, 7, 12, 24), 1)
  trend <- sample(0:2, 1) # none, additive, damped
  alpha <- if (runif(1) < 0.5) log_unif(1e-4, 0.9999) else runif(1, 0, 1.2)
  beta <- if (trend > 0) (if (runif(1) < 0.5) log_unif(1e-4, max(alpha, 1.1e-4)) else runif(1, -0.2, 1)) else NULL
  gamma <- if (runif(1) < 0.5) log_unif(1e-4, 0.9999) else runif(1, 0, 1.5)
  phi <- if (trend == 2) runif(1, 0.8, 0.98) else NULL
  list(m = m, trend = trend > 0, alpha = alpha, beta = if (is.null(beta)) 0 else beta,
       gamma = gamma, phi = if (is.null(phi)) 1 else phi,
       admissible = as.logical(forecast:::admissible(alpha, beta, gamma, phi, m)))
})
adm_path <- "test/fixtures/ets/r-admissible.json"
write_json(admissible_cases, adm_path, digits = NA, auto_unbox = TRUE, pretty = FALSE)
cat("wrote", adm_path, "\n")
