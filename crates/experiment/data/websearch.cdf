# Flow sizes of the web search workload: Alizadeh et al., "Data Center TCP (DCTCP)",
# SIGCOMM 2010, Figure 4 (background flows of a production web search cluster), as the
# points commonly used since pFabric (Alizadeh et al., SIGCOMM 2013) and distributed with
# the HPCC artifact (Li et al., SIGCOMM 2019, traffic_gen/WebSearch_distribution.txt).
# Columns: flow size in bytes, cumulative probability; linear between the points.
0 0
10000 0.15
20000 0.20
30000 0.30
50000 0.40
80000 0.53
200000 0.60
1000000 0.70
2000000 0.80
5000000 0.90
10000000 0.97
30000000 1
