"""scikit-learn's dense KernelPCA, the peer of the default call kpca(x) in
bench/run.R, which runs it as
  python3 bench/sklearn_kpca.py DATA N D GAMMA COMPONENTS
DATA: N x D doubles, row-major (R's writeBin of t(x)). Fits
KernelPCA(COMPONENTS, kernel = "rbf", gamma = GAMMA, eigen_solver =
"dense") (the kernel matrix, its centering, and scipy's eigh of the
COMPONENTS largest pairs) and prints its time and its eigenvalues on
kernlab's scale (eigenvalues_ / N)."""
import sys
import time

import numpy as np
import sklearn
from sklearn.decomposition import KernelPCA

path, n, d, gamma, components = sys.argv[1:6]
n, d, components = int(n), int(d), int(components)
X = np.fromfile(path, dtype=np.float64).reshape(n, d)

t0 = time.perf_counter()
kp = KernelPCA(n_components=components, kernel="rbf", gamma=float(gamma),
               eigen_solver="dense")
kp.fit(X)
seconds = time.perf_counter() - t0

print("version", sklearn.__version__)
print("seconds", seconds)
print("eig", " ".join(repr(v) for v in kp.eigenvalues_ / n))
