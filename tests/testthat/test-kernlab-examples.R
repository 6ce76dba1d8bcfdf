# kernlab's own help-page examples, every topic of the installed kernlab
# that has them, in child R processes: kernlab alone (the reference), then
# kernlab attached before fastkpca (fastkpca's generators, kpca(), kcca()
# and accessors mask kernlab's) and after it (kernlab's mask fastkpca's).
# What the examples print and the values they assign must be kernlab's, to
# 1e-6, and no child may crash (helper-kernlab.R).
#
# What is compared, and why:
# - every top-level expression is run with the same seed in every child
#   (set from the topic's and the expression's numbers), so the examples
#   that draw random numbers without set.seed() (kcca's data, ksvm's cross
#   validation and probability model, kkmeans' and specc's starts, ...)
#   draw the same ones in every configuration: all their outputs are
#   compared, none is left out as random;
# - the numbers printed, where both configurations printed a value of one
#   class (a kernlab fit and the fastkpca fit that replaces it print
#   differently; their values are compared instead), and whether each
#   expression fails;
# - the value of each visible expression and of each variable the examples
#   assign, as numbers and strings: kernels by their class, name and
#   parameters (so kernlab's class is checked: "rbfkernel" for rbfdot();
#   not for kernelf() of fastkpca's kpca() fit, which is fastkpca's kernel
#   function in every session, see ?kern), kpca() fits by pcv(), eig() and
#   rotated(), kcca() fits by kcor(), xcoef() and ycoef() up to what
#   kernlab's problem leaves free (the order within each +-rho pair, which
#   kernlab's eigensolver leaves to rounding, and the sign of each column),
#   other S4 objects by their slots;
# - the kpca topics up to the sign of each eigenvector column (fastkpca's
#   kpca() fixes its signs by its own rule), printed numbers there in
#   absolute value.
# Run time: kernlab's examples take about 10 seconds of CPU per
# configuration on a laptop-class core (the slowest topics, specc, ksvm and
# rvm, about a second each), so the three children stay well within a
# minute; no topic is left out.

test_that("kernlab's help-page examples give kernlab's results with fastkpca attached either way", {
  skip_if_not_installed("kernlab")
  skip_if_not_installed("callr")
  skip_on_cran()
  examples <- kernlab_example_code()
  expect_gte(length(examples), 40L)  # kernlab 0.9-32 has 48 topics with examples
  configs <- c(kernlab_alone = "suppressMessages(library(kernlab))",
               kernlab_then_fastkpca = "suppressMessages({library(kernlab); library(fastkpca)})",
               fastkpca_then_kernlab = "suppressMessages({library(fastkpca); library(kernlab)})")
  ref <- run_kernlab_examples(configs[["kernlab_alone"]], examples)
  expect_setequal(names(ref), names(examples))
  for (config in names(configs)[-1]) {
    # a crashed child fails this configuration and names its topic
    res <- tryCatch(run_kernlab_examples(configs[[config]], examples),
                    error = function(e) conditionMessage(e))
    if (is.character(res)) {
      fail(res)
      next
    }
    differences <- kernlab_example_differences(res, ref, tol = 1e-6,
                                               sign_free_topics = c("kpca", "kpca-class"))
    expect(length(differences) == 0L,
           sprintf("%s differs from kernlab alone:\n%s", config,
                   paste(utils::head(differences, 30L), collapse = "\n")))
  }
})
