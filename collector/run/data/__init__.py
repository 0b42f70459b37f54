"""Loaders for the real data sets of ``--scale full`` (ImageNet, COCO, WMT, MovieLens, Go SGF)."""
