# The seed's worked example: seed 003, "Kernel Principal Component Analysis
# from scratch with R" (the project's seed notes). Its 10 x 2
# toy data, column-centered, with kernlab's kpca(Xc, kernel = vanilladot()).
# The numbers below are kernlab's output as published in that seed: the one
# pasted reference of this suite.

seed003_eig <- c(1.15562494, 0.04417506)
seed003_rotated <- matrix(c(
   2.6182716,  0.55376322,
  -5.6212026, -0.45175422,
   3.1376040, -1.21550044,
   0.8671295, -0.41241542,
   5.2993494,  0.66249230,
   2.8869986, -0.55429176,
  -0.3134116,  1.10624283,
  -3.6194550, -0.14678426,
  -1.3852235, -0.05617669,
  -3.8700604,  0.51442443), ncol = 2, byrow = TRUE)
seed003_pcv <- matrix(c(
   0.22656759,  1.2535653,
  -0.48642101, -1.0226454,
   0.27150712, -2.7515536,
   0.07503555, -0.9335934,
   0.45857001,  1.4996976,
   0.24982141, -1.2547618,
  -0.02712053,  2.5042249,
  -0.31320326, -0.3322786,
  -0.11986791, -0.1271683,
  -0.33488896,  1.1645133), ncol = 2, byrow = TRUE)
# the seed's proportions of variance (from the covariance eigenvalues)
seed003_prop <- c(0.9631813, 0.03681869)

# |a - b| within half a unit of the last printed digit (per column).
expect_printed <- function(actual, published, decimals, label) {
  for (j in seq_len(ncol(published))) {
    err <- max(abs(actual[, j] - published[, j]))
    expect_lt(err, 0.5 * 10^-decimals[j] + 1e-12, label = paste(label, "column", j))
  }
}

test_that("seed 003: linear kernel on the centered toy data reproduces kernlab's published output", {
  Xc <- scale(fx_seed003(), scale = FALSE)
  fit <- kpca(Xc, kernel = "vanilladot")           # features = 0, th = 1e-4, as the seed
  expect_equal(length(fit$eig), 2L)
  expect_lt(max(abs(unname(fit$eig) - seed003_eig)), 0.5e-8 + 1e-12)
  expect_printed(align_signs(unname(fit$rotated), seed003_rotated), seed003_rotated,
                 c(7, 8), "rotated")
  expect_printed(align_signs(unname(fit$alpha), seed003_pcv), seed003_pcv, c(8, 7), "alpha")
  # the same with the seed's own call: a kernlab kernel object
  skip_if_not_installed("kernlab")
  fo <- kpca(Xc, kernel = kernlab::vanilladot())
  expect_lt(max(abs(unname(fo$eig) - seed003_eig)), 0.5e-8 + 1e-12)
  expect_printed(align_signs(unname(fo$rotated), seed003_rotated), seed003_rotated,
                 c(7, 8), "rotated (kernel object)")
})

test_that("seed 003: proportions of variance as published", {
  fit <- kpca(scale(fx_seed003(), scale = FALSE), kernel = "vanilladot", features = 2)
  imp <- summary(fit)$importance
  expect_lt(abs(imp[2, 1] - seed003_prop[1]), 0.5e-7 + 1e-12)
  expect_lt(abs(imp[2, 2] - seed003_prop[2]), 0.5e-8 + 1e-12)
})

test_that("seed 003: uncentered data give the same fit (centering in feature space)", {
  X <- fx_seed003()
  fit <- kpca(X, kernel = "vanilladot", features = 2)
  expect_lt(max(abs(unname(fit$eig) - seed003_eig)), 0.5e-8 + 1e-12)
  expect_printed(align_signs(unname(fit$rotated), seed003_rotated), seed003_rotated,
                 c(7, 8), "rotated (uncentered)")
})

# --- the walkthrough, verbatim (fixtures/seed003.R) ------------------------

# The published output in the fixture: each run of "## " lines after a code
# line is the output of that code line.
seed_published_blocks <- function(lines) {
  is_out <- grepl("^##", lines)
  runs <- rle(is_out)
  ends <- cumsum(runs$lengths)
  starts <- ends - runs$lengths + 1L
  lapply(which(runs$values), function(r) sub("^## ?", "", lines[starts[r]:ends[r]]))
}

# Run the code of the fixture in a fresh R session, one top-level expression
# at a time, as the console would: the printed output of each expression that
# prints something.
seed_run_blocks <- function(code) {
  callr::r(function(code) {
    grDevices::pdf(NULL)
    env <- new.env(parent = globalenv())
    blocks <- list()
    for (e in parse(text = code)) {
      out <- utils::capture.output({
        res <- withVisible(eval(e, env))
        if (res$visible) print(res$value)
      })
      if (length(out)) blocks[[length(blocks) + 1L]] <- out
    }
    grDevices::dev.off()
    blocks
  }, args = list(code = code), libpath = .libPaths(),
  env = c(callr::rcmd_safe_env(), R_TESTS = ""))
}

# The printed numbers of a block, as a matrix: one column per column of a
# printed matrix (rows "[i,]"), else one column for the whole block. Labels
# ([1,], [,2], [1]) and names (Comp.1, PC1) are not numbers. Each number
# keeps its text, for the precision it was printed with.
seed_numbers <- function(block) {
  strip <- function(l) gsub("[A-Za-z][A-Za-z0-9._]*", " ", gsub("\\[[0-9]*,?[0-9]*\\]", " ", l))
  tokens <- function(l) regmatches(l, gregexpr("-?[0-9]+(\\.[0-9]+)?(e[-+]?[0-9]+)?", l))[[1]]
  rows <- grepl("^\\s*\\[[0-9]+,\\]", block)
  if (any(rows)) {
    tok <- lapply(strip(block[rows]), tokens)
    return(do.call(rbind, tok))
  }
  matrix(unlist(lapply(strip(block), tokens)), ncol = 1L)
}

# Half a unit in the last printed digit of each published number; numbers
# printed below 1e-12 are rounding noise of eigen() (they differ between
# BLAS builds) and only need to be that small.
seed_tolerance <- function(text) {
  mant <- sub("e.*$", "", text)
  decimals <- ifelse(grepl("\\.", mant), nchar(sub("^[^.]*\\.", "", mant)), 0L)
  expo <- ifelse(grepl("e", text), as.numeric(sub("^.*e", "", text)), 0)
  tol <- 0.5 * 10^(expo - decimals) + 1e-12
  ifelse(abs(as.numeric(text)) < 1e-12, 1e-12, tol)
}

test_that("seed 003: the walkthrough runs verbatim with library(fastkpca) and prints the published numbers", {
  skip_if_not_installed("callr")
  lines <- readLines(test_path("fixtures", "seed003.R"))
  expect_true(any(lines == "library(fastkpca)"))
  expect_false(any(grepl("kernlab", lines[!grepl("^#", lines)])))
  published <- seed_published_blocks(lines)
  ours <- seed_run_blocks(paste(lines, collapse = "\n"))
  expect_equal(length(ours), length(published))
  expect_equal(length(published), 18L)  # the printing lines of the page
  # pcv(kpc), eig(kpc) and rotated(kpc) are outputs 9 to 11
  expect_identical(dim(seed_numbers(published[[9]])), c(10L, 2L))
  expect_identical(as.numeric(seed_numbers(published[[10]])), c(1.15562494, 0.04417506))
  expect_identical(dim(seed_numbers(published[[11]])), c(10L, 2L))
  for (b in seq_along(published)) {
    label <- sprintf("output %d (%s)", b, published[[b]][1L])
    pub <- seed_numbers(published[[b]])
    got <- seed_numbers(ours[[b]])
    # TRUE / FALSE outputs print the same words
    words <- function(x) unlist(regmatches(x, gregexpr("TRUE|FALSE", x)))
    expect_identical(words(ours[[b]]), words(published[[b]]), label = label)
    expect_identical(dim(got), dim(pub), label = label)
    if (!identical(dim(got), dim(pub)) || length(pub) == 0L) next
    p <- matrix(as.numeric(pub), nrow(pub))
    g <- matrix(as.numeric(got), nrow(got))
    tol <- matrix(seed_tolerance(pub), nrow(pub))
    for (j in seq_len(ncol(p))) {
      s <- if (sum(g[, j] * p[, j]) < 0) -1 else 1   # up to the sign of the column
      expect_true(all(abs(s * g[, j] - p[, j]) <= tol[, j]),
                  label = paste(label, "column", j))
    }
  }
})
