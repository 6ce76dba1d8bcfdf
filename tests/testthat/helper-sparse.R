# Sparse test data: random sparse matrices with the edge cases (an empty
# row, an empty column, a row of a single value), and a real corpus, Jane
# Austen's six novels (janeaustenr) as TF-IDF rows of unit length.
# bench/sparse.R sources this file for the same corpus.

# A random n x d dgCMatrix of about density * n * d values, with row 2
# empty, column 1 empty and row 3 holding one value.
random_sparse <- function(n, d, density, seed = 1) {
  set.seed(seed)
  nnz <- max(1L, round(n * d * density))
  i <- sample.int(n, nnz, replace = TRUE)
  j <- sample.int(d, nnz, replace = TRUE)
  keep <- i != 2L & j != 1L & i != 3L
  i <- c(i[keep], 3L)
  j <- c(j[keep], d)
  x <- Matrix::sparseMatrix(i = i, j = j, x = stats::rnorm(length(i)), dims = c(n, d))
  dimnames(x) <- list(paste0("r", seq_len(n)), paste0("c", seq_len(d)))
  x
}

# Austen's novels cut into passages of `lines` lines (per book), each a row
# of TF-IDF weights (raw counts times log(N / document frequency)) scaled
# to unit length; terms in every passage (weight 0) are left out.
# Returns list(x = dgCMatrix, book = factor of each row).
austen_tfidf <- function(lines = 10L) {
  books <- janeaustenr::austen_books()
  line_in_book <- stats::ave(seq_along(books$book), books$book, FUN = seq_along)
  passage <- interaction(books$book, (line_in_book - 1L) %/% lines, drop = TRUE,
                         lex.order = TRUE)
  words <- regmatches(tolower(books$text), gregexpr("[a-z]+(['][a-z]+)*", tolower(books$text)))
  doc <- rep(as.integer(passage), lengths(words))
  words <- unlist(words)
  terms <- sort(unique(words))
  term <- match(words, terms)
  counts <- Matrix::sparseMatrix(i = doc, j = term, x = 1, dims = c(nlevels(passage), length(terms)),
                                 dimnames = list(levels(passage), terms))
  has_words <- Matrix::rowSums(counts) > 0
  counts <- counts[has_words, ]
  book <- books$book[match(levels(passage), as.character(passage))][has_words]
  df <- Matrix::colSums(counts > 0)
  idf <- log(nrow(counts) / df)
  x <- counts %*% Matrix::Diagonal(x = idf)
  x <- x[, idf > 0]
  colnames(x) <- terms[idf > 0]
  norms <- sqrt(Matrix::rowSums(x^2))
  x <- Matrix::Diagonal(x = 1 / norms) %*% x
  rownames(x) <- levels(passage)[has_words]
  list(x = methods::as(x, "CsparseMatrix"), book = droplevels(book))
}
