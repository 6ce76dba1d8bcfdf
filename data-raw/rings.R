# Generates data/rings.rda: two noisy concentric rings in the plane, a classic
# case where linear PCA cannot separate the groups and an RBF kernel can.
# Run from the package root: Rscript data-raw/rings.R
set.seed(20261121)
n_per_ring <- 150L
make_ring <- function(n, radius, noise) {
  angle <- runif(n, 0, 2 * pi)
  r <- radius + rnorm(n, sd = noise)
  data.frame(x1 = r * cos(angle), x2 = r * sin(angle))
}
inner <- make_ring(n_per_ring, radius = 1, noise = 0.1)
outer <- make_ring(n_per_ring, radius = 3, noise = 0.15)
rings <- rbind(inner, outer)
rings$ring <- factor(rep(c("inner", "outer"), each = n_per_ring),
                     levels = c("inner", "outer"))
rings$x1 <- round(rings$x1, 4)
rings$x2 <- round(rings$x2, 4)
dir.create("data", showWarnings = FALSE)
save(rings, file = "data/rings.rda", compress = "xz", version = 2)
