"""What the workloads return, and how each prints: one module per workload.

:mod:`swath.results.search` (``SearchResult``: hits per query), :mod:`swath.results.allpairs`
(``AllPairsResult``: the kept pairs, scores, clusters) and :mod:`swath.results.longpair`
(``PairScore``, and the printers of a long pair's alignment or score). A result reads
its store when made; these modules load the store modules (and Zarr) only then, so the
workload registry that names their printers stays light to import.
"""
