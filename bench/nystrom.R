# Benchmark: centered Nystrom kernel PCA, kpca(x, landmarks = ...), against
# the exact fit and against scikit-learn's Nystroem + PCA, in one run.
#   Rscript bench/nystrom.R                # all parts
#   Rscript bench/nystrom.R accuracy       # part 1 only (likewise clusters,
#                                          # large, sklearn, syrk; several
#                                          # allowed)
# Data: Gaussian rows, d = 10, column j with standard deviation
# 2^(-(j - 1) / 4) (1 to 0.18), rbfdot with sigma = 0.05. The columns have
# different scales so that the leading kernel principal components have
# distinct eigenvalues (gaps of 24% or more between the first six): with
# isotropic data the first ten come as a near-tie, and single score columns
# are then defined only up to a rotation within the tie, for the exact fit
# as much as for any approximation.
#
# 1. accuracy: n = 20000 training and 2000 new rows, 10 features; the
#    exact fit against Nystrom with m = 50 ... 1000 uniform and k-means++
#    landmarks, and "auto" for 5, 10 and 20 features: time, largest relative error of the 10
#    eigenvalues, smallest |correlation| of the first 5 score columns with
#    the exact ones on the training rows and on the new rows (predict()).
#    Targets: eigenvalues within 1%, |r| >= 0.99.
# 1b. clusters: the same on 30 clusters of very unequal sizes, uniform
#    against k-means++ landmarks, m = 50, 100, 200, three seeds each.
# 2. large: n = 10^6, landmarks = "auto", in its own R process: time and
#    peak resident memory added by the fit (VmHWM). Targets: 60 s, 1.5 GB.
# 3. sklearn: n = 10^5, m = 500, 10 features: kpca(landmarks = 500) and
#    scikit-learn's Nystroem(n_components = 500) + PCA(10) (bench/
#    sklearn_nystrom.py, run with the python3 found on the PATH) on the same
#    data. Target: fastkpca at least 2x faster.
# 4. syrk: the rank-k update of pass 1 (src/nystrom.c) against R's
#    crossprod() (the BLAS dsyrk R is linked to) on a 8388 x 500 block,
#    and its share of one core's peak (AVX2 with FMA: 8 multiply-adds per
#    cycle).
# The machine may be shared: the load average is printed with each part.
args <- commandArgs(trailingOnly = TRUE)
here <- tryCatch(dirname(normalizePath(sub("^--file=", "",
  grep("^--file=", commandArgs(FALSE), value = TRUE)))), error = function(e) "bench")
suppressPackageStartupMessages(library(fastkpca))
d <- 10L
sigma <- 0.05
features <- 10L

bench_data <- function(n, seed) {
  set.seed(seed)
  x <- matrix(rnorm(n * d), n, d)
  sweep(x, 2L, 2^(-(seq_len(d) - 1) / 4), "*")
}

load_average <- function() {
  l <- tryCatch(readLines("/proc/loadavg", warn = FALSE), error = function(e) "")
  paste("load average", paste(strsplit(l, " ")[[1]][1:3], collapse = " "),
        "on", parallel::detectCores(), "cores")
}

vm_hwm <- function() {
  line <- grep("^VmHWM:", readLines("/proc/self/status"), value = TRUE)
  as.double(gsub("[^0-9]", "", line)) * 1024
}

# wall time, and the CPU time of this process (its threads included): on a
# shared machine the CPU time says what the fit costs without the others
elapsed <- function(expr) {
  t0 <- proc.time()
  value <- expr
  t1 <- proc.time() - t0
  list(value = value, seconds = t1[["elapsed"]],
       cpu = t1[["user.self"]] + t1[["sys.self"]])
}

# Child process of part 2: Rscript bench/nystrom.R child-large N OUT.rds
if (length(args) >= 1L && args[1L] == "child-large") {
  n <- as.integer(args[2L])
  x <- bench_data(n, 1)
  # a warm-up fit, so that loading and byte-compiling are not counted
  invisible(kpca(x[1:2000, ], kpar = list(sigma = sigma), features = features,
                 landmarks = "auto"))
  invisible(gc())
  before <- vm_hwm()
  set.seed(2)
  r <- elapsed(kpca(x, kpar = list(sigma = sigma), features = features,
                    landmarks = "auto"))
  after <- vm_hwm()
  saveRDS(list(seconds = r$seconds, cpu = r$cpu, added_bytes = after - before,
               m = nrow(r$value$landmarks), eig = unname(r$value$eig),
               threads = r$value$threads), args[3L])
  quit(save = "no")
}

parts <- if (length(args)) args else c("accuracy", "clusters", "large", "sklearn", "syrk")
results <- list()

# ---------------------------------------------------------------------------
if ("accuracy" %in% parts) {
  cat("== 1. accuracy at n = 20000 against the exact fit (", load_average(), ")\n",
      sep = "")
  n <- 20000L
  x <- bench_data(n, 1)
  new <- bench_data(2000L, 99)
  # 20 components, so that "auto" can be checked for features = 5, 10, 20
  ex <- elapsed(kpca(x, kpar = list(sigma = sigma), features = 20L))
  exact <- ex$value
  exact_new <- predict(exact, new)
  cat(sprintf("exact fit (%s solver, 20 components): %.1f s\n", exact$solver, ex$seconds))
  score <- function(fit, seconds, label) {
    k <- length(fit$eig)
    top <- seq_len(min(5L, k))
    eig_err <- max(abs(fit$eig / exact$eig[seq_len(k)] - 1))
    r_train <- min(abs(diag(cor(fit$rotated[, top], exact$rotated[, top]))))
    r_new <- min(abs(diag(cor(predict(fit, new)[, top], exact_new[, top]))))
    data.frame(landmarks = label, features = k, rule = fit$landmark_rule,
               m = nrow(fit$landmarks),
               seconds = round(seconds, 2), eig_err = signif(eig_err, 2),
               r_train = round(r_train, 5), r_new = round(r_new, 5),
               ok = eig_err <= 0.01 && r_train >= 0.99 && r_new >= 0.99)
  }
  rows <- list()
  for (m in c(50L, 100L, 200L, 500L, 1000L)) for (rule in c("uniform", "kmeans++")) {
    set.seed(m)
    r <- elapsed(kpca(x, kpar = list(sigma = sigma), features = features,
                      landmarks = m, landmark_rule = rule))
    rows[[length(rows) + 1L]] <- score(r$value, r$seconds, as.character(m))
  }
  for (k in c(5L, 10L, 20L)) {
    set.seed(3)
    r <- elapsed(kpca(x, kpar = list(sigma = sigma), features = k, landmarks = "auto"))
    rows[[length(rows) + 1L]] <- score(r$value, r$seconds, "auto")
  }
  acc <- do.call(rbind, rows)
  print(acc, row.names = FALSE)
  cat("eig_err: largest relative error of the eigenvalues; r_train, r_new: smallest\n",
      "|correlation| of score columns 1-5 with the exact fit's (training rows; 2000 new\n",
      "rows through predict()); ok: eig_err <= 1% and both |r| >= 0.99\n\n", sep = "")
  results$accuracy <- acc
}

# ---------------------------------------------------------------------------
if ("clusters" %in% parts) {
  cat("== 1b. uniform against k-means++ landmarks on clustered data (", load_average(),
      ")\n", sep = "")
  # 30 tight clusters (sd 0.3) with sizes falling by 0.8 from one to the
  # next: the 10th holds about 2.7% of the rows, the 30th 0.03%
  n <- 20000L
  set.seed(7)
  centers <- matrix(rnorm(30L * d, sd = 3), 30L, d)
  cluster_of <- function(n) sample.int(30L, n, replace = TRUE, prob = 0.8^(0:29))
  make <- function(n) { g <- cluster_of(n); centers[g, ] + matrix(rnorm(n * d, sd = 0.3), n, d) }
  x <- make(n)
  new <- make(2000L)
  ex <- elapsed(kpca(x, kpar = list(sigma = sigma), features = features))
  exact <- ex$value
  exact_new <- predict(exact, new)
  cat(sprintf("exact fit (%s solver): %.1f s\n", exact$solver, ex$seconds))
  rows <- list()
  for (m in c(50L, 100L, 200L)) for (rule in c("uniform", "kmeans++")) for (seed in 1:3) {
    set.seed(seed)
    r <- elapsed(kpca(x, kpar = list(sigma = sigma), features = features,
                      landmarks = m, landmark_rule = rule))
    fit <- r$value
    rows[[length(rows) + 1L]] <- data.frame(
      m = m, rule = rule, seed = seed, seconds = round(r$seconds, 2),
      eig_err = signif(max(abs(fit$eig / exact$eig - 1)), 2),
      r_train = round(min(abs(diag(cor(fit$rotated[, 1:5], exact$rotated[, 1:5])))), 4),
      r_new = round(min(abs(diag(cor(predict(fit, new)[, 1:5], exact_new[, 1:5])))), 4))
  }
  print(do.call(rbind, rows), row.names = FALSE)
  cat("\n")
}

# ---------------------------------------------------------------------------
if ("large" %in% parts) {
  cat("== 2. n = 10^6, landmarks = \"auto\", own process (", load_average(), ")\n", sep = "")
  out <- tempfile(fileext = ".rds")
  status <- system2(file.path(R.home("bin"), "Rscript"),
                    c(file.path(here, "nystrom.R"), "child-large", "1000000", out))
  if (status == 0 && file.exists(out)) {
    big <- readRDS(out)
    cat(sprintf(paste0("n = 10^6, m = %d (auto), %d threads: %.1f s (target 60 s; ",
                       "CPU time %.1f s), peak memory added %.2f GB (target 1.5 GB)\n"),
                big$m, big$threads, big$seconds, big$cpu, big$added_bytes / 1024^3))
    cat("eigenvalues:", signif(big$eig, 4), "\n")
    results$large <- big
  } else cat("the n = 10^6 case failed\n")
  cat("(", load_average(), " after the fit)\n\n", sep = "")
}

# ---------------------------------------------------------------------------
if ("sklearn" %in% parts) {
  cat("== 3. n = 10^5, m = 500: fastkpca against scikit-learn (", load_average(), ")\n",
      sep = "")
  n <- 100000L
  m <- 500L
  x <- bench_data(n, 1)
  set.seed(5)
  fk <- elapsed(kpca(x, kpar = list(sigma = sigma), features = features, landmarks = m))
  cat(sprintf("fastkpca kpca(landmarks = %d): %.1f s (%d threads; CPU time %.1f s)\n",
              m, fk$seconds, fk$value$threads, fk$cpu))
  # the first python on the PATH that has scikit-learn
  candidates <- unique(unlist(lapply(c("python3", "python"), function(p)
    tryCatch(suppressWarnings(system2("which", c("-a", p), stdout = TRUE, stderr = FALSE)),
             error = function(e) character()))))
  has_sklearn <- vapply(candidates, function(p)
    suppressWarnings(system2(p, c("-c", shQuote("import sklearn")), stdout = FALSE,
                             stderr = FALSE)) == 0, logical(1))
  python <- c(candidates[has_sklearn], NA)[1]
  sk <- NULL
  if (is.na(python)) {
    cat("no python with scikit-learn on the PATH: scikit-learn skipped\n")
  } else {
    data_file <- tempfile(fileext = ".f64")
    writeBin(as.vector(t(x)), data_file)   # row-major, as numpy reads it
    out <- system2(python, c(file.path(here, "sklearn_nystrom.py"), data_file, n, d,
                             sigma, m, features), stdout = TRUE)
    unlink(data_file)
    line <- grep("^seconds", out, value = TRUE)
    if (length(line) == 1L) {
      sk <- list(seconds = as.double(sub("^seconds ", "", line)),
                 cpu = as.double(sub("^cpu ", "", grep("^cpu", out, value = TRUE))),
                 eig = as.double(strsplit(sub("^eig ", "", grep("^eig", out, value = TRUE)),
                                          " ")[[1]]))
      cat(sprintf("scikit-learn %s Nystroem(%d) + PCA(%d): %.1f s (CPU time %.1f s; %s)\n",
                  sub("^version ", "", grep("^version", out, value = TRUE)), m, features,
                  sk$seconds, sk$cpu, python))
      cat(sprintf("speed ratio scikit-learn / fastkpca: %.1fx wall time (target 2x), %.1fx CPU time\n",
                  sk$seconds / fk$seconds, sk$cpu / fk$cpu))
      # both estimate the same eigenvalues (of Kc / n), from different landmarks
      cat("eigenvalues, relative difference (different random landmarks):",
          signif(max(abs(sk$eig / fk$value$eig - 1)), 2), "\n")
    } else {
      cat("scikit-learn failed:\n", paste(out, collapse = "\n"), "\n")
    }
  }
  results$sklearn <- list(fastkpca = fk$seconds, sklearn = sk$seconds)
  cat("\n")
}

# ---------------------------------------------------------------------------
if ("syrk" %in% parts) {
  cat("== 4. the rank-k update of pass 1 against R's BLAS (", load_average(), ")\n", sep = "")
  nb <- 8388L
  m <- 500L
  set.seed(1)
  xb <- matrix(rnorm(nb), nb, 1L)
  lm <- matrix(rnorm(m), m, 1L)
  prog <- fastkpca:::kernel_program(kern("vanilladot"))
  K <- tcrossprod(xb, lm)
  reps <- 3L
  own <- elapsed(for (i in seq_len(reps))
    p <- .Call(fastkpca:::C_nystrom_statistics, xb, lm, prog, list(), list(),
               numeric(m), nb, 1L, NULL))$seconds
  blas <- elapsed(for (i in seq_len(reps)) S <- crossprod(K))$seconds
  madds <- reps * as.double(nb) * m * (m + 1) / 2
  cat(sprintf(paste0("%d x %d block, 1 thread: fastkpca %.2f G multiply-adds/s, ",
                     "crossprod() %.2f G/s (%s)\n"),
              nb, m, madds / own / 1e9, madds / blas / 1e9,
              basename(extSoftVersion()[["BLAS"]])))
  cat(sprintf("largest difference relative to the largest entry: %.1e\n",
              max(abs(p$cross - S)[lower.tri(S, diag = TRUE)]) / max(abs(S))))
  # the share of one core's peak: 8 multiply-adds per cycle with AVX2 and
  # FMA (two 4-wide FMA units), at the clock /proc/cpuinfo reports
  cpuinfo <- tryCatch(readLines("/proc/cpuinfo"), error = function(e) character())
  mhz <- suppressWarnings(as.double(sub(".*: *", "",
                                        grep("^cpu MHz", cpuinfo, value = TRUE)[1])))
  if (length(mhz) == 1L && is.finite(mhz))
    cat(sprintf("one core's peak at %.0f MHz: %.1f G multiply-adds/s; the update runs at %.0f%% of it\n",
                mhz, 8 * mhz / 1e3, 100 * madds / own / 1e9 / (8 * mhz / 1e3)))
  cat("\n")
}
