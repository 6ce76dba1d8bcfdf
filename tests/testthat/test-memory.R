# The memory a fit needs, checked before anything is allocated (R/memory.R).

test_that("fit_bytes() counts the n x n buffer and the n x features parts", {
  expect_equal(fastkpca:::fit_bytes(1000, 0),
               8 * (1000^2 + 1000 * (3 * 1 + 20 + 10)))
  expect_equal(fastkpca:::fit_bytes(1000, 50),
               8 * (1000^2 + 1000 * (3 * 50 + 110 + 10)))
  # no integer overflow for large n
  expect_gt(fastkpca:::fit_bytes(1e6, 5), 8e12)
})

test_that("check_memory() refuses a fit that cannot fit, with the amounts", {
  expect_error(fastkpca:::check_memory(1e5, 5, available = 1e9),
               "a fit on 100000 rows needs about 74\\.[0-9] GiB .* only 953\\.7 MiB")
  expect_error(fastkpca:::check_memory(1e5, 5, available = 1e9), "landmarks = \"auto\"")
  expect_equal(fastkpca:::check_memory(100, 2, available = 1e9),
               fastkpca:::fit_bytes(100, 2))
  # unknown available memory: only the impossible is refused
  expect_silent(fastkpca:::check_memory(1000, 2, available = NA))
  expect_error(fastkpca:::check_memory(1e10, 2, available = NA), "a fit on 10000000000 rows needs")
})

test_that("format_bytes() picks the unit", {
  expect_identical(fastkpca:::format_bytes(512), "512.0 bytes")
  expect_identical(fastkpca:::format_bytes(2048), "2.0 KiB")
  expect_identical(fastkpca:::format_bytes(3 * 1024^3), "3.0 GiB")
  expect_identical(fastkpca:::format_bytes(0), "0.0 bytes")
})

test_that("available_bytes() is a positive number or NA", {
  a <- fastkpca:::available_bytes()
  expect_length(a, 1L)
  expect_true(is.na(a) || a > 0)
})

test_that("available_bytes() names the reader that answered, NA where none does", {
  a <- fastkpca:::available_bytes()
  if (!is.na(a)) expect_true(attr(a, "reader") %in% names(fastkpca:::memory_readers))
  # on Linux, /proc/meminfo answers, and without it sysconf() does
  if (identical(Sys.info()[["sysname"]], "Linux")) {
    expect_identical(attr(a, "reader"), "meminfo")
    s <- fastkpca:::available_bytes("sysconf")
    expect_identical(attr(s, "reader"), "sysconf")
    expect_gt(s, 0)
  }
  # no reader: unknown
  none <- fastkpca:::available_bytes(character())
  expect_true(is.na(none))
  expect_true(is.na(attr(none, "reader")))
  # a reader of another system gives nothing here
  other <- switch(Sys.info()[["sysname"]], Darwin = "windows", Windows = "mach", "mach")
  expect_true(is.na(fastkpca:::available_bytes(other)))
})

test_that("with the memory unknown, a fit says so once per session and auto keeps the buffer", {
  x <- matrix(sin(1:600), 300, 2)
  old <- c(fastkpca:::set_tuning(memory_readers = character()),
           options(fastkpca.memory_limit = NULL))
  state <- fastkpca:::memory_unknown_noted
  noted <- state$done
  on.exit({
    options(old)
    state$done <- noted
  })
  state$done <- NULL
  expect_message(fit <- kpca(x, kpar = list(sigma = 0.5), features = 3),
                 class = "fastkpca_message_memory")
  # the rule of an unknown budget: the n x n buffer, as if it fit (with a
  # budget too small for it, auto goes matrix-free: test-matrix-free.R)
  expect_false(identical(fit$solver, "matrix_free"))
  expect_message(kpca(x, kpar = list(sigma = 0.5), features = 3), NA)
  # a budget set: nothing is read or said
  state$done <- NULL
  options(fastkpca.memory_limit = 1e5)
  expect_message(fit <- kpca(x, kpar = list(sigma = 0.5), features = 3), NA)
  expect_identical(fit$solver, "matrix_free")
})

test_that("a fit neither warns nor fails with /proc hidden, and reads the memory without it", {
  skip_on_os(c("windows", "mac", "solaris"))
  skip_if_not(proc_can_be_hidden(),
              paste("this system does not let a child process mount over /proc",
                    "(unshare, user namespaces)"))
  out <- run_child_r(c(
    "suppressPackageStartupMessages(library(fastkpca))",
    "said <- character()",
    "a <- withCallingHandlers({",
    "  fit <- kpca(matrix(sin(1:600), 300, 2), kpar = list(sigma = 0.5), features = 3)",
    "  fastkpca:::available_bytes()",
    "}, warning = function(w) {",
    "  said <<- c(said, conditionMessage(w)); invokeRestart('muffleWarning')",
    "}, message = function(m) {",
    "  said <<- c(said, conditionMessage(m)); invokeRestart('muffleMessage')",
    "})",
    "cat('proc:', file.exists('/proc/meminfo'), '\\n')",
    "cat('reader:', attr(a, 'reader'), '\\n')",
    "cat('positive:', isTRUE(a > 0), '\\n')",
    "cat(paste('said:', length(said), paste(said, collapse = ' | ')), '\\n')",
    "cat('components:', ncol(fit$rotated), '\\n')"), hide_proc = TRUE)
  expect_true("proc: FALSE " %in% out, info = paste(out, collapse = "\n"))
  expect_true("reader: sysconf " %in% out, info = paste(out, collapse = "\n"))
  expect_true("positive: TRUE " %in% out, info = paste(out, collapse = "\n"))
  expect_true("said: 0  " %in% out, info = paste(out, collapse = "\n"))
  expect_true("components: 3 " %in% out, info = paste(out, collapse = "\n"))
})

test_that("kernel_matrix() allocates its n x n result once, names included; predict() none", {
  x <- matrix(rnorm(600 * 3), 600, dimnames = list(paste0("r", 1:600), NULL))
  fit <- kpca(x, features = 3)
  f <- tempfile()
  on.exit(unlink(f))
  profiling <- tryCatch({ Rprofmem(f, threshold = 8 * 400^2); TRUE },
                        error = function(e) FALSE)
  skip_if_not(profiling, "R built without memory profiling")
  K <- kernel_matrix("rbfdot", x)
  C <- kernel_matrix("rbfdot", x, x[1:500, ])
  P <- predict(fit, x)
  Rprofmem(NULL)
  sizes <- as.numeric(sub(" :.*", "", grep("^[0-9]+ :", readLines(f), value = TRUE)))
  # one allocation of each result (8 bytes a value, and a small header);
  # predict() computes the kernel of the new rows panel by panel, never
  # the 600 x 600 cross matrix
  expect_equal(sum(sizes >= 8 * 600^2), 1L)
  expect_equal(sum(sizes >= 8 * 600 * 500 & sizes < 8 * 600^2), 1L)
  expect_identical(dimnames(K), list(rownames(x), rownames(x)))
  expect_identical(dimnames(C), list(rownames(x), rownames(x)[1:500]))
})

test_that("an exact fit writes its eigenvectors once and takes its scratch once, not per panel", {
  n <- 1000L
  x <- with_seed(1, matrix(rnorm(n * 10), n, 10))
  f <- tempfile()
  on.exit(unlink(f))
  fit <- kpca(x[1:100, ], kernel = "rbfdot", kpar = list(sigma = 0.1))
  for (rows in c(0, 1e9)) {  # two stages, then one
    old <- fastkpca:::set_tuning(band_min_rows = rows)
    profiling <- tryCatch({ Rprofmem(f, threshold = 65536); TRUE }, error = function(e) FALSE)
    skip_if_not(profiling, "R built without memory profiling")
    fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.1))
    Rprofmem(NULL)
    options(old)
    k <- length(fit$eig)
    expect_gt(k, 100L)
    # what C allocates inside the fit's .Call (R's frames end there)
    lines <- grep('^[0-9]+ :"doTryCatch" "tryCatchOne" "tryCatchList" "tryCatch" "engine_call" "dense_eigen"',
                  readLines(f), value = TRUE)
    sizes <- as.numeric(sub(" :.*", "", lines))
    label <- if (rows == 0) "two stages" else "one stage"
    # the n x k eigenvectors once (8 bytes a value and a header): the R
    # matrix returned, which the tridiagonal solver writes into
    expect_equal(sum(sizes >= 8 * n * k & sizes < 8 * n * k + 1024), 1L, label = label)
    # scratch a few times (each O(n b), b the panel or band width), never
    # once per panel (there are n / 48 or n / 32 of them), and no piece of
    # an n x n matrix (the buffer is the one, outside R's heap)
    expect_lt(length(sizes), 16L, label = label)
    vectors <- sizes >= 8 * n * k & sizes < 8 * n * k + 1024
    expect_equal(sum(sizes >= 8 * n^2 / 4 & !vectors), 0L, label = label)
  }
})
