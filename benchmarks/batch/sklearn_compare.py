#!/usr/bin/env python3
"""Called by sklearn_compare.sh: SPLITS_DIR ROUNDS LEAVES... Prints a markdown table."""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd
from sklearn.ensemble import AdaBoostClassifier, HistGradientBoostingClassifier
from sklearn.preprocessing import OrdinalEncoder
from sklearn.tree import DecisionTreeClassifier

SETS = os.environ.get("SETS", "car nursery optdigits satimage pendigits adult").split()


def load(splits, name):
    train = pd.read_csv(f"{splits}/{name}/train.csv", na_values=["", "?"], keep_default_na=False)
    test = pd.read_csv(f"{splits}/{name}/test.csv", na_values=["", "?"], keep_default_na=False)
    y_train, y_test = train.pop("label").astype(str), test.pop("label").astype(str)
    nominal = [c for c in train.columns if not pd.api.types.is_numeric_dtype(train[c])]
    # Categories as integer codes (missing stays NaN): what trees split on.
    if nominal:
        enc = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan,
                             encoded_missing_value=np.nan)
        train[nominal] = enc.fit_transform(train[nominal])
        test[nominal] = enc.transform(test[nominal])
    mask = [c in nominal for c in train.columns]
    return (train.to_numpy(float), y_train.to_numpy(), test.to_numpy(float), y_test.to_numpy(), mask)


def timed(fit):
    start = time.perf_counter()
    model = fit()
    return model, time.perf_counter() - start


def streamboost(splits, name, rounds, leaves):
    with tempfile.TemporaryDirectory() as d:
        report = os.path.join(d, "r.json")
        subprocess.run([os.environ["STREAMBOOST"], "train", "-q", "--algo", "adaboost-mm",
                        "--rounds", str(rounds), "--max-leaves", str(leaves),
                        "--input", f"{splits}/{name}/train.csv",
                        "--test", f"{splits}/{name}/test.csv", "--report", report],
                       check=True, capture_output=True)
        with open(report) as f:
            r = json.load(f)
    return 1 - r["test"]["accuracy"], r["seconds"]


def main(splits, rounds, leaves):
    print(f"| set | model | test error | training seconds |")
    print("|---|---|---|---|")
    for name in SETS:
        x, y, xt, yt, mask = load(splits, name)
        for l in leaves:
            err, secs = streamboost(splits, name, rounds, l)
            print(f"| {name} | streamboost AdaBoost.MM, {rounds} rounds, {l} leaves | {err:.4f} | {secs:.2f} |")
            # AdaBoostClassifier refuses NaN: a missing category is a category of its own.
            ada, secs = timed(lambda: AdaBoostClassifier(
                DecisionTreeClassifier(max_leaf_nodes=l), n_estimators=rounds,
                random_state=0).fit(np.nan_to_num(x, nan=-1.0), y))
            err = np.mean(ada.predict(np.nan_to_num(xt, nan=-1.0)) != yt)
            print(f"| {name} | sklearn AdaBoost SAMME, {rounds} rounds, {l} leaves | {err:.4f} | {secs:.2f} |")
        hgb, secs = timed(lambda: HistGradientBoostingClassifier(
            categorical_features=mask if any(mask) else None, random_state=0).fit(x, y))
        err = np.mean(hgb.predict(xt) != yt)
        print(f"| {name} | sklearn HistGradientBoosting (defaults) | {err:.4f} | {secs:.2f} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), [int(l) for l in sys.argv[3:]])
