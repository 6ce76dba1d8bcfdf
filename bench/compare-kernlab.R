# kpca() against kernlab::kpca() on iris: eigenvalues side by side and the
# largest relative differences (after aligning column signs).
#   Rscript bench/compare-kernlab.R
library(fastkpca)
x <- as.matrix(iris[, 1:4])
kl <- kernlab::kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.1), features = 4)
fk <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.1), features = 4)
print(rbind(kernlab = kernlab::eig(kl), fastkpca = fk$eig))
s <- sign(colSums(kernlab::pcv(kl) * fk$alpha))
cat("max relative difference, eig:     ", max(abs(fk$eig - kernlab::eig(kl)) / kernlab::eig(kl)), "\n")
cat("max relative difference, alpha:   ", max(abs(fk$alpha - sweep(kernlab::pcv(kl), 2, s, "*"))) / max(abs(fk$alpha)), "\n")
cat("max relative difference, rotated: ", max(abs(fk$rotated - sweep(kernlab::rotated(kl), 2, s, "*"))) / max(abs(fk$rotated)), "\n")
new <- x[c(1, 51, 101), ] + 0.05
cat("max relative difference, predict: ", max(abs(predict(fk, new) - sweep(kernlab::predict(kl, new), 2, s, "*"))) / max(abs(predict(fk, new))), "\n")
