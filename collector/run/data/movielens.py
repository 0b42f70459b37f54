"""MovieLens ratings (``ratings.csv``: userId,movieId,rating,timestamp) as implicit feedback.

Every rating is a positive; each user's latest rating (ties broken by file order) is held out
for leave-one-out evaluation, as in the NCF reference. Ids are remapped to dense ranges.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.csv as pacsv
import torch


def load_movielens(path: Path) -> tuple[torch.Tensor, torch.Tensor, int, int]:
    """``train [N, 2]`` (user, item), held-out item per user ``[U]``, users, items."""
    table = pacsv.read_csv(path)
    for col in ("userId", "movieId", "timestamp"):
        if col not in table.column_names:
            raise ValueError(f"{path}: missing column {col}")
    users = torch.from_numpy(table["userId"].to_numpy().astype("int64"))
    items = torch.from_numpy(table["movieId"].to_numpy().astype("int64"))
    ts = torch.from_numpy(table["timestamp"].to_numpy().astype("int64"))
    u_ids, u = torch.unique(users, return_inverse=True)
    i_ids, i = torch.unique(items, return_inverse=True)
    n_users = int(u_ids.numel())
    order = torch.arange(u.numel())
    # sort by (user, timestamp, file order); the last row of each user is the test item
    key = torch.argsort(ts * (order.numel() + 1) + order, stable=True)
    key = key[torch.argsort(u[key], stable=True)]
    last = torch.zeros(u.numel(), dtype=torch.bool)
    ends = torch.cumsum(torch.bincount(u, minlength=n_users), 0) - 1
    last[key[ends]] = True
    test = torch.empty(n_users, dtype=torch.long)
    test[u[last]] = i[last]
    train = torch.stack([u[~last], i[~last]], 1)
    return train, test, n_users, int(i_ids.numel())
