# Reference fits for test/bench/accuracy.ts: forecast::ets() and forecast::auto.arima() with
# default arguments on each series, in one R process.
#
# Usage: Rscript accuracy.R <input> <output> <quantile levels, comma-separated> <label> [methods]
#
# methods: comma-separated subset of ets,auto.arima (default both).
#
# input:  one series a line: id,frequency,horizon,y1,y2,...,yn (train values, oldest first)
# output: tab-separated lines, written as each series finishes:
#           id  method  time   <elapsed (wall-clock) seconds of fit + forecast>
#           id  method  cpu    <CPU seconds (user + system) of fit + forecast>
#           id  method  error  <message>                  (on failure, instead of the lines below)
#           id  method  mean   f1,...,fh
#           id  method  q<tau> q1,...,qh                  (one line per quantile level)
#         method is "ets" or "auto.arima". Quantile tau < 0.5 is the lower bound of the
#         (1 - 2 tau) * 100 % interval, tau > 0.5 the upper bound of the (2 tau - 1) * 100 %
#         interval, tau = 0.5 the point forecast (the Gaussian median).
# stderr: progress, one line per series.

suppressPackageStartupMessages(library(forecast))

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 3) stop("usage: Rscript accuracy.R <input> <output> <levels> [label]")
input <- args[[1]]
output <- args[[2]]
taus <- as.numeric(strsplit(args[[3]], ",", fixed = TRUE)[[1]])
label <- if (length(args) >= 4) args[[4]] else "R"
if (any(!is.finite(taus)) || any(taus <= 0) || any(taus >= 1)) stop("quantile levels must be in (0, 1)")

# Interval levels (in %) R is asked for, and where each quantile is read from.
widths <- round(abs(2 * taus - 1) * 100, 10)
levels <- sort(unique(widths[widths > 0]))

fmt <- function(x) paste(sprintf("%.17g", as.numeric(x)), collapse = ",")

fit_one <- function(y, h, method) {
  t0 <- proc.time()
  fc <- suppressWarnings({
    fit <- if (method == "ets") ets(y) else auto.arima(y)
    forecast(fit, h = h, level = levels)
  })
  dt <- proc.time() - t0
  elapsed <- dt[["elapsed"]]
  cpu <- dt[["user.self"]] + dt[["sys.self"]]
  lower <- as.matrix(fc$lower)
  upper <- as.matrix(fc$upper)
  qs <- lapply(seq_along(taus), function(k) {
    if (widths[k] == 0) return(as.numeric(fc$mean))
    j <- match(widths[k], levels)
    if (taus[k] < 0.5) as.numeric(lower[, j]) else as.numeric(upper[, j])
  })
  list(elapsed = elapsed, cpu = cpu, mean = as.numeric(fc$mean), qs = qs)
}

lines <- readLines(input)
out <- file(output, open = "w")
methods <- if (length(args) >= 5) strsplit(args[[5]], ",", fixed = TRUE)[[1]] else c("ets", "auto.arima")
stopifnot(all(methods %in% c("ets", "auto.arima")))
totals <- c(ets = 0, auto.arima = 0)
started <- proc.time()[["elapsed"]]

for (i in seq_along(lines)) {
  parts <- strsplit(lines[[i]], ",", fixed = TRUE)[[1]]
  id <- parts[[1]]
  freq <- as.numeric(parts[[2]])
  h <- as.integer(parts[[3]])
  y <- ts(as.numeric(parts[-(1:3)]), frequency = freq)
  note <- character(0)
  for (method in methods) {
    t0 <- proc.time()
    res <- tryCatch(fit_one(y, h, method), error = function(e) e)
    if (inherits(res, "error")) {
      # The time spent until the failure still counts towards the method's time per series.
      dt <- proc.time() - t0
      elapsed <- dt[["elapsed"]]
      totals[[method]] <- totals[[method]] + elapsed
      msg <- gsub("[\t\r\n]+", " ", conditionMessage(res))
      writeLines(paste(id, method, "time", sprintf("%.6f", elapsed), sep = "\t"), out)
      writeLines(paste(id, method, "cpu", sprintf("%.6f", dt[["user.self"]] + dt[["sys.self"]]), sep = "\t"), out)
      writeLines(paste(id, method, "error", msg, sep = "\t"), out)
      note <- c(note, sprintf("%s FAILED", method))
      next
    }
    totals[[method]] <- totals[[method]] + res$elapsed
    writeLines(paste(id, method, "time", sprintf("%.6f", res$elapsed), sep = "\t"), out)
    writeLines(paste(id, method, "cpu", sprintf("%.6f", res$cpu), sep = "\t"), out)
    writeLines(paste(id, method, "mean", fmt(res$mean), sep = "\t"), out)
    for (k in seq_along(taus)) {
      writeLines(paste(id, method, sprintf("q%s", format(taus[k], digits = 15)), fmt(res$qs[[k]]), sep = "\t"), out)
    }
    note <- c(note, sprintf("%s %.2fs", method, res$elapsed))
  }
  flush(out)
  wall <- proc.time()[["elapsed"]] - started
  eta <- wall / i * (length(lines) - i)
  message(sprintf("[%s] %d/%d %s: %s | elapsed %.0fs, eta %.0fs", label, i, length(lines), id, paste(note, collapse = ", "), wall, eta))
}
close(out)
