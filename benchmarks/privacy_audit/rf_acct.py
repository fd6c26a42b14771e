import numpy as np, warnings
from diffprivlib.models import RandomForestClassifier, GaussianNB, KMeans
from skdptune._dp_fit import fit_for_release, MeasuringAccountant
rng=np.random.default_rng(0); X=rng.random((200,3)); y=(X[:,0]>.5).astype(int)
for est in [RandomForestClassifier(n_estimators=5, epsilon=1.0, bounds=(0,1), classes=[0,1]),
            GaussianNB(epsilon=1.0, bounds=(0,1)), KMeans(n_clusters=3, epsilon=1.0, bounds=([0]*3,[1]*3))]:
    acc=MeasuringAccountant()
    leak=fit_for_release(est, X, y, {}, acc)
    print(type(est).__name__, "spent", acc.total(), "leak", leak, [a for a in ("labels_","inertia_","classes_") if hasattr(est,a)])
# forest with classes not 0..K-1
ylab=np.where(y==1,'b','a')
for classes,yy in [([0,1],y),([1,2],y+1),(['a','b'],ylab)]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rf=RandomForestClassifier(n_estimators=20, epsilon=1e4, bounds=(0,1), classes=classes, max_depth=3).fit(X,yy)
    print("classes",classes,"train acc", np.mean(rf.predict(X)==yy))
