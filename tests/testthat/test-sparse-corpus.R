# Sparse data against other programs and on a real corpus: kernlab and
# scikit-learn (on the same CSR matrix, written by Matrix::writeMM), and Jane
# Austen's novels as TF-IDF rows (helper-sparse.R) against their dense copy.
# (test-sparse.R holds the rest; this file is not part of the arm64 core
# run, whose emulated cores would spend minutes on the corpus.)

test_that("kernlab's kernels and scikit-learn agree with sparse fits", {
  skip_if_not_installed("kernlab")
  x <- random_sparse(40, 12, 0.25)
  xd <- as.matrix(x)
  kl <- kernlab::kpca(unname(xd), kernel = "rbfdot", kpar = list(sigma = 0.3), features = 3)
  fs <- kpca(x, kpar = list(sigma = 0.3), features = 3)
  expect_equal(unname(fs$eig), unname(kernlab::eig(kl)), tolerance = 1e-8)
  expect_cols_equal_up_to_sign(fs$rotated, kernlab::rotated(kl), tol = 1e-8)
  py <- sklearn_python()
  if (is.null(py)) skip("scikit-learn is not installed")
  script <- paste0(
    "from scipy.io import mmread\n",
    "from sklearn.decomposition import KernelPCA\n",
    "X = mmread(inp_mm).tocsr()\n",
    "k = KernelPCA(n_components=3, kernel='rbf', gamma=0.3, eigen_solver='arpack').fit(X)\n",
    "np.savetxt(out['eig'], k.eigenvalues_.reshape(1, -1), delimiter=',')\n")
  mm <- tempfile(fileext = ".mtx")
  on.exit(unlink(mm))
  Matrix::writeMM(x, mm)
  sk <- run_sklearn(py, paste0("inp_mm = r'", mm, "'\n", script), list(unused = matrix(0)),
                    "eig")
  expect_equal(unname(fs$eig), unname(drop(sk$eig)) / nrow(x), tolerance = 1e-8)
})

test_that("a real corpus: Austen's passages, sparse and dense", {
  skip_if_not_installed("janeaustenr")
  a <- austen_tfidf()
  expect_gt(nrow(a$x), 7000)
  # a slice of the corpus against its dense copy (the whole corpus dense is
  # 0.8 GB: bench/sparse.R compares it)
  rows <- seq(1, nrow(a$x), by = 12)
  x <- a$x[rows, ]
  x <- x[, Matrix::colSums(x != 0) > 0]
  fs <- kpca(x, kpar = list(sigma = 0.5), features = 5)
  fd <- kpca(as.matrix(x), kpar = list(sigma = 0.5), features = 5)
  expect_kpca_equal(fs, fd, tol = 1e-10)
  mf <- with_seed(1, kpca(x, kpar = list(sigma = 0.5), features = 5, solver = "matrix_free"))
  expect_kpca_equal(mf, fd, tol = 1e-8)
})
