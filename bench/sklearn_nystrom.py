"""scikit-learn's Nystroem + PCA, the peer of kpca(x, landmarks = m) in
bench/nystrom.R, which runs it as
  python3 bench/sklearn_nystrom.py DATA N D GAMMA M FEATURES
DATA: N x D doubles, row-major (R's writeBin of t(x)). Prints the time of
Nystroem(rbf, gamma, M).fit_transform + PCA(FEATURES).fit_transform, and the
PCA's eigenvalues on kernlab's scale (explained_variance_ * (N - 1) / N)."""
import sys
import time

import numpy as np
import sklearn
from sklearn.decomposition import PCA
from sklearn.kernel_approximation import Nystroem

path, n, d, gamma, m, features = sys.argv[1:7]
n, d, m, features = int(n), int(d), int(m), int(features)
X = np.fromfile(path, dtype=np.float64).reshape(n, d)

t0 = time.perf_counter()
c0 = time.process_time()
Z = Nystroem(kernel="rbf", gamma=float(gamma), n_components=m,
             random_state=0).fit_transform(X)
pca = PCA(n_components=features, random_state=0)
scores = pca.fit_transform(Z)
seconds = time.perf_counter() - t0
cpu = time.process_time() - c0

print("version", sklearn.__version__)
print("seconds", seconds)
print("cpu", cpu)
print("eig", " ".join(repr(v) for v in pca.explained_variance_ * (n - 1) / n))
