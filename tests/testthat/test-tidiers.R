# tidy(), augment(), glance() and autoplot() of R/tidiers.R. Oracles: the
# fit's own matrices, summary() and predict().

tidiers_fit <- function() {
  kpca(as.matrix(iris[, 1:4]), kernel = "rbfdot", kpar = list(sigma = 0.2),
       features = 3)
}

test_that("tidy() gives the scores and the component vectors in long form", {
  fit <- tidiers_fit()
  for (m in c("scores", "alpha")) {
    td <- tidy(fit, matrix = m)
    expect_s3_class(td, "data.frame")
    expect_identical(names(td), c("row", "PC", "value"))
    expect_identical(nrow(td), 150L * 3L)
    expect_identical(td$row, rep(1:150, each = 3))
    expect_identical(td$PC, rep(1:3, 150))
    ref <- if (m == "scores") fit$rotated else fit$alpha
    expect_identical(td$value, ref[cbind(td$row, td$PC)])
  }
  expect_identical(tidy(fit), tidy(fit, matrix = "scores"))
  # row names of the training data become the row labels
  named <- kpca(USArrests, kpar = list(sigma = 0.01), features = 2)
  td <- tidy(named)
  expect_identical(td$row, rep(rownames(USArrests), each = 2))
  expect_identical(td$value[td$row == "Texas" & td$PC == 2], unname(named$rotated["Texas", 2]))
  expect_error(tidy(fit, matrix = "loadings"), "'matrix' must be one of")
})

test_that("tidy(matrix = \"eigenvalues\") gives the proportions of summary()", {
  fit <- tidiers_fit()
  td <- tidy(fit, matrix = "eigenvalues")
  expect_identical(names(td), c("PC", "eigenvalue", "percent", "cumulative"))
  imp <- summary(fit)$importance
  expect_identical(td$PC, 1:3)
  expect_equal(td$eigenvalue, unname(imp["Eigenvalue", ]))
  expect_equal(td$percent, unname(imp["Proportion of Variance", ]))
  expect_equal(td$cumulative, unname(imp["Cumulative Proportion", ]))
})

test_that("glance() gives one row: n, kernel, features, variance", {
  fit <- tidiers_fit()
  gl <- glance(fit)
  expect_identical(nrow(gl), 1L)
  expect_identical(names(gl), c("n", "kernel", "features", "variance_total",
                                "proportion_explained"))
  expect_identical(gl$n, 150L)
  expect_identical(gl$kernel, "rbfdot(sigma = 0.2)")
  expect_identical(gl$features, 3L)
  expect_identical(gl$variance_total, fit$variance_total)
  expect_equal(gl$proportion_explained,
               unname(summary(fit)$importance["Cumulative Proportion", 3]))
})

test_that("the tidiers return tibbles when tibble is installed", {
  skip_if_not_installed("tibble")
  fit <- tidiers_fit()
  expect_s3_class(tidy(fit), "tbl_df")
  expect_s3_class(glance(fit), "tbl_df")
  expect_s3_class(augment(fit), "tbl_df")
})

test_that("augment() adds the scores to the data and to new data", {
  fit <- tidiers_fit()
  au <- augment(fit, data = iris)
  expect_identical(names(au), c(names(iris), paste0(".fittedPC", 1:3)))
  expect_identical(au$Species, iris$Species)
  expect_identical(unname(as.matrix(au[paste0(".fittedPC", 1:3)])), unname(fit$rotated))
  alone <- augment(fit)
  expect_identical(names(alone), paste0(".fittedPC", 1:3))
  # new data, with a column the fit does not use
  new <- iris[c(2, 60, 140), ]
  au_new <- augment(fit, newdata = new)
  expect_identical(names(au_new), c(".rownames", names(iris), paste0(".fittedPC", 1:3)))
  expect_identical(au_new$.rownames, c("2", "60", "140"))
  expect_equal(unname(as.matrix(au_new[paste0(".fittedPC", 1:3)])),
               unname(predict(fit, as.matrix(new[1:4]))))
  # named rows in a formula fit
  ff <- kpca(~ Murder + Assault, data = USArrests, kpar = list(sigma = 0.001), features = 2)
  au_f <- augment(ff, data = USArrests)
  expect_identical(au_f$.rownames, rownames(USArrests))
  expect_equal(unname(as.matrix(augment(ff, newdata = USArrests[1:5, ])[c(".fittedPC1", ".fittedPC2")])),
               unname(ff$rotated[1:5, ]))
  expect_error(augment(fit, data = iris[1:10, ]), "'data' must have the 150 rows")
})

test_that("augment() puts NA scores on rows the fit dropped for missing values", {
  x <- as.matrix(iris[1:40, 1:4])
  x[c(3, 17), 2] <- NA
  fit <- kpca(x, kpar = list(sigma = 0.2), features = 2)
  au <- augment(fit, data = as.data.frame(x))
  expect_identical(nrow(au), 40L)
  expect_true(all(is.na(au$.fittedPC1[c(3, 17)])))
  expect_identical(unname(as.matrix(au[-c(3, 17), c(".fittedPC1", ".fittedPC2")])),
                   unname(fit$rotated))
})

test_that("autoplot() builds the scores and scree plots", {
  skip_if_not_installed("ggplot2")
  fit <- kpca(~ x1 + x2, data = rings, kpar = list(sigma = 0.5), features = 4)
  p <- ggplot2::autoplot(fit, data = rings, colour = "ring")
  expect_s3_class(p, "ggplot")
  built <- ggplot2::ggplot_build(p)
  prop <- summary(fit)$importance["Proportion of Variance", ]
  expect_identical(p$labels$x, sprintf("Comp.1 (%.1f%%)", 100 * prop[1]))
  expect_identical(p$labels$y, sprintf("Comp.2 (%.1f%%)", 100 * prop[2]))
  expect_identical(p$labels$colour, "ring")
  expect_equal(built$data[[1]]$x, unname(fit$rotated[, 1]))
  expect_equal(built$data[[1]]$y, unname(fit$rotated[, 2]))
  # one colour per ring
  expect_identical(length(unique(built$data[[1]]$colour)), nlevels(factor(rings$ring)))
  p3 <- ggplot2::autoplot(fit, components = c(3, 1))
  expect_identical(p3$labels$x, sprintf("Comp.3 (%.1f%%)", 100 * prop[3]))
  expect_equal(ggplot2::ggplot_build(p3)$data[[1]]$x, unname(fit$rotated[, 3]))
  scree <- ggplot2::autoplot(fit, type = "scree")
  sb <- ggplot2::ggplot_build(scree)
  expect_equal(sb$data[[2]]$y, unname(prop))
  expect_error(ggplot2::autoplot(fit, components = c(1, 5)), "'components' must be")
  expect_error(ggplot2::autoplot(fit, data = rings, colour = "nope"), "not a column of 'data'")
  expect_error(ggplot2::autoplot(fit, data = rings[1:5, ], colour = "ring"),
               "one row per training row")
})

test_that("autoplot() of a kernel ICA fit draws one panel per source", {
  skip_if_not_installed("ggplot2")
  set.seed(1)
  s <- cbind(sin((1:300) / 10), ((1:300) %% 37) / 37 - 0.5, runif(300) - 0.5)
  fit <- kica(s %*% matrix(c(1, 0.5, 0.2, -0.3, 1, 0.4, 0.1, 0.2, 1), 3))
  p <- ggplot2::autoplot(fit)
  built <- ggplot2::ggplot_build(p)
  expect_equal(length(unique(built$data[[1]]$PANEL)), 3L)
  expect_equal(nrow(built$data[[1]]), 900L)
  # the values drawn are the sources
  expect_equal(built$data[[1]]$y, as.vector(fit$S))
  p2 <- ggplot2::autoplot(fit, sources = c(1, 3))
  expect_equal(length(unique(ggplot2::ggplot_build(p2)$data[[1]]$PANEL)), 2L)
  expect_error(ggplot2::autoplot(fit, sources = 4), "'sources' must be source numbers")
})
