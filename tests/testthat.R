library(testthat)
library(fastkpca)

test_check("fastkpca")
