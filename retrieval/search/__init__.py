"""Reading the archive by meaning and by words: hybrid search over papers and passages, a query naming
people, comparison cells, and the quality measures of the benchmarks."""
