# The main job: kernel PCA on the bundled two-rings data, where linear PCA
# cannot separate the rings and an RBF kernel can. Prints the summary and
# writes rings-kpca.png where the first argument says (scripts/demo.sh
# passes fastkpca-demo/rings-kpca.png), else in a temporary folder.
library(fastkpca)
out <- commandArgs(trailingOnly = TRUE)
out <- if (length(out)) out[1] else file.path(tempdir(), "rings-kpca.png")

fit <- kpca(~ x1 + x2, data = rings, kernel = "rbfdot",
            kpar = list(sigma = 0.5), features = 5)
print(fit)
print(summary(fit))

groups <- as.integer(rings$ring)
png(out, width = 1200, height = 420, res = 110)
op <- par(mfrow = c(1, 3))
plot(rings$x1, rings$x2, col = groups, pch = 19, cex = 0.6, asp = 1,
     main = "Data: two rings", xlab = "x1", ylab = "x2")
plot(prcomp(rings[, c("x1", "x2")])$x, col = groups, pch = 19, cex = 0.6,
     main = "Linear PCA: still nested")
plot(fit$rotated[, 1:2], col = groups, pch = 19, cex = 0.6,
     main = "Kernel PCA (rbfdot, sigma = 0.5)")
par(op)
invisible(dev.off())
cat("wrote", out, "\n")
