# R's side of test/bench/arima-speed.ts: forecast::auto.arima(y) with its defaults, then
# forecast(fit, h = 2 * frequency, level = 80), on every series of the set, in one R process.
#
# Usage: Rscript arima-speed.R <input.csv.gz> <output> [reps]
#
# input:  datasets/r-seasonal.csv.gz (unique_id,freq,y; see tools/reference/r-seasonal-set.R)
# output: one tab-separated line per series, written as each finishes:
#           id  cpu  elapsed  p,d,q,P,D,Q,m  constant  mean  lo80  hi80
#         cpu / elapsed: seconds (user + system CPU / wall clock) of fit + forecast, the least
#         over reps runs; constant: "drift", "mean" or "none"; mean, lo80, hi80: the point
#         forecasts and the 80% interval bounds (the 0.1 and 0.9 quantiles), comma-separated.
#         On failure: id  cpu  elapsed  error  <message>.
# One fit on the first series before timing, so that loading and first-call costs are not counted.

suppressPackageStartupMessages(library(forecast))

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2) stop("usage: Rscript arima-speed.R <input.csv.gz> <output> [reps]")
reps <- if (length(args) >= 3) as.integer(args[[3]]) else 1L

d <- read.csv(gzfile(args[[1]]), stringsAsFactors = FALSE, colClasses = c("character", "integer", "numeric"))
ids <- unique(d$unique_id)
fmt <- function(x) paste(sprintf("%.17g", as.numeric(x)), collapse = ",")

run_one <- function(y, h) {
  fit <- auto.arima(y)
  fc <- forecast(fit, h = h, level = 80)
  list(fit = fit, fc = fc)
}

first <- d[d$unique_id == ids[[1]], ]
invisible(run_one(ts(first$y, frequency = first$freq[[1]]), 2 * first$freq[[1]]))

out <- file(args[[2]], open = "w")
for (id in ids) {
  rows <- d[d$unique_id == id, ]
  freq <- rows$freq[[1]]
  y <- ts(rows$y, frequency = freq)
  h <- 2 * freq
  cpu <- Inf
  elapsed <- Inf
  res <- NULL
  for (r in seq_len(reps)) {
    t0 <- proc.time()
    res <- tryCatch(suppressWarnings(run_one(y, h)), error = function(e) e)
    dt <- proc.time() - t0
    cpu <- min(cpu, dt[["user.self"]] + dt[["sys.self"]])
    elapsed <- min(elapsed, dt[["elapsed"]])
  }
  times <- c(sprintf("%.6f", cpu), sprintf("%.6f", elapsed))
  if (inherits(res, "error")) {
    writeLines(paste(c(id, times, "error", gsub("[\t\r\n]+", " ", conditionMessage(res))), collapse = "\t"), out)
  } else {
    a <- res$fit$arma # p, q, P, Q, m, d, D
    orders <- paste(a[c(1, 6, 2, 3, 7, 4, 5)], collapse = ",")
    coef <- names(res$fit$coef)
    constant <- if ("drift" %in% coef) "drift" else if ("intercept" %in% coef) "mean" else "none"
    writeLines(paste(c(id, times, orders, constant, fmt(res$fc$mean), fmt(res$fc$lower[, 1]), fmt(res$fc$upper[, 1])), collapse = "\t"), out)
  }
  flush(out)
  message(sprintf("[R] %s: %.3fs CPU", id, cpu))
}
close(out)
